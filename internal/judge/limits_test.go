package judge

import (
	"math"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

// groupStats is one group's stats as a load run records them: each
// latency an answer as planned, each status and error a request.
func groupStats(name string, latencies []time.Duration, statuses map[int]uint64, errs map[string]uint64) *load.GroupStats {
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

// Thresholds measure the pooled stats of every window: percentiles of the
// answers as planned, success over every request, the share under a
// limit counting failures as not under. A metric no plan could write
// measures nothing rather than panic.
func TestThresholdsMeasured(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, v := range n {
			out = append(out, time.Duration(v)*time.Millisecond)
		}
		return out
	}
	a := groupStats("a", ms(10, 20, 30, 40), map[int]uint64{200: 4, 500: 1}, nil)
	b := groupStats("b", ms(100, 200), map[int]uint64{200: 2}, map[string]uint64{"timeout": 2})
	names := []string{"a", "b"}
	ths := []Limit{
		{Group: "a", Metric: "p50", Below: 15 * time.Millisecond, Side: "client", Line: 3},
		{Metric: "p100", Below: time.Second, Side: "client"},
		{Group: "b", Metric: "success", Min: 0.5, Side: "client"},
		{Metric: "under", Below: 50 * time.Millisecond, Min: 0.5, Side: "client"},
		{Group: "a", Metric: "p90", Below: time.Second, Side: "server"},
		{Metric: "", Side: "client"},
	}
	got := MeasureThresholds(ths, []*load.GroupStats{a, b}, names)
	want := []struct {
		value   float64
		samples uint64
	}{
		{20.015, 4},  // nearest rank: the 2nd of 4, as HDR reads its bucket
		{200.063, 6}, // every group's answers, the slowest
		{0.5, 4},     // 2 of 4 requests answered as planned
		{4.0 / 9, 9}, // 4 answers under 50 ms of 9 requests
		{0, 0},       // no server timing was read
		{0, 0},
	}
	for i, w := range want {
		if math.Abs(got[i].Value-w.value) > 0.01 || got[i].Samples != w.samples {
			t.Errorf("threshold %d (%s): value %v over %d, want %v over %d", i, ths[i].Metric, got[i].Value, got[i].Samples, w.value, w.samples)
		}
	}
	if got[0].Line != 3 || got[0].BelowMS != 15 || got[2].Min != 0.5 {
		t.Errorf("limits not carried: %+v", got[0])
	}
}
