package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/internal/judge"
)

// Resampling recorded A/A gates, the method (docs/judge.md, README):
//
//  1. Take every recorded A/A gate that was judged (pass or regression;
//     gates that could not be judged are left out, as a retry would be).
//  2. From one gate draw K of its pairs without replacement, in a random
//     order, and swap the base and head phases of each drawn pair with
//     chance 1/2. Under A/A the two arms of a pair are exchangeable, so
//     every such draw is an A/A gate as likely as the recorded one: the
//     pairing and the machine state each pair saw are kept. (Drawing with
//     replacement repeats pairs, which shrinks their scatter and makes
//     "most pairs" easier: it overstated false alarms 2-3 fold here.)
//  3. Inject the scenario's slowdown into the head phases only: every
//     latency figure of every group times the factor (a whole-distribution
//     slowdown moves p50, p95 and p99 alike), or, for a tail-only
//     slowdown, the p99 figures alone; a phase's latency histograms (gates
//     recorded since reports kept them) move with its figures, so the
//     tails pooled over the pairs are judged on the same head.
//  4. Judge the resample with each method below; count alarms.
//
// The rates' 95 % intervals come from a bootstrap over the recorded gates
// (2,000 draws of the gates with replacement, each gate weighing its own
// alarm share), since resamples of one gate are not independent of each
// other; a binomial interval over resamples would be too narrow.

// injection is a scenario of the resampling: the factor and which figures
// it moves.
type injection struct {
	Name   string
	Factor float64
	Tail   bool // only p99 moves
	// CPU: CPU per request moves by the factor too. Set for the cpu
	// target, whose slowdown is more work on the request path (target.go),
	// so a real slowed head's CPU rises with its latency.
	CPU bool
}

var injections = []injection{
	{Name: "A/A", Factor: 1},
	{Name: "p50 +5 %", Factor: 1.05},
	{Name: "p50 +10 %", Factor: 1.10},
	{Name: "tail (p99) +10 %", Factor: 1.10, Tail: true},
}

// A method is one way to call a gate a regression from its phases.
type method struct {
	Name  string
	Alarm func(in judge.Input) bool
}

// benchTol is the tolerance the power figures are for: 5 % on latency and
// CPU, Datadog SMP's effect tolerance (issue 13).
func benchTol() map[string]float64 { return map[string]float64{"latency": 0.05, "cpu": 0.05} }

var methods = []method{
	{"paired rule, 5 %", func(in judge.Input) bool {
		in.Rule, in.Tolerance = judge.RulePaired, benchTol()
		return judge.Judge(in).Code == judge.Regression
	}},
	// The same rule as a report without histograms judges it: every
	// tail phase by phase (issue 22: pooled tails against the per-phase
	// rule on the same recordings).
	{"paired rule, tails per phase", func(in judge.Input) bool {
		in.Rule, in.Tolerance = judge.RulePaired, benchTol()
		in.Base, in.Head = withoutHistograms(in.Base), withoutHistograms(in.Head)
		return judge.Judge(in).Code == judge.Regression
	}},
	{"medians rule, 5 %", func(in judge.Input) bool {
		in.Rule, in.Tolerance = judge.RuleMedians, benchTol()
		return judge.Judge(in).Code == judge.Regression
	}},
	{"medians rule, 25 % (FerroFED's gate)", func(in judge.Input) bool {
		in.Rule, in.Tolerance = judge.RuleMedians, nil
		return judge.Judge(in).Code == judge.Regression
	}},
	// The two p50 rules side by side, every other metric left out (a
	// whole-distribution slowdown moves the tails too, and the paired
	// rule's alarm counts them): the per-phase paired rule the gate uses
	// for p50, and the sign-flip bound on pooled histograms it uses for
	// p95 and p99, applied to p50 (docs/judge.md, "Tails pooled over the
	// pairs": whether a pooled p50 is stronger).
	{"p50 alone, paired per phase", func(in judge.Input) bool {
		in.Rule, in.Tolerance = judge.RulePaired, benchTol()
		in.Metrics = onlyP50(in.Metrics)
		return judge.Judge(in).Code == judge.Regression
	}},
	{"p50 alone, pooled (sign-flip)", pooledP50},
	{"sequential, 5 %", sequential},
	{"t-test over phases (Bencher)", tTest},
	{"plain 10 % threshold", plainThreshold},
}

