package pairs

import (
	"reflect"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

func stats(name string, latencies []time.Duration, statuses map[int]uint64, errs map[string]uint64) *load.GroupStats {
	g := &load.GroupStats{Name: name, Statuses: statuses, Errors: errs}
	for _, d := range latencies {
		if g.Latency == nil {
			g.Latency = load.NewHistogram()
		}
		g.Latency.RecordValue(d.Microseconds())
		g.Expected++
	}
	for _, n := range statuses {
		g.Requests += n
	}
	for _, n := range errs {
		g.Requests += n
	}
	return g
}

// Wrong statuses and failures are counted apart: only a status is the
// arm's own answer (internal/judge's answeredWrong).
func TestWrongStatusAndFailed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		statuses   map[int]uint64
		errs       map[string]uint64
		expect     []int
		wantStatus map[int]uint64
		wantFailed map[string]uint64
	}{
		{"all expected", map[int]uint64{200: 10}, nil, []int{200}, nil, nil},
		{"wrong status", map[int]uint64{200: 8, 500: 2}, nil, []int{200}, map[int]uint64{500: 2}, nil},
		{"two expected", map[int]uint64{200: 8, 201: 2}, nil, []int{200, 201}, nil, nil},
		{"transport errors", map[int]uint64{200: 8}, map[string]uint64{"refused": 3}, []int{200}, nil, map[string]uint64{"refused": 3}},
		{"both", map[int]uint64{503: 1}, map[string]uint64{"timeout": 2}, []int{200}, map[int]uint64{503: 1}, map[string]uint64{"timeout": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := stats("g", nil, tc.statuses, tc.errs)
			if got := wrongStatus(g, tc.expect); !reflect.DeepEqual(got, tc.wantStatus) {
				t.Errorf("wrong statuses = %v, want %v", got, tc.wantStatus)
			}
			if got := failed(g); !reflect.DeepEqual(got, tc.wantFailed) {
				t.Errorf("failed = %v, want %v", got, tc.wantFailed)
			}
		})
	}
}

// A group the base never answered as planned (a route the change adds)
// has no latency figures, and Gate then leaves its metrics out.
func TestPhaseFiguresWithoutExpectedAnswers(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, v := range n {
			out = append(out, time.Duration(v)*time.Millisecond)
		}
		return out
	}
	hello := stats("hello", ms(1, 2, 3, 4), map[int]uint64{200: 4}, nil)
	added := stats("added", nil, map[int]uint64{404: 4}, nil)
	r := &armRun{
		groups: []load.Group{{Name: "hello", Expect: []int{200}}, {Name: "added", Expect: []int{200}}},
		cpu:    80 * time.Millisecond, peak: 1 << 20, tx: 4,
		res: &load.Result{
			Groups:   []*load.GroupStats{hello, added},
			Halves:   [2][]*load.GroupStats{{hello, added}, {hello, added}},
			Measured: 2 * time.Second,
			Schedule: load.Schedule{Offered: 4, Achieved: 4, Intended: 8, Sent: 8},
		},
	}
	ph := phaseFigures(0, "base", r, true)
	// HDR reports a bucket's highest equivalent value: 4 ms reads 4.001.
	want := map[string]float64{
		"throughput": 2, "p50.hello": 2, "p95.hello": 4.001, "p99.hello": 4.001,
		"cpu_per_request": 10, "tx_per_request": 0.5, "peak_memory": 1 << 20,
	}
	if !reflect.DeepEqual(ph.Values, want) {
		t.Errorf("values = %v, want %v", ph.Values, want)
	}
	if ph.Groups[1].WrongStatus[404] != 4 || ph.Groups[1].Halves[0].Count != 0 {
		t.Errorf("the added group's figures: %+v", ph.Groups[1])
	}
	// The report keeps the whole histogram, which reads the same p99 as
	// the phase's own figure; a group with no answer as planned has none,
	// and no server_timing means no server histogram.
	if h := ph.Groups[0].Latency; h.Count() != 4 || h.Percentile(99) != ph.Values["p99.hello"] {
		t.Errorf("hello's kept histogram holds %d answers, p99 %v; want 4 and %v", h.Count(), h.Percentile(99), ph.Values["p99.hello"])
	}
	if ph.Groups[1].Latency != nil || ph.Groups[0].Server != nil {
		t.Errorf("histograms kept for no answers: latency %v, server %v", ph.Groups[1].Latency, ph.Groups[0].Server)
	}
	if ph.Pair != 1 || ph.Lead != "base" || ph.Schedule.Answered != 8 {
		t.Errorf("phase header: pair %d lead %s answered %d", ph.Pair, ph.Lead, ph.Schedule.Answered)
	}
}

