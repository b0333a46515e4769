package pairs

import (
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

// Thresholds measures the plan's [[threshold]] limits on groups, the
// stats of one target pooled over every measured window it had (the head
// over all its pairs, or the one run of perfgate load): a threshold is an
// absolute limit on what the target did, so all its answers count.
// groups holds one GroupStats per plan group, in plan order. The judge
// decides each one (judge.JudgeThreshold).
func Thresholds(ths []plan.Threshold, groups []*load.GroupStats, names []string) []judge.Threshold {
	var out []judge.Threshold
	for _, th := range ths {
		g := pick(groups, names, th.Group)
		t := judge.Threshold{Line: th.Line, Metric: th.Metric, Group: th.Group, Side: th.Side,
			BelowMS: ms(th.Below), Min: th.Min}
		lat := g.Latency
		if th.Side == "server" {
			lat = g.Server
		}
		switch th.Metric {
		case judge.ThresholdSuccess:
			t.Value, t.Samples = g.SuccessRatio(), g.Requests
		case judge.ThresholdUnder:
			// A failed request is not an answer under the limit: the
			// share is of every request, so shedding load cannot help.
			if g.Requests > 0 {
				t.Value = load.FractionUnder(lat, th.Below) * float64(count(lat)) / float64(g.Requests)
			}
			t.Samples = g.Requests
		default:
			p, err := strconv.ParseFloat(strings.TrimPrefix(th.Metric, "p"), 64) // the plan checked "p<N>"
			if err == nil && count(lat) > 0 {
				t.Value, t.Samples = ms(load.NearestRank(lat, p)), count(lat)
			}
		}
		out = append(out, t)
	}
	return out
}

// pick is the named group's stats, or every group merged for "".
func pick(groups []*load.GroupStats, names []string, name string) *load.GroupStats {
	if name == "" {
		return load.Merge(groups)
	}
	for i, n := range names {
		if n == name && i < len(groups) && groups[i] != nil {
			return groups[i]
		}
	}
	return &load.GroupStats{Name: name}
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
