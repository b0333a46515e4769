package judge

import "fmt"

// The kinds of threshold a plan can set besides a percentile ("p90").
const (
	ThresholdSuccess = "success" // the share answered as the plan says must reach Min
	ThresholdUnder   = "under"   // the share answered strictly under Below must reach Min
)

// Threshold is one of the plan's absolute limits with what the head
// measured against it, pooled over every measured window it had. Metric is
// "p<N>", ThresholdSuccess or ThresholdUnder; Group "" means all groups;
// Side is "client" or "server". BelowMS is the latency limit; Min the
// share to reach (a fraction). Value is what was measured: ms for a
// percentile, a fraction for the shares. Samples counts the requests it
// rests on (answers as planned for latency, every request for success).
type Threshold struct {
	Line    int     `json:"line"`
	Metric  string  `json:"metric"`
	Group   string  `json:"group,omitempty"`
	Side    string  `json:"side"`
	BelowMS float64 `json:"below_ms,omitempty"`
	Min     float64 `json:"min,omitempty"`
	Value   float64 `json:"value"`
	Samples uint64  `json:"samples"`
}

// ThresholdResult is a threshold judged.
type ThresholdResult struct {
	Threshold
	Fail bool   `json:"fail"`
	Says string `json:"says"`
}

// JudgeThreshold compares one measured threshold with its limit: a
// percentile must be strictly below its limit, a share must reach its
// minimum. A percentile with no answer to rest on fails, since a limit
// nothing was measured against is not met.
func JudgeThreshold(t Threshold) ThresholdResult {
	r := ThresholdResult{Threshold: t}
	subject := "all groups"
	if t.Group != "" {
		subject = "group " + t.Group
	}
	side := ""
	if t.Side == "server" {
		side = " (server side)"
	}
	where := ""
	if t.Line > 0 {
		where = fmt.Sprintf(" (plan line %d)", t.Line)
	}
	switch t.Metric {
	case ThresholdSuccess:
		r.Fail = t.Samples == 0 || t.Value < t.Min-eps
		r.Says = fmt.Sprintf("threshold%s: success of %s (answered as planned) is %s over %d requests, must be at least %s", where, subject, pct(t.Value), t.Samples, pct(t.Min))
	case ThresholdUnder:
		r.Fail = t.Samples == 0 || t.Value < t.Min-eps
		r.Says = fmt.Sprintf("threshold%s: the share of %s answered under %s ms%s is %s over %d requests, must be at least %s", where, subject, num(t.BelowMS), side, pct(t.Value), t.Samples, pct(t.Min))
	default:
		r.Fail = t.Samples == 0 || t.Value >= t.BelowMS-eps
		if t.Samples == 0 {
			r.Says = fmt.Sprintf("threshold%s: %s of %s%s has no answer as planned to measure, must be under %s ms", where, t.Metric, subject, side, num(t.BelowMS))
		} else {
			r.Says = fmt.Sprintf("threshold%s: %s of %s%s is %s ms over %d answers, must be under %s ms", where, t.Metric, subject, side, num(t.Value), t.Samples, num(t.BelowMS))
		}
	}
	return r
}
