package judge

import (
	"fmt"
	"strings"
)

// applyTail judges a tail latency metric (p95, p99) by the pooled rule
// (PooledTail) in place of the per-phase paired rule, when the rule
// applies: the paired rule, a base above 0, and every phase of both arms
// holding the group's latency histogram. Otherwise r keeps the per-phase
// judgement, and unpooled says why (NoHistograms for a report from
// before version 2, whose phases hold none); "" when the rule judged it
// or does not apply.
func applyTail(in Input, r *MetricResult, rule TailRule) (unpooled string) {
	q, group, ok := SplitLatencyID(r.ID)
	if !ok || q.Percent < rule.MinPercent || r.Rule == RuleMedians || r.ZeroBase {
		return ""
	}
	base, missB := groupHistograms(in.Base, group)
	head, missH := groupHistograms(in.Head, group)
	switch {
	case len(missB) == len(in.Base) && len(missH) == len(in.Head):
		return NoHistograms
	case len(missB)+len(missH) > 0:
		var where []string
		for _, p := range missB {
			where = append(where, fmt.Sprintf("pair %d's base", p))
		}
		for _, p := range missH {
			where = append(where, fmt.Sprintf("pair %d's head", p))
		}
		return fmt.Sprintf("%s held no latency histogram of %s", strings.Join(where, ", "), group)
	}
	t := PooledTail(rule, q.Percent, r.Tolerance, base, head)
	if len(t.Warnings) > 0 {
		var why []string
		for _, w := range t.Warnings {
			why = append(why, w.Error())
		}
		return strings.Join(why, "; ")
	}
	if t.Beyond == 0 {
		// Pooled, the percentile is still the slowest answer: an arm's
		// pairs together held under 1/(1-p) answers. The per-phase figure
		// is then one too, noted and never failed on.
		return fmt.Sprintf("an arm's pairs together held %d answers, so its %s is its slowest answer", min(t.BaseCount, t.HeadCount), q.Name)
	}
	r.Tail = &t
	r.Base, r.Head, r.Ratio, r.Worse = t.Base, t.Head, t.Head/t.Base, t.Worse
	r.Floor = t.Bound
	r.Threshold = max(r.Tolerance, t.Bound)
	r.Breach, r.Fail = t.Fail, t.Fail
	r.CI = t.CI
	r.Detectable = t.Detectable
	r.Samples, r.Beyond = min(t.BaseCount, t.HeadCount), t.Beyond
	r.Slowest = false
	return ""
}

// NoHistograms is why the tails of a report from before version 2 are
// judged phase by phase.
const NoHistograms = "the report holds no latency histograms (reports before version 2 kept none)"

// groupHistograms is the group's latency histogram of each phase, and the
// pairs whose phase holds none.
func groupHistograms(phases []Phase, group string) (hs []*Histogram, missing []int) {
	for _, ph := range phases {
		var h *Histogram
		for _, g := range ph.Groups {
			if g.Name == group {
				h = g.Latency
			}
		}
		if h.Count() == 0 {
			missing = append(missing, ph.Pair)
		}
		hs = append(hs, h)
	}
	return hs, missing
}

// unpooledNotes are the summary's notes on tail metrics judged phase by
// phase, one a reason: the metrics, and why they were not pooled.
type unpooledNotes struct {
	reasons []string
	ids     map[string][]string
}

func (u *unpooledNotes) add(id, reason string) {
	if reason == "" {
		return
	}
	if u.ids == nil {
		u.ids = map[string][]string{}
	}
	if _, ok := u.ids[reason]; !ok {
		u.reasons = append(u.reasons, reason)
	}
	u.ids[reason] = append(u.ids[reason], id)
}

func (u *unpooledNotes) notes() []string {
	var out []string
	for _, why := range u.reasons {
		out = append(out, fmt.Sprintf("%s judged phase by phase, not pooled over the pairs: %s", strings.Join(u.ids[why], ", "), why))
	}
	return out
}

// tailFailureLine is the failure of a tail judged pooled.
func tailFailureLine(r MetricResult) string {
	return fmt.Sprintf("%s: the head is worse by %s pooled over the pairs (%s vs %s %s over %d and %d answers; threshold %s)",
		r.ID, pctBeyond(r.Worse, r.Threshold), num(r.Head), num(r.Base), r.Unit, r.Tail.HeadCount, r.Tail.BaseCount, pct(r.Threshold))
}
