package pairs

import (
	"maps"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfgate/perfgate/internal/armdb"
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
			// Answers with an expected status that fail the group's
			// expect_body, expect_json or expect_header (load.AnswerRule).
			WrongAnswers: g.WrongAnswers,
			WrongAnswer:  g.WrongAnswer,
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
			ph.Resolution[judge.MetricTxPerRequest] = txResolution(r.tx, secs) / float64(all.Requests)
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

// txResolution is how many commits a window's count may be off by at each
// edge: PostgreSQL publishes a busy backend's commits at most once every
// armdb.MinFlushInterval, so the reading at the window's opening misses
// the warm-up's last commits (which then count in the window) and the one
// after its close misses the window's last (a session gone idle keeps
// them for its 10 s idle timer). Each edge is off by up to the commits of
// one flush interval, which the judge reads as a value's rounding step
// (docs/judge.md, "Rounding"): a demo gate whose head committed as its
// base did read 11 commits a 4 s window against the base's 9 in both
// pairs, 22 % "worse" at a tolerance of 10 %. A count moves by one at
// least.
func txResolution(tx int64, secs float64) float64 {
	if secs <= 0 {
		return 1
	}
	return max(1, float64(tx)*armdb.MinFlushInterval.Seconds()/secs)
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
