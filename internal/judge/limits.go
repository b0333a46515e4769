package judge

import (
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfgate/perfgate/internal/load"
)

// Limit is one of the plan's [[threshold]] limits before anything is
// measured against it. Its fields are plan.Threshold's, in the same order,
// so a plan's threshold converts with judge.Limit(th) (plan.Limits): the
// plan owns how a limit is written, the judge how it is measured and
// decided.
type Limit struct {
	Group  string        // "" = all groups together
	Metric string        // "p<N>", ThresholdSuccess or ThresholdUnder
	Below  time.Duration // p<N>: the percentile must be strictly below; under: the latency counted
	Min    float64       // success, under: the fraction that must be reached
	Side   string        // "client" or "server"
	Line   int           // the plan line that wrote it
}

// MeasureThresholds measures limits on groups, the stats of one target
// pooled over every measured window it had (the head over all its pairs,
// a load-curve experiment over its stages, or the one run of perfgate
// load): a threshold is an absolute limit on what the target did, so all
// its answers count. groups[i] is the stats of the group named names[i].
// JudgeThreshold decides each one.
func MeasureThresholds(limits []Limit, groups []*load.GroupStats, names []string) []Threshold {
	var out []Threshold
	for _, th := range limits {
		g := pickGroup(groups, names, th.Group)
		t := Threshold{Line: th.Line, Metric: th.Metric, Group: th.Group, Side: th.Side,
			BelowMS: durationMS(th.Below), Min: th.Min}
		lat := g.Latency
		if th.Side == "server" {
			lat = g.Server
		}
		switch th.Metric {
		case ThresholdSuccess:
			t.Value, t.Samples = g.SuccessRatio(), g.Requests
		case ThresholdUnder:
			// A failed request is not an answer under the limit: the
			// share is of every request, so shedding load cannot help.
			if g.Requests > 0 {
				t.Value = load.FractionUnder(lat, th.Below) * float64(histCount(lat)) / float64(g.Requests)
			}
			t.Samples = g.Requests
		default:
			p, err := strconv.ParseFloat(strings.TrimPrefix(th.Metric, "p"), 64) // the plan checked "p<N>"
			if err == nil && histCount(lat) > 0 {
				t.Value, t.Samples = durationMS(load.NearestRank(lat, p)), histCount(lat)
			}
		}
		out = append(out, t)
	}
	return out
}

// JudgeThresholds measures limits on groups (MeasureThresholds) and
// decides each one (JudgeThreshold), for a run that judges its thresholds
// on its own rather than inside a Verdict.
func JudgeThresholds(limits []Limit, groups []*load.GroupStats, names []string) []ThresholdResult {
	var out []ThresholdResult
	for _, t := range MeasureThresholds(limits, groups, names) {
		out = append(out, JudgeThreshold(t))
	}
	return out
}

// pickGroup is the named group's stats, or every group merged for "".
func pickGroup(groups []*load.GroupStats, names []string, name string) *load.GroupStats {
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

func durationMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// histCount is a histogram's count; a group with no success has none.
func histCount(h *hdrhistogram.Histogram) uint64 {
	if h == nil {
		return 0
	}
	return uint64(h.TotalCount())
}
