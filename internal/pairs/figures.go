package pairs

import (
	"maps"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfgate/perfgate/internal/arms"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// phaseFigures turns one arm's measured window into the judge's numbers.
func phaseFigures(pair int, lead string, r *armRun, withStore bool) judge.Phase {
	res := r.res
	secs := res.Measured.Seconds()
	all := res.Total()
	ph := judge.Phase{Pair: pair + 1, Lead: lead, Values: map[string]float64{}}
	if secs > 0 {
		ph.Values[judge.MetricThroughput] = float64(all.Expected) / secs
	}
	for gi, g := range res.Groups {
		name := r.groups[gi].Name
		// Latency counts expected answers only: a group the arm never
		// answered as planned (a route the change adds, on the base) has
		// no latency, and its metrics are left out rather than read as 0.
		if count(g.Latency) > 0 {
			for _, q := range judge.Percentiles {
				ph.Values[judge.LatencyMetric(q, name).ID] = ms(g.Percentile(q.Percent))
			}
		}
		gf := judge.GroupFigures{
			Name:        name,
			Requests:    g.Requests,
			P50:         ms(g.Percentile(50)),
			P99:         ms(g.Percentile(99)),
			WrongStatus: wrongStatus(g, r.groups[gi].Expect),
			Failed:      failed(g),
			// The whole histograms, so the tails are judged pooled over
			// the pairs (docs/judge.md); Server is nil without server_timing.
			Latency: judge.NewHistogram(g.Latency),
			Server:  judge.NewHistogram(g.Server),
		}
		for h := range 2 {
			hg := res.Halves[h][gi]
			gf.Halves[h] = judge.Half{P50: ms(hg.Percentile(50)), P90: ms(hg.Percentile(90)), Count: count(hg.Latency)}
		}
		ph.Groups = append(ph.Groups, gf)
	}
	if all.Requests > 0 {
		ph.Values[judge.MetricCPUPerRequest] = ms(r.cpu) / float64(all.Requests)
		ph.Resolution = map[string]float64{judge.MetricCPUPerRequest: ms(arms.CPUResolution) / float64(all.Requests)}
		if withStore {
			ph.Values[judge.MetricTxPerRequest] = float64(r.tx) / float64(all.Requests)
		}
	}
	ph.Values[judge.MetricPeakMemory] = float64(r.peak)
	s := res.Schedule
	ph.Schedule = judge.Schedule{
		Offered:  s.Offered,
		Achieved: s.Achieved,
		Intended: s.Intended,
		Sent:     s.Sent,
		Late:     s.Late,
		Dropped:  s.Dropped,
		Answered: all.Requests,
	}
	if s.Lateness != nil {
		ph.Schedule.LatenessP99 = ms(load.NearestRank(s.Lateness, 99))
	}
	return ph
}

// wrongStatus counts the answers with a status the plan does not name.
func wrongStatus(g *load.GroupStats, expect []int) map[int]uint64 {
	out := map[int]uint64{}
	for status, n := range g.Statuses {
		if !slices.Contains(expect, status) && n > 0 {
			out[status] += n
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// failed counts the requests that got no answer, by the load engine's
// kind of failure.
func failed(g *load.GroupStats) map[string]uint64 {
	if len(g.Errors) == 0 {
		return nil
	}
	return maps.Clone(g.Errors)
}

// metricList names the metrics in the order reports show them: throughput,
// each percentile of each group, then the other whole-run metrics.
func metricList(p *plan.Plan, seen map[string]bool) []judge.Metric {
	var ms []judge.Metric
	add := func(m judge.Metric) {
		if seen[m.ID] {
			ms = append(ms, m)
		}
	}
	add(judge.WholeMetrics[0])
	for _, q := range judge.Percentiles {
		for _, g := range p.Groups {
			add(judge.LatencyMetric(q, g.Name))
		}
	}
	for _, m := range judge.WholeMetrics[1:] {
		add(m)
	}
	return ms
}

// count is a histogram's count; a group with no success has none.
func count(h *hdrhistogram.Histogram) uint64 {
	if h == nil {
		return 0
	}
	return uint64(h.TotalCount())
}