// withoutHistograms is phases as a report before version 2 held them.
func withoutHistograms(phases []judge.Phase) []judge.Phase {
	out := make([]judge.Phase, len(phases))
	for i, p := range phases {
		out[i] = p
		out[i].Groups = append([]judge.GroupFigures(nil), p.Groups...)
		for g := range out[i].Groups {
			out[i].Groups[g].Latency, out[i].Groups[g].Server = nil, nil
		}
	}
	return out
}

func onlyP50(ms []judge.Metric) []judge.Metric {
	var out []judge.Metric
	for _, m := range ms {
		if q, _, ok := judge.SplitLatencyID(m.ID); ok && q.Name == "p50" {
			out = append(out, m)
		}
	}
	return out
}

// pooledP50 judges each group's p50 from the arms' histograms pooled over
// the pairs, with the sign-flip bound the gate uses for its tails; a gate
// recorded without histograms never alarms (and is not a fair row).
func pooledP50(in judge.Input) bool {
	for _, m := range onlyP50(in.Metrics) {
		_, group, _ := judge.SplitLatencyID(m.ID)
		base, head := groupHistograms(in.Base, group), groupHistograms(in.Head, group)
		if len(base) != len(in.Base) || len(head) != len(in.Head) {
			return false
		}
		if judge.PooledTail(judge.DefaultTailRule, 50, benchTol()["latency"], base, head).Fail {
			return true
		}
	}
	return false
}

func groupHistograms(phases []judge.Phase, group string) []*judge.Histogram {
	var out []*judge.Histogram
	for _, p := range phases {
		for _, g := range p.Groups {
			if g.Name == group && g.Latency != nil {
				out = append(out, g.Latency)
			}
		}
	}
	return out
}

