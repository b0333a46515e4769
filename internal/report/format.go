package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/judge"
)

// unitLabel is how a metric's unit reads in a table; bytes read as MiB.
func unitLabel(unit string) string {
	if unit == "bytes" {
		return "MiB"
	}
	return unit
}

// value formats v in the metric's unit as a table shows it.
func value(unit string, v float64) string {
	if unit == "bytes" {
		v /= 1 << 20
	}
	return num(v)
}

// num keeps about three significant figures without exponents.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.001:
		return strconv.FormatFloat(v, 'f', 3+int(-math.Floor(math.Log10(a)))-1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
}

// pct formats a fraction as a percentage: 0.25 -> "25 %", 0.041 -> "4.1 %".
func pct(f float64) string {
	p := f * 100
	if math.Abs(p-math.Round(p)) < 0.05 {
		return fmt.Sprintf("%.0f %%", p)
	}
	return fmt.Sprintf("%.1f %%", p)
}

func ratio(r judge.MetricResult) string {
	if r.ZeroBase {
		if r.Head == 0 {
			return "= (0)"
		}
		return "new (from 0)"
	}
	return strconv.FormatFloat(r.Ratio, 'f', 2, 64)
}

func interval(ci judge.Interval) string {
	if ci.N == 0 {
		return "none (no pair without a 0)"
	}
	if ci.N == 1 {
		return fmt.Sprintf("%.2f (1 pair)", ci.Estimate)
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f] %s", ci.Estimate, ci.Lo, ci.Hi, pct(ci.Confidence))
}

// worsePct is how much worse the head is, by the rule that judged.
func worsePct(r judge.MetricResult) string {
	if r.ZeroBase {
		return "-"
	}
	return pctSigned(r.Worse)
}

func pctSigned(f float64) string {
	switch s := pct(math.Abs(f)); {
	case s == "0 %":
		return s
	case f > 0:
		return "+" + s
	default:
		return "-" + s
	}
}

// samples is, for a latency metric, how many answers each phase's figure
// rested on at the fewest and how many lay beyond a tail percentile.
func samples(r judge.MetricResult) string {
	if r.Samples == 0 {
		return ""
	}
	if r.Slowest { // the phase's slowest answer: reported, not judged
		return fmt.Sprintf("%d (slowest, not judged)", r.Samples)
	}
	if r.Tail != nil { // an arm's answers over all its pairs
		return fmt.Sprintf("%d pooled (%d beyond)", r.Samples, r.Beyond)
	}
	if r.Beyond*2 >= r.Samples { // a median has no tail to count
		return strconv.FormatUint(r.Samples, 10)
	}
	return fmt.Sprintf("%d (%d beyond)", r.Samples, r.Beyond)
}

// catches is, under the paired rule, the change the gate's pairs catch in
// 95 % of gates at their scatter (judge.MetricResult.Detectable).
func catches(r judge.MetricResult) string {
	if !(r.Detectable > 0) {
		return ""
	}
	if r.Detectable > judge.CatchesCap {
		return judge.CatchesText(r.Detectable)
	}
	return "≥ " + pct(r.Detectable)
}

// ruleLine names the rule that judged the metrics.
func ruleLine(rule string) string {
	if r, _ := judge.CanonicalRule(rule); r == judge.RuleMedians {
		return "medians: FerroFED's gate's rule, medians per arm, each arm's own spread as the floor (docs/judge.md)"
	}
	return "paired: the pairs' ratios head/base, the floor from how they scatter (docs/judge.md)"
}

// ruleExplained says in one paragraph how the table's figures were judged.
func ruleExplained(v judge.Verdict, pairs int) string {
	text := ruleText(v.Rule, pairs)
	if pooledTails(v) {
		text += " Tails marked pooled (p95, p99) are judged instead from each arm's answers over all its pairs together: base and head are those pooled percentiles, worse their ratio, the floor the 99 % bound that swapping the arms' labels within pairs puts on it, and a tail fails when worse passes the threshold, however many pairs breach alone."
	}
	return text
}

// pooledTails reports whether any metric was judged from pooled histograms.
func pooledTails(v judge.Verdict) bool {
	for _, m := range v.Metrics {
		if m.Tail != nil {
			return true
		}
	}
	return false
}

func ruleText(rule string, pairs int) string {
	if r, _ := judge.CanonicalRule(rule); r == judge.RuleMedians {
		return fmt.Sprintf("Judged by the medians rule: each figure is the median of an arm's %d phases; worse compares the medians; the floor is the worse arm's spread; the threshold is the larger of tolerance and floor; a metric fails when the head's median breaches it and the head breaches in most pairs.", pairs)
	}
	return fmt.Sprintf("Judged by the paired rule: base and head are the medians of %d phases, for reading; worse is the geometric mean of the %d pairs' ratios head/base; the floor is the 99 %% one-sided bound the pairs' scatter puts on that mean; the threshold is the larger of tolerance and floor; a metric fails when worse passes the threshold and most pairs are worse than the tolerance. Samples is the answers a phase's latency figure rests on, and for a tail how many lay beyond it. Catches is the change that gates with pairs scattering as these did catch in %s of runs: a pass says nothing of smaller ones.", pairs, pairs, pct(judge.DetectPower))
}

// comparedLine says how many request groups had their latency compared.
func comparedLine(r *Report) string {
	names := map[string]bool{}
	for _, ph := range r.Input.Base {
		for _, g := range ph.Groups {
			names[g.Name] = true
		}
	}
	n := len(names)
	left := len(r.Verdict.LeftOut)
	if left == 0 {
		return fmt.Sprintf("all %d", n)
	}
	return fmt.Sprintf("%d of %d; %d left out (below)", n-left, n, left)
}

