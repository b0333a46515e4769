package judge

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Judge decides the gate from in. It never fails: input it cannot read
// is itself a cannot-judge verdict, naming what is wrong.
func Judge(in Input) Verdict {
	var v Verdict
	if bad := validate(in); len(bad) > 0 {
		v.CannotJudge = bad
		v.Code = CannotJudge
		return v
	}

	cannot, notes := checkSchedule(in)
	v.CannotJudge = append(v.CannotJudge, cannot...)
	v.Notes = append(v.Notes, notes...)
	v.CannotJudge = append(v.CannotJudge, checkStall(in)...)
	v.CannotJudge = append(v.CannotJudge, checkHalves(in)...)

	for _, m := range in.Metrics {
		r := judgeMetric(in, m)
		v.Metrics = append(v.Metrics, r)
		switch {
		case r.Fail:
			v.Failures = append(v.Failures, failureLine(r))
		case r.Breach:
			v.Notes = append(v.Notes, fmt.Sprintf("%s: the head's median is worse than the base's by more than %s, but it breached in %d of %d pairs only, not most: a one-off, not a regression", m.ID, pct(r.Threshold), r.PairsBreached, r.Pairs))
		}
	}

	head, base := unexpected(in.Head), unexpected(in.Base)
	for _, u := range head {
		v.Failures = append(v.Failures, "head: "+u)
	}
	for _, u := range base {
		v.Notes = append(v.Notes, "base: "+u+" (the base's answers are notes only)")
	}

	if in.Idle != nil {
		r := judgeIdle(*in.Idle)
		v.Idle = &r
		if r.CPUFail {
			v.Failures = append(v.Failures, fmt.Sprintf("idle: the head used %.2f %% of one core over %.0f s, limit under %.2f %%", r.CPU*100, r.Seconds, r.CPULimit*100))
		}
		if r.TxFail {
			v.Failures = append(v.Failures, fmt.Sprintf("idle: the head's store committed %.2f transactions/s over %.0f s, limit under %.2f/s", r.TxPerSec, r.Seconds, r.TxLimit))
		}
	}

	idleFailed := v.Idle != nil && (v.Idle.CPUFail || v.Idle.TxFail)
	switch {
	// The idle limits are absolute and compare with nothing, so a load
	// phase that cannot be judged does not unsay a head that worked while
	// idle: that is the shape the gate was built to catch. Nor does it
	// unsay a wrong status the head answered where the base answered right.
	case idleFailed, answeredWrong(in):
		v.Code = Regression
	case len(v.CannotJudge) > 0:
		v.Code = CannotJudge
	case len(v.Failures) > 0:
		v.Code = Regression
	default:
		v.Code = Pass
	}
	return v
}

// tolerance is the metric's tolerance and where it came from: its own ID
// beats its class, which beats the default.
func tolerance(in Input, m Metric) (float64, string) {
	if t, ok := in.Tolerance[m.ID]; ok {
		return t, "metric"
	}
	if t, ok := in.Tolerance[string(m.Class)]; ok {
		return t, "class"
	}
	return DefaultTolerance[m.Class], "default"
}

func judgeMetric(in Input, m Metric) MetricResult {
	n := len(in.Base)
	bs, hs := make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		bs[i], hs[i] = in.Base[i].Values[m.ID], in.Head[i].Values[m.ID]
	}
	r := MetricResult{Metric: m, Pairs: n}
	r.Base, r.Head = median(bs), median(hs)
	r.BaseSpread, r.HeadSpread = spread(bs, r.Base), spread(hs, r.Head)
	r.Floor = math.Max(r.BaseSpread, r.HeadSpread)
	r.Tolerance, r.ToleranceSource = tolerance(in, m)
	r.Threshold = math.Max(r.Tolerance, r.Floor)
	r.Worse, r.ZeroBase = worse(r.Base, r.Head, m.HigherIsBetter)
	if !r.ZeroBase {
		r.Ratio = r.Head / r.Base
	}
	r.Breach = breaches(r.Base, r.Head, r.Threshold, m.HigherIsBetter)
	r.PairRatios = make([]float64, n)
	for i := 0; i < n; i++ {
		if bs[i] != 0 {
			r.PairRatios[i] = hs[i] / bs[i]
		}
		if breaches(bs[i], hs[i], r.Threshold, m.HigherIsBetter) {
			r.PairsBreached++
		}
	}
	// Most means strictly more than half: 2 of 4 is a tie, not most.
	r.Fail = r.Breach && 2*r.PairsBreached > n
	r.CI = pairedInterval(bs, hs)
	return r
}

