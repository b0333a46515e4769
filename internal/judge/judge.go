package judge

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Judge decides the gate from in. It never fails: input it cannot read
// is itself a cannot-judge verdict, naming what is wrong.
func Judge(in Input) Verdict {
	in = splitUnexpected(in)
	in.Rule = ruleOf(in)
	v := Verdict{Rule: in.Rule}
	if bad := validate(in); len(bad) > 0 {
		v.CannotJudge = bad
		v.Code = CannotJudge
		return v
	}
	v.Notes = append(v.Notes, in.Notes...)

	cannot, notes := checkSchedule(in)
	v.CannotJudge = append(v.CannotJudge, cannot...)
	v.Notes = append(v.Notes, notes...)
	v.CannotJudge = append(v.CannotJudge, checkStall(in)...)
	v.CannotJudge = append(v.CannotJudge, checkHalves(in)...)

	var compared int
	v.LeftOut, compared = leftOut(in)
	if compared == 0 && len(v.LeftOut) > 0 {
		// A gate that compared no group's latency has judged nothing a
		// request feels: a base that answers 404 everywhere, or speaks no
		// TLS on an https URL, must not pass a slow head.
		v.CannotJudge = append(v.CannotJudge, "no request group's latency could be compared, so the gate judged none: "+strings.Join(v.LeftOut, "; "))
	}

	var unpooled unpooledNotes
	for _, m := range in.Metrics {
		r := judgeMetric(in, m, v.Rule)
		unpooled.add(m.ID, applyTail(in, &r, DefaultTailRule))
		v.Metrics = append(v.Metrics, r)
		switch {
		case r.Fail:
			v.Failures = append(v.Failures, failureLine(r))
		case r.Breach && r.Slowest:
			v.Notes = append(v.Notes, fmt.Sprintf("%s: the head is worse than the base by more than %s, but each phase's figure is its slowest answer (%d answers a phase), not a percentile, so it is not judged: more answers a phase (rate x measured window) make it one", m.ID, pct(r.Threshold), r.Samples))
		case r.Breach:
			v.Notes = append(v.Notes, fmt.Sprintf("%s: the head is worse than the base by more than %s, but it breached in %d of %d pairs only, not most: a one-off, not a regression", m.ID, pct(r.Threshold), r.PairsBreached, r.Pairs))
		}
	}

	v.Notes = append(v.Notes, unpooled.notes()...)
	if note := detectableNote(v.Metrics); note != "" {
		v.Notes = append(v.Notes, note)
	}

	for _, t := range in.Thresholds {
		r := JudgeThreshold(t)
		v.Thresholds = append(v.Thresholds, r)
		if r.Fail {
			v.Failures = append(v.Failures, "head: "+r.Says)
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

// ruleOf is the input's rule, RulePaired when it names none; a report
// written before the medians rule had its name is judged by it.
func ruleOf(in Input) string {
	if in.Rule == "" {
		return RulePaired
	}
	r, _ := CanonicalRule(in.Rule)
	return r
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
	return DefaultToleranceOf(in.Rule, m.Class), "default"
}

func judgeMetric(in Input, m Metric, rule string) MetricResult {
	n := len(in.Base)
	bs, hs := make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		bs[i], hs[i] = in.Base[i].Values[m.ID], in.Head[i].Values[m.ID]
	}
	r := MetricResult{Metric: m, Pairs: n, Rule: rule}
	r.Base, r.Head = median(bs), median(hs)
	r.BaseSpread, r.HeadSpread = spread(bs, r.Base), spread(hs, r.Head)
	r.Tolerance, r.ToleranceSource = tolerance(in, m)
	r.PairRatios = make([]float64, n)
	for i := 0; i < n; i++ {
		if bs[i] != 0 {
			r.PairRatios[i] = hs[i] / bs[i]
		}
	}
	r.ZeroBase = r.Base == 0
	if !r.ZeroBase {
		r.Ratio = r.Head / r.Base
	}
	// The rounding of each phase's value (Phase.Resolution) counts under
	// the paired rule only; the medians rule stays FerroFED's gate's reading.
	rbs, rhs := make([]float64, n), make([]float64, n)
	if rule != RuleMedians {
		for i := 0; i < n; i++ {
			rbs[i], rhs[i] = in.Base[i].Resolution[m.ID], in.Head[i].Resolution[m.ID]
		}
	}
	if rule == RuleMedians || r.ZeroBase {
		// A base median of 0 has no ratio under either rule: the medians rule's
		// absolute reading of a rise from 0 decides (docs/judge.md).
		judgeMedians(&r, bs, hs, rbs, rhs)
	} else {
		judgePaired(&r, bs, hs, rbs, rhs)
	}
	// Most means strictly more than half: 2 of 4 is a tie, not most.
	r.Fail = r.Breach && 2*r.PairsBreached > n
	r.CI = pairedInterval(bs, hs)
	r.Samples, r.Beyond = latencySamples(in, m)
	// A latency figure no answer of its phase lay beyond is that phase's
	// slowest answer, not a percentile (the p99 of 80 answers is the
	// 80th): one slow answer a phase moves it, and A/A gates failed on it
	// in 4 of 4 pairs. It is reported and noted, never failed on.
	if r.Samples > 0 && r.Beyond == 0 {
		r.Slowest = true
		r.Fail = false
	}
	return r
}

// judgeMedians is FerroFED's gate's rule: the medians of the phases, the
// floor the worse of the two arms' own spreads, each pair breaching
// against the same threshold.
func judgeMedians(r *MetricResult, bs, hs, rb, rh []float64) {
	r.Floor = math.Max(r.BaseSpread, r.HeadSpread)
	r.Threshold = math.Max(r.Tolerance, r.Floor)
	r.Worse, r.ZeroBase = worse(r.Base, r.Head, r.HigherIsBetter)
	r.Breach = breaches(r.Base, r.Head, r.Threshold, r.HigherIsBetter)
	for i := range bs {
		b, h := rounded(bs[i], hs[i], rb[i], rh[i], r.HigherIsBetter)
		if breaches(b, h, r.Threshold, r.HigherIsBetter) {
			r.PairsBreached++
		}
	}
}

// rounded moves a pair's base and head values toward each other by their
// rounding (Phase.Resolution; 0 when exact), so that a pair breaches only
// by a difference the rounding cannot make.
func rounded(b, h, rb, rh float64, higherIsBetter bool) (float64, float64) {
	if higherIsBetter {
		return math.Max(b-rb, 0), h + rh
	}
	return b + rb, math.Max(h-rh, 0)
}

// judgePaired is the paired rule: on the log of each pair's ratio
// head/base, Worse comes from the geometric mean of the pairs' ratios, and
// the floor is the one-sided (1-PairedAlpha) Student bound on that mean
// from the pairs' scatter: the runner's drift, which both arms of a pair
// share, is not in it. A pair breaches when its own ratio is worse than
// the tolerance (the floor bounds the mean, not one pair).
//
// Values that move in steps (rb, rh: Phase.Resolution) carry rounding the
// scatter may not show: a short phase's CPU, a few clock ticks, gave equal
// ratios in every pair (3 ticks against 2, twice), so no scatter, no floor,
// and an A/A gate failed on cpu_per_request. The scatter used for the floor
// is therefore never below what the rounding alone makes (roundingVar).
// With 7 to 16 pairs the floor is also never below the sign-flip bound
// (signFlipBound), which holds A/A false alarms to PairedAlpha whatever
// the shape of the runner's noise.
func judgePaired(r *MetricResult, bs, hs, rb, rh []float64) {
	var ls []float64 // ln(head/base) per pair
	var qs []float64 // each pair's rounding variance of that log ratio
	for i := range bs {
		b, h := bs[i], hs[i]
		if breaches(b, h, r.Tolerance, r.HigherIsBetter) {
			// A pair with a 0 has no log ratio; a rise from 0 (or a fall
			// to 0 of throughput) still breaches in that pair.
			r.PairsBreached++
		}
		if b > 0 && h > 0 {
			ls = append(ls, math.Log(h/b))
			qs = append(qs, roundingVar(b, rb[i])+roundingVar(h, rh[i]))
		}
	}
	mean, sd := meanSD(ls)
	r.PairSpread = sd
	q, _ := meanSD(qs)
	scatter := math.Max(sd, math.Sqrt(q)) // never below what rounding alone makes
	// The sign-flip bound reads only the ratios' magnitudes, so it bounds
	// a fall (throughput) as it bounds a rise.
	bound := math.Max(studentBound(len(ls), scatter), signFlipBound(ls, PairedAlpha))
	// Worse and the floor read as the medians rule's do: head/base - 1 when lower
	// is better, 1 - head/base when higher is better.
	if r.HigherIsBetter {
		r.Worse, r.Floor = -math.Expm1(mean), -math.Expm1(-bound)
	} else {
		r.Worse, r.Floor = math.Expm1(mean), math.Expm1(bound)
	}
	r.Threshold = math.Max(r.Tolerance, r.Floor)
	r.Breach = len(ls) > 0 && r.Worse > r.Threshold+eps
	r.Detectable = detectable(r.Tolerance, scatter, len(ls), r.HigherIsBetter)
}

// studentBound is the one-sided (1-PairedAlpha) Student bound on the mean
// of n log ratios that scatter sd; 0 for fewer than 2.
func studentBound(n int, sd float64) float64 {
	if n < 2 {
		return 0
	}
	return tQuantile(n-1) * sd / math.Sqrt(float64(n))
}

// roundingVar is the variance that rounding to steps of res adds to ln(v).
// A figure counted in steps over a window is the difference of two
// readings, each truncated to a step: its error is the difference of two
// uniform errors of one step, whose variance is res²/6; on the log scale
// that is divided by v².
func roundingVar(v, res float64) float64 {
	if !(res > 0) || !(v > 0) {
		return 0
	}
	return res * res / (6 * v * v)
}

// latencySamples is, for a latency metric, the fewest answers any phase's
// figure rested on and how many of them lay beyond the percentile.
func latencySamples(in Input, m Metric) (samples, beyond uint64) {
	q, group, ok := SplitLatencyID(m.ID)
	if !ok {
		return 0, 0
	}
	first := true
	for _, phases := range [][]Phase{in.Base, in.Head} {
		for _, ph := range phases {
			for _, g := range ph.Groups {
				if g.Name != group {
					continue
				}
				n := g.Halves[0].Count + g.Halves[1].Count
				if first || n < samples {
					samples, first = n, false
				}
			}
		}
	}
	if samples == 0 {
		return 0, 0
	}
	rank := uint64(math.Ceil(q.Percent / 100 * float64(samples)))
	return samples, samples - rank
}

func failureLine(r MetricResult) string {
	if r.Tail != nil {
		return tailFailureLine(r)
	}
	if r.ZeroBase {
		return fmt.Sprintf("%s: the head rose from 0 to %s %s, breaching in %d of %d pairs", r.ID, num(r.Head), r.Unit, r.PairsBreached, r.Pairs)
	}
	dir := "worse"
	if r.HigherIsBetter {
		dir = "lower"
	}
	if r.Rule == RulePaired {
		// Worse is the pairs' geometric mean here, not the medians' ratio.
		return fmt.Sprintf("%s: the head is %s by %s over the pairs (medians %s vs %s %s; threshold %s), breaching in %d of %d pairs", r.ID, dir, pctBeyond(r.Worse, r.Threshold), num(r.Head), num(r.Base), r.Unit, pct(r.Threshold), r.PairsBreached, r.Pairs)
	}
	return fmt.Sprintf("%s: the head is %s by %s (%s vs %s %s; threshold %s), breaching in %d of %d pairs", r.ID, dir, pctBeyond(r.Worse, r.Threshold), num(r.Head), num(r.Base), r.Unit, pct(r.Threshold), r.PairsBreached, r.Pairs)
}

// JudgeIdle is the idle phase's judgement alone, for the idle control
// (internal/controls), which runs an idle phase and no pairs.
func JudgeIdle(id Idle) IdleResult { return judgeIdle(id) }

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