func pairsBreached(r judge.MetricResult) string {
	return fmt.Sprintf("%d of %d", r.PairsBreached, r.Pairs)
}

// outcome is a metric's state in one word or three.
func outcome(r judge.MetricResult) string {
	switch {
	case r.Fail:
		return "FAIL"
	case r.Breach:
		return "breach, not most pairs"
	default:
		return "ok"
	}
}

// metricNotes says in words what the numbers of one metric mean when they
// need saying.
func metricNotes(r judge.MetricResult) []string {
	var n []string
	if r.ZeroBase {
		if r.HigherIsBetter || r.Head == 0 {
			n = append(n, fmt.Sprintf("%s: the base's median is 0, so there is no ratio; a higher-is-better metric cannot get worse than 0, and 0 against 0 is equal", r.ID))
		} else {
			n = append(n, fmt.Sprintf("%s: the base's median is 0, so there is no ratio; any rise from 0 breaches", r.ID))
		}
	}
	if r.Floor > r.Tolerance {
		medians, _ := judge.CanonicalRule(r.Rule)
		switch {
		case r.Tail != nil:
			n = append(n, fmt.Sprintf("%s: swapping the arms' labels within pairs gives pooled ratios up to %s in 99 %% of the %d patterns, over the %s tolerance, so the threshold is that bound", r.ID, pct(r.Floor), r.Tail.Patterns, pct(r.Tolerance)))
		case medians == judge.RuleMedians:
			who := "base"
			if r.HeadSpread > r.BaseSpread {
				who = "head"
			}
			n = append(n, fmt.Sprintf("%s: the %s's phases strayed %s from its median, over the %s tolerance, so the threshold is that noise floor", r.ID, who, pct(r.Floor), pct(r.Tolerance)))
		default:
			n = append(n, fmt.Sprintf("%s: the pairs' ratios scatter so much (standard deviation %s) that their mean is known only to within %s, over the %s tolerance, so the threshold is that noise floor", r.ID, pct(r.PairSpread), pct(r.Floor), pct(r.Tolerance)))
		}
	}
	// A plan that spells out the defaults is no news; say only what moved.
	if r.ToleranceSource != "default" && r.ToleranceSource != "" && r.Tolerance != judge.DefaultToleranceOf(r.Rule, r.Class) {
		n = append(n, fmt.Sprintf("%s: tolerance %s set for this %s", r.ID, pct(r.Tolerance), map[string]string{"metric": "metric", "class": "class (" + string(r.Class) + ")"}[r.ToleranceSource]))
	}
	return n
}

// intervalNote says once how sure the intervals can be with this many pairs.
func intervalNote(v judge.Verdict) string {
	n := 0
	conf := 0.0
	for _, m := range v.Metrics {
		if m.CI.N > n && m.Tail == nil {
			n, conf = m.CI.N, m.CI.Confidence
		}
	}
	pooled := ""
	if pooledTails(v) {
		pooled = " A pooled tail's interval is its estimate give or take what swapping the arms' labels within pairs moves it by, once the head's answers are scaled to the estimate."
	}
	if n == 0 {
		return strings.TrimSpace(pooled)
	}
	want := judge.PairsFor(judge.WantConfidence)
	s := fmt.Sprintf("The interval is the Hodges-Lehmann estimate of head/base over the %d pairs with its Wilcoxon signed-rank interval", n)
	if n < want {
		return s + fmt.Sprintf(": with %d pairs it can reach only %s confidence, and at that it is the whole range of the pair ratios, so read it as how far the pairs disagree, not as proof; %d pairs reach %s.", n, pct(conf), want, pct(judge.WantConfidence)) + pooled
	}
	return s + fmt.Sprintf(" at %s confidence.", pct(conf)) + pooled
}

// armLine is "`abc123` (main): why".
// variantLine says what the variant control's third arm was: the head's
// build with the control's overrides.
func variantLine(a Build) string {
	return fmt.Sprintf("the head's build with %s (the variant control; it must fail its counter)", strings.Join(a.Overrides, " "))
}

func armLine(a Build) string {
	var b strings.Builder
	if a.Commit != "" {
		fmt.Fprintf(&b, "`%s`", event.ShortSHA(a.Commit))
	} else {
		b.WriteString("(no commit)")
	}
	if a.Ref != "" {
		fmt.Fprintf(&b, " (%s)", a.Ref)
	}
	if a.Why != "" {
		fmt.Fprintf(&b, ": %s", a.Why)
	}
	return b.String()
}

// settingsLine is the run's settings; idleRan is whether the verdict has
// the idle phase's figures (an adaptive gate whose pairs already failed
// it does not run its idle phase, and the notes say why).
func settingsLine(s Settings, idleRan bool) string {
	line := fmt.Sprintf("%d pairs of %s warm-up + %s measured at %s arrivals/s to each arm", s.Pairs, s.Warmup, s.Measure, strconv.FormatFloat(s.Rate, 'f', -1, 64))
	if s.Idle > 0 {
		line += fmt.Sprintf("; idle phase %s", s.Idle)
		if !idleRan {
			line += " (not run: see the notes)"
		}
	}
	if s.Plan != "" {
		line += fmt.Sprintf("; plan %s", s.Plan)
	}
	return line
}

func exitLine(v judge.Verdict) string {
	return fmt.Sprintf("%s (exit %d)", v.Word(), v.Code)
}