func failureLine(r MetricResult) string {
	if r.ZeroBase {
		return fmt.Sprintf("%s: the head rose from 0 to %s %s, breaching in %d of %d pairs", r.ID, num(r.Head), r.Unit, r.PairsBreached, r.Pairs)
	}
	dir := "worse"
	if r.HigherIsBetter {
		dir = "lower"
	}
	return fmt.Sprintf("%s: the head is %s by %s (%s vs %s %s; threshold %s), breaching in %d of %d pairs", r.ID, dir, pctBeyond(r.Worse, r.Threshold), num(r.Head), num(r.Base), r.Unit, pct(r.Threshold), r.PairsBreached, r.Pairs)
}

// unexpected sums, per group over the phases, the answers the plan did not
// name, one line per group: "group search: 3 answers the plan does not
// name (500 x2, error x1)".
func unexpected(phases []Phase) []string {
	per := map[string]map[string]uint64{}
	var order []string
	for _, p := range phases {
		for _, g := range p.Groups {
			for status, c := range g.Unexpected {
				if c == 0 {
					continue
				}
				if per[g.Name] == nil {
					per[g.Name] = map[string]uint64{}
					order = append(order, g.Name)
				}
				per[g.Name][status] += c
			}
		}
	}
	sort.Strings(order)
	var lines []string
	for _, name := range order {
		statuses := make([]string, 0, len(per[name]))
		total := uint64(0)
		for s, c := range per[name] {
			statuses = append(statuses, s)
			total += c
		}
		sort.Strings(statuses)
		parts := make([]string, len(statuses))
		for i, s := range statuses {
			parts[i] = fmt.Sprintf("%s x%d", s, per[name][s])
		}
		lines = append(lines, fmt.Sprintf("group %s: %d answers the plan does not name (%s)", name, total, strings.Join(parts, ", ")))
	}
	return lines
}

// answeredWrong says whether the head answered some group with an HTTP
// status the plan does not name while the base answered that group only as
// the plan says. That is the head's own answer: a stalled or late runner
// slows answers, it does not turn a 200 into a 500. Errors and timeouts
// are not answers, and a runner can cause them; where the base also
// answered wrong (a route the change adds, the test data), the status may
// not be the head's doing either.
func answeredWrong(in Input) bool {
	base := wrongStatusGroups(in.Base)
	for g := range wrongStatusGroups(in.Head) {
		if !base[g] {
			return true
		}
	}
	return false
}

// wrongStatusGroups names the groups answered with a status the plan does
// not name (Unexpected's numeric keys; the others are failure kinds).
func wrongStatusGroups(phases []Phase) map[string]bool {
	out := map[string]bool{}
	for _, p := range phases {
		for _, g := range p.Groups {
			for k, c := range g.Unexpected {
				if _, err := strconv.Atoi(k); err == nil && c > 0 {
					out[g.Name] = true
				}
			}
		}
	}
	return out
}

// judgeIdle compares the idle figures with their limits. The limits are
// "under": a figure exactly at its limit fails.
func judgeIdle(id Idle) IdleResult {
	if id.CPULimit == 0 {
		id.CPULimit = DefaultIdleCPU
	}
	if id.TxLimit == 0 {
		id.TxLimit = DefaultIdleTx
	}
	r := IdleResult{Idle: id}
	r.CPUFail = id.CPU >= id.CPULimit-eps
	r.TxFail = id.StoreMeasured && id.TxPerSec >= id.TxLimit-eps
	return r
}

// pct formats a fraction as a percentage for reasons: 0.25 -> "25 %".
func pct(f float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", f*100), ".0") + " %"
}

// pctBeyond formats w with as many decimals as it takes to read as more
// than threshold, so a breach by a hair never reads "25 %, threshold 25 %".
func pctBeyond(w, threshold float64) string {
	for d := 1; d < 6; d++ {
		s := strconv.FormatFloat(w*100, 'f', d, 64)
		if s != strconv.FormatFloat(threshold*100, 'f', d, 64) {
			return strings.TrimSuffix(s, ".0") + " %"
		}
	}
	return pct(w)
}

// num formats a value with three significant figures or more.
func num(f float64) string {
	return fmt.Sprintf("%.4g", f)
}