// latencyIDs are the input's latency metrics.
func latencyIDs(in judge.Input) []string {
	var ids []string
	for _, m := range in.Metrics {
		if m.Class == judge.Latency {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

func column(phases []judge.Phase, id string) []float64 {
	out := make([]float64, len(phases))
	for i, p := range phases {
		out[i] = p.Values[id]
	}
	return out
}

// sequential is what a stored-baseline tool sees: the base measured first
// (the first half of the pairs' base phases), the head later (the second
// half's head phases), medians compared against 5 %. The runner's drift
// between the two halves of one gate is far less than between two CI runs
// days apart, so this flatters the method.
func sequential(in judge.Input) bool {
	n := len(in.Base)
	if n < 2 {
		return false
	}
	for _, id := range latencyIDs(in) {
		b, h := medianF(column(in.Base[:n/2], id)), medianF(column(in.Head[n/2:], id))
		if b > 0 && h/b-1 > 0.05 {
			return true
		}
	}
	return false
}

// tTest is Bencher's t-test threshold with an upper boundary of 0.99: the
// base's phases are the history, the head's median the new figure, and it
// alarms beyond mean + t(0.99, n-1) x sd x sqrt(1 + 1/n).
func tTest(in judge.Input) bool {
	n := len(in.Base)
	if n < 2 {
		return false
	}
	for _, id := range latencyIDs(in) {
		b := column(in.Base, id)
		mean, sd := meanSD(b)
		if medianF(column(in.Head, id)) > mean+tQuantile99(n-1)*sd*math.Sqrt(1+1/float64(n)) {
			return true
		}
	}
	return false
}

// plainThreshold alarms when any latency median is more than 10 % worse.
func plainThreshold(in judge.Input) bool {
	for _, id := range latencyIDs(in) {
		b, h := medianF(column(in.Base, id)), medianF(column(in.Head, id))
		if b > 0 && h/b-1 > 0.10 {
			return true
		}
	}
	return false
}

func meanSD(xs []float64) (float64, float64) {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}

// tQuantile99 is Student's t at 0.99 one-sided, from the standard table.
func tQuantile99(df int) float64 {
	table := []float64{31.821, 6.965, 4.541, 3.747, 3.365, 3.143, 2.998, 2.896, 2.821, 2.764, 2.718, 2.681, 2.650, 2.624, 2.602}
	if df >= 1 && df <= len(table) {
		return table[df-1]
	}
	return 2.58
}

// resampleGate draws one resample of k pairs from a recorded A/A gate and
// injects inj into its head phases.
func resampleGate(rng *rand.Rand, in judge.Input, k int, inj injection) judge.Input {
	n := len(in.Base)
	out := in
	out.Base, out.Head = make([]judge.Phase, k), make([]judge.Phase, k)
	out.Thresholds, out.Notes = nil, nil
	order := rng.Perm(n)
	for i := range k {
		j := order[i%n]
		b, h := clonePhase(in.Base[j]), clonePhase(in.Head[j])
		if rng.IntN(2) == 1 {
			b, h = h, b
		}
		b.Pair, h.Pair = i+1, i+1
		inject(&h, inj)
		out.Base[i], out.Head[i] = b, h
	}
	return out
}

func clonePhase(p judge.Phase) judge.Phase {
	c := p
	c.Values = make(map[string]float64, len(p.Values))
	for k, v := range p.Values {
		c.Values[k] = v
	}
	c.Groups = append([]judge.GroupFigures(nil), p.Groups...)
	return c
}

// inject slows a head phase: the latency metrics (p99 alone for a tail
// slowdown) and the group figures the judgeability checks read, so the
// halves and stall tests see the same head.
func inject(p *judge.Phase, inj injection) {
	if inj.Factor == 1 {
		return
	}
	for id, v := range p.Values {
		q, _, ok := judge.SplitLatencyID(id)
		if ok && (!inj.Tail || q.Name == "p99") || inj.CPU && id == judge.MetricCPUPerRequest {
			p.Values[id] = v * inj.Factor
		}
	}
	for i := range p.Groups {
		g := &p.Groups[i]
		g.P99 *= inj.Factor
		g.Latency, g.Server = injectHistogram(g.Latency, inj), injectHistogram(g.Server, inj)
		if !inj.Tail {
			g.P50 *= inj.Factor
			for h := range g.Halves {
				g.Halves[h].P50 *= inj.Factor
				g.Halves[h].P90 *= inj.Factor
			}
		}
	}
}

// injectHistogram slows a head phase's histogram as inject slows its
// figures, so that the tails pooled over the pairs see the same head: every
// answer times the factor, or for a tail slowdown the answers from the
// phase's own 98th percentile up (which moves its p99 by the factor and
// leaves its p95 and p50 as they were, as the figures are).
func injectHistogram(h *judge.Histogram, inj injection) *judge.Histogram {
	if h == nil || inj.Factor == 1 {
		return h
	}
	if !inj.Tail {
		return h.Mapped(func(ms float64) float64 { return ms * inj.Factor })
	}
	from := h.Percentile(98)
	return h.Mapped(func(ms float64) float64 {
		if ms >= from {
			return ms * inj.Factor
		}
		return ms
	})
}

// resampleFiles runs the resampling over the A/A gates of the files and
// prints one table per recorded target: each method's alarm rate per
// injection with its 95 % interval.
func resampleFiles(w io.Writer, paths []string, perGate, pairs int) error {
	byTarget := map[string][]record{}
	var all []record
	for _, path := range paths {
		recs, err := readRecords(strings.TrimSpace(path))
		if err != nil {
			return err
		}
		all = append(all, recs...)
		for _, r := range recs {
			if r.Scenario != "aa" || !judgedNow(r) {
				continue
			}
			byTarget[targetOf(r)] = append(byTarget[targetOf(r)], r)
		}
	}
	if len(byTarget) == 0 {
		return fmt.Errorf("no judged A/A gate with its input in %s", strings.Join(paths, ", "))
	}
	targets := make([]string, 0, len(byTarget))
	for t := range byTarget {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		k := pairs
		if k <= 0 {
			k = len(byTarget[t][0].Input.Base)
		}
		// A gate with fewer pairs than a resample draws cannot give one
		// without repeating pairs: it is left out.
		var gates []record
		for _, r := range byTarget[t] {
			if len(r.Input.Base) >= k {
				gates = append(gates, r)
			}
		}
		if len(gates) == 0 {
			fmt.Fprintf(w, "\ntarget %s: no recorded A/A gate has %d pairs\n", t, k)
			continue
		}
		fmt.Fprintf(w, "\ntarget %s: %d recorded A/A gates (%d with fewer than %d pairs left out), %d resamples each of %d pairs (%d per injection)\n\n",
			t, len(gates), len(byTarget[t])-len(gates), k, perGate, k, perGate*len(gates))
		fmt.Fprintf(w, "| method |")
		for _, inj := range injections {
			fmt.Fprintf(w, " %s |", inj.Name)
		}
		fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(injections)))
		falseBy := map[string]int{}
		// shares[m][i][g]: method m's alarm share on injection i in gate g.
		shares := make([][][]float64, len(methods))
		for m := range methods {
			shares[m] = make([][]float64, len(injections))
		}
		for i, inj := range injections {
			inj.CPU = !inj.Tail && r0Target(gates) == "cpu"
			for g, r := range gates {
				rng := rand.New(rand.NewPCG(uint64(g+1), uint64(i+1)))
				alarms := make([]int, len(methods))
				for range perGate {
					in := resampleGate(rng, *r.Input, k, inj)
					for m, me := range methods {
						if me.Alarm(in) {
							alarms[m]++
							if m == 0 && inj.Factor == 1 {
								why(in, falseBy)
							}
						}
					}
				}
				for m := range methods {
					shares[m][i] = append(shares[m][i], float64(alarms[m])/float64(perGate))
				}
			}
		}
		for m, me := range methods {
			fmt.Fprintf(w, "| %s |", me.Name)
			for i := range injections {
				mean, lo, hi := clusterInterval(shares[m][i])
				fmt.Fprintf(w, " %s [%s, %s] |", pctF(mean), pctF(lo), pctF(hi))
			}
			fmt.Fprintln(w)
		}
		if len(falseBy) > 0 {
			var parts []string
			for _, id := range slices.Sorted(maps.Keys(falseBy)) {
				parts = append(parts, fmt.Sprintf("%s %d", id, falseBy[id]))
			}
			fmt.Fprintf(w, "\nthe paired rule's A/A alarms, by failing metric: %s\n", strings.Join(parts, ", "))
		}
	}
	fmt.Fprintln(w, "\nA/A is the false-alarm rate; the others are the share caught. Intervals: 95 %, bootstrap over the recorded gates.")
	recordedAsTheyAre(w, all)
	return nil
}

// recordedAsTheyAre judges every recorded gate, as it ran, with each
// method: per target and scenario, how many it alarms on, with the exact
// two-sided 95 % (Clopper-Pearson) interval. Gates that could not be
// judged (by this perfgate, see judgedNow) are counted apart: a retry
// would have run them.
func recordedAsTheyAre(w io.Writer, recs []record) {
	type key struct{ target, scenario string }
	groups := map[key][]record{}
	cannot := map[key]int{}
	var keys []key
	for _, r := range recs {
		k := key{targetOf(r), r.Scenario}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
			groups[k] = nil
		}
		if !judgedNow(r) {
			cannot[k]++
			continue
		}
		groups[k] = append(groups[k], r)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].target != keys[j].target {
			return keys[i].target < keys[j].target
		}
		return keys[i].scenario < keys[j].scenario
	})
	fmt.Fprintf(w, "\nrecorded gates as they ran (judgeable by this perfgate), judged by each method (alarms of judged gates, exact 95 %% interval):\n\n| target | scenario | judged | cannot judge |")
	for _, m := range methods {
		fmt.Fprintf(w, " %s |", m.Name)
	}
	fmt.Fprintf(w, "\n|---|---|---:|---:|%s\n", strings.Repeat("---|", len(methods)))
	for _, k := range keys {
		gs := groups[k]
		fmt.Fprintf(w, "| %s | %s | %d | %d |", k.target, k.scenario, len(gs), cannot[k])
		for _, m := range methods {
			n := 0
			for _, r := range gs {
				if m.Alarm(*r.Input) {
					n++
				}
			}
			lo, hi := twoSided(n, len(gs))
			fmt.Fprintf(w, " %d/%d [%s, %s] |", n, len(gs), pctF(lo), pctF(hi))
		}
		fmt.Fprintln(w)
	}
}

