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
