package run

import (
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"
	"strconv"
	"time"

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
		ph.Values["throughput"] = float64(all.Expected) / secs
	}
	for gi, g := range res.Groups {
		name := r.groups[gi].Name
		// Latency counts expected answers only: a group the arm never
		// answered as planned (a route the change adds, on the base) has
		// no latency, and its metrics are left out rather than read as 0.
		if count(g.Latency) > 0 {
			ph.Values["p50."+name] = ms(g.Percentile(50))
			ph.Values["p95."+name] = ms(g.Percentile(95))
			ph.Values["p99."+name] = ms(g.Percentile(99))
		}
		gf := judge.GroupFigures{
			Name:       name,
			Requests:   g.Requests,
			P50:        ms(g.Percentile(50)),
			P99:        ms(g.Percentile(99)),
			Unexpected: unexpected(g, r.groups[gi].Expect),
		}
		for h := range 2 {
			hg := res.Halves[h][gi]
			gf.Halves[h] = judge.Half{P50: ms(hg.Percentile(50)), P90: ms(hg.Percentile(90)), Count: count(hg.Latency)}
		}
		ph.Groups = append(ph.Groups, gf)
	}
	if all.Requests > 0 {
		ph.Values["cpu_per_request"] = ms(r.cpu) / float64(all.Requests)
		if withStore {
			ph.Values["tx_per_request"] = float64(r.tx) / float64(all.Requests)
		}
	}
	ph.Values["peak_memory"] = float64(r.peak)
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

// unexpected counts the answers the plan does not name, by status, and the
// requests that got no answer, by kind of failure.
func unexpected(g *load.GroupStats, expect []int) map[string]uint64 {
	out := map[string]uint64{}
	for status, n := range g.Statuses {
		if !slices.Contains(expect, status) {
			out[strconv.Itoa(status)] += n
		}
	}
	for kind, n := range g.Errors {
		out[kind] += n
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// metricList names the metrics in the order reports show them.
func metricList(p *plan.Plan, seen map[string]bool) []judge.Metric {
	var ms []judge.Metric
	add := func(id string, class judge.Class, unit string, higher bool) {
		if seen[id] {
			ms = append(ms, judge.Metric{ID: id, Class: class, Unit: unit, HigherIsBetter: higher})
		}
	}
	add("throughput", judge.Throughput, "req/s", true)
	for _, q := range []string{"p50", "p95", "p99"} {
		for _, g := range p.Groups {
			add(q+"."+g.Name, judge.Latency, "ms", false)
		}
	}
	add("cpu_per_request", judge.CPU, "ms", false)
	add("peak_memory", judge.Memory, "bytes", false)
	add("tx_per_request", judge.Transactions, "tx", false)
	return ms
}

// count is a histogram's count; a group with no success has none.
func count(h *hdrhistogram.Histogram) uint64 {
	if h == nil {
		return 0
	}
	return uint64(h.TotalCount())
}
