package pairs

import (
	"github.com/perfgate/perfgate/internal/load"
)

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
