package pairs

import (
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

// limits are the plan's thresholds as the judge measures them.
func limits(ths []plan.Threshold) []judge.Limit {
	out := make([]judge.Limit, len(ths))
	for i, th := range ths {
		out[i] = judge.Limit(th)
	}
	return out
}

// pooled merges, group by group, the stats of several measured windows.
func pooled(results []*load.Result) []*load.GroupStats {
	var out []*load.GroupStats
	for _, r := range results {
		for gi, g := range r.Groups {
			for len(out) <= gi {
				out = append(out, nil)
			}
			out[gi] = load.Merge([]*load.GroupStats{out[gi], g})
			if out[gi].Name == "" || out[gi].Name == "all" {
				out[gi].Name = g.Name
			}
		}
	}
	return out
}