// twoSided is the exact (Clopper-Pearson) two-sided 95 % interval of k
// events in n.
func twoSided(k, n int) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	lo, hi = 0, 1
	if k > 0 {
		lo = bisect(func(p float64) bool { return 1-binomCDF(k-1, n, p) < 0.025 })
	}
	if k < n {
		hi = bisect(func(p float64) bool { return binomCDF(k, n, p) > 0.025 })
	}
	return lo, hi
}

// clusterInterval is the mean of per-gate shares and its 95 % percentile
// bootstrap interval over the gates.
func clusterInterval(shares []float64) (mean, lo, hi float64) {
	n := len(shares)
	for _, s := range shares {
		mean += s
	}
	mean /= float64(n)
	rng := rand.New(rand.NewPCG(7, 13))
	const draws = 2000
	means := make([]float64, draws)
	for d := range means {
		var sum float64
		for range n {
			sum += shares[rng.IntN(n)]
		}
		means[d] = sum / float64(n)
	}
	sort.Float64s(means)
	return mean, means[int(0.025*draws)], means[int(0.975*draws)-1]
}

// targetOf names a record's service and profile, "tail, profile busy":
// gates of different profiles are different experiments. A profile changed
// by flags (its name marked "*") is named by its numbers as well, so gates
// of different settings never pool.
func targetOf(r record) string {
	t := r.Target
	if t == "" {
		t = "example"
	}
	p := r.Profile
	if !strings.HasSuffix(p.Name, "*") {
		return t + ", profile " + p.Name
	}
	return fmt.Sprintf("%s, profile %s %d x (%v + %v) at %g/s", t, p.Name, p.Pairs, p.Warmup, p.Measure, p.Rate)
}

// why counts the metrics that failed a gate the paired rule alarmed on.
func why(in judge.Input, by map[string]int) {
	in.Rule, in.Tolerance = judge.RulePaired, benchTol()
	v := judge.Judge(in)
	for _, m := range v.Metrics {
		if m.Fail {
			by[m.ID]++
		}
	}
	for _, t := range v.Thresholds {
		if t.Fail {
			by["threshold"]++
		}
	}
}

// judgedNow reports whether this perfgate's judge can judge a recorded
// gate: the judge is a pure function of the recorded phases, so a gate
// recorded before a change to the judgeability checks (the stall bound's
// allowance for a long own tail) is judged as the gate would judge it now.
func judgedNow(r record) bool {
	return r.Input != nil && judge.Judge(*r.Input).Code != judge.CannotJudge
}

// r0Target is the bundled target the gates were recorded on ("" for the
// example service); gates of one table share it.
func r0Target(gates []record) string {
	if len(gates) == 0 {
		return ""
	}
	return gates[0].Target
}
