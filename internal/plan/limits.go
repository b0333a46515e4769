package plan

import "github.com/perfgate/perfgate/internal/judge"

// Limits are the plan's thresholds as the judge measures them: the plan
// owns how a limit is written, the judge how it is measured and decided
// (judge.MeasureThresholds). judge.Limit has Threshold's fields in the
// same order, so a field added to one and not the other stops the build
// here rather than dropping silently.
func Limits(ths []Threshold) []judge.Limit {
	out := make([]judge.Limit, len(ths))
	for i, th := range ths {
		out[i] = judge.Limit(th)
	}
	return out
}
