package load_test

import (
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

func TestNearestRank(t *testing.T) {
	h := load.NewHistogram()
	for v := int64(100); v <= 1000; v += 100 {
		h.RecordValue(v)
	}
	us := time.Microsecond
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{
		{0, 100 * us}, {10, 100 * us}, {10.01, 200 * us},
		{21, 300 * us}, // hdrhistogram's rounded rank says 200
		{50, 500 * us}, {90, 900 * us}, {99, 1000 * us}, {100, 1000 * us}, {150, 1000 * us},
	} {
		if got := load.NearestRank(h, tc.p); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := load.NearestRank(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %v, want 0", got)
	}
}

func TestFractionUnder(t *testing.T) {
	g := &load.GroupStats{Latency: load.NewHistogram()}
	for v := int64(100); v <= 1000; v += 100 {
		g.Latency.RecordValue(v)
	}
	us := time.Microsecond
	for _, tc := range []struct {
		d    time.Duration
		want float64
	}{{100 * us, 0}, {101 * us, 0.1}, {500 * us, 0.4}, {500*us + 1, 0.5}, {time.Second, 1}, {0, 0}} {
		if got := g.FractionUnder(tc.d); got != tc.want {
			t.Errorf("FractionUnder(%v) = %v, want %v", tc.d, got, tc.want)
		}
	}
}

func TestZeroValuesWork(t *testing.T) {
	var g load.GroupStats
	if g.Percentile(99) != 0 || g.FractionUnder(time.Second) != 0 || g.SuccessRatio() != 0 {
		t.Errorf("zero GroupStats: p99 %v, under %v, success %v; want all 0", g.Percentile(99), g.FractionUnder(time.Second), g.SuccessRatio())
	}
	m := load.Merge([]*load.GroupStats{&g, nil, {Name: "x", Requests: 3, Expected: 2, Statuses: map[int]uint64{200: 2, 500: 1}}})
	if m.Requests != 3 || m.Statuses[500] != 1 || m.SuccessRatio() != 2.0/3 {
		t.Errorf("merge = %+v", m)
	}
	if m.Name != "all" {
		t.Errorf("merged name of %q and %q = %q, want all", "", "x", m.Name)
	}
}