func TestMetricListOrder(t *testing.T) {
	p := &plan.Plan{Groups: []plan.Group{{Name: "a"}, {Name: "b"}}}
	seen := map[string]bool{"throughput": true, "p50.a": true, "p50.b": true, "p99.a": true, "cpu_per_request": true, "peak_memory": true, "p95.b": false}
	var ids []string
	for _, m := range metricList(p, seen) {
		ids = append(ids, m.ID)
		if m.ID == "throughput" && (!m.HigherIsBetter || m.Class != judge.Throughput) {
			t.Errorf("throughput: %+v", m)
		}
	}
	want := []string{"throughput", "p50.a", "p50.b", "p99.a", "cpu_per_request", "peak_memory"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("metrics %v, want %v", ids, want)
	}
}

// A window's commit count is off at each edge by up to one flush
// interval's commits (txResolution), and the judge allows for it as for
// CPU ticks: the demo gate whose head read 11 commits a 4 s window of 40
// requests against the base's 9 (the same requests, so the same commits)
// in both pairs passes, while a real 20 % more commits a request over the
// default profile's 8 pairs of 10 s at 30/s still fails, and 5 % more,
// under the 10 % tolerance, passes.
func TestTxCountsAllowForTheFlushLag(t *testing.T) {
	tx := judge.Metric{ID: judge.MetricTxPerRequest, Class: judge.Transactions, Unit: "tx"}
	gate := func(pairs int, secs float64, requests float64, base, head []int64) judge.Input {
		in := judge.Input{Metrics: []judge.Metric{tx}}
		for i := range pairs {
			for arm, n := range map[string]int64{"base": base[i%len(base)], "head": head[i%len(head)]} {
				r := uint64(requests)
				ph := judge.Phase{Pair: i + 1, Lead: [2]string{"base", "head"}[i%2],
					Values:     map[string]float64{tx.ID: float64(n) / requests},
					Resolution: map[string]float64{tx.ID: txResolution(n, secs) / requests},
					Groups: []judge.GroupFigures{{Name: "g", Requests: r, P50: 5, P99: 15,
						Halves: [2]judge.Half{{P50: 5, P90: 10, Count: r / 2}, {P50: 5, P90: 10, Count: r / 2}}}},
					Schedule: judge.Schedule{Offered: requests / secs, Achieved: requests / secs, Intended: r, Sent: r, Answered: r, LatenessP99: 0.2}}
				if arm == "base" {
					in.Base = append(in.Base, ph)
				} else {
					in.Head = append(in.Head, ph)
				}
			}
		}
		return in
	}
	for _, tc := range []struct {
		name string
		in   judge.Input
		want judge.Code
	}{
		{"9 against 11 commits in 2 pairs of 4 s: the flush lag", gate(2, 4, 40, []int64{9}, []int64{11}), judge.Pass},
		{"75 against 90 commits in 8 pairs of 10 s: 20 % more", gate(8, 10, 300, []int64{75}, []int64{90}), judge.Regression},
		{"75 against 90 or 91 by turns: 20 % more", gate(8, 10, 300, []int64{75, 74}, []int64{90, 91}), judge.Regression},
		{"75 against 79 commits in 8 pairs of 10 s: 5 % more", gate(8, 10, 300, []int64{75}, []int64{79}), judge.Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judge.Judge(tc.in)
			if v.Code != tc.want {
				t.Errorf("verdict %v, want %v: %+v", v.Code, tc.want, v.Metrics)
			}
		})
	}
	if got := txResolution(0, 10); got != 1 {
		t.Errorf("no commits: a resolution of %g commits, want 1 (a count moves by one)", got)
	}
	if got := txResolution(120, 4); got != 30 {
		t.Errorf("120 commits in 4 s: %g commits, want 30 (a second's)", got)
	}
}
