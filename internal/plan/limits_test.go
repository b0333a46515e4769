package plan_test

import (
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
)

// A plan's thresholds reach the judge with every field they were written
// with, from the plan file itself.
func TestLimits(t *testing.T) {
	const src = `[[group]]
name = "search"
path = "/search"
expect = 200

[[threshold]]
group = "search"
metric = "p90"
below = "150ms"

[[threshold]]
metric = "success"
min = 99.5
`
	p, err := plan.Parse("plan.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := plan.Limits(p.Thresholds)
	want := []judge.Limit{
		{Group: "search", Metric: "p90", Below: 150 * time.Millisecond, Side: "client", Line: 6},
		{Metric: judge.ThresholdSuccess, Min: 0.995, Side: "client", Line: 11},
	}
	if len(got) != len(want) {
		t.Fatalf("Limits = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("limit %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
