package load

import (
	"slices"
	"testing"
	"time"
)

// dueTimes lists the offsets at which a pacer's arrivals fall due, as the
// schedule (schedule.go's next) walks them, up to end.
func dueTimes(p Pacer, end time.Duration) []time.Duration {
	var out []time.Duration
	var due time.Duration
	for n := uint64(0); ; n++ {
		wait, stop := p.Pace(due, n)
		if stop {
			return out
		}
		if wait > 0 {
			due += wait
		}
		if due >= end {
			return out
		}
		out = append(out, due)
	}
}

// TestShardsSplitTheWholeSchedule: four shards of an open-loop ramp send
// between them every arrival of the whole schedule, each once and at its
// own time, shard i the arrivals i, i+4, i+8 and so on. The merged report
// (experiment.Merge) can equal one process's only if they do; this is the
// timing-free half of the measured shard-merge test (internal/cli).
func TestShardsSplitTheWholeSchedule(t *testing.T) {
	// The measured test's plan: 100/s through a 200 ms warm-up and 1 s,
	// then 200/s through another 200 ms warm-up and 1 s.
	rs := []RateStage{{Target: 100}, {Target: 100, Duration: 200 * time.Millisecond}, {Target: 100, Duration: time.Second},
		{Target: 200}, {Target: 200, Duration: 200 * time.Millisecond}, {Target: 200, Duration: time.Second}}
	const end = 2400 * time.Millisecond
	whole := dueTimes(NewStagedPacer(100, rs), end)
	if len(whole) < 300 {
		t.Fatalf("the whole schedule has %d arrivals, want about 360", len(whole))
	}
	for _, of := range []int{1, 3, 4} {
		var union []time.Duration
		for i := range of {
			mine := dueTimes(shardPacer(NewStagedPacer(100, rs), Shard{Index: i, Of: of}), end)
			for n, at := range mine {
				if k := i + n*of; k >= len(whole) || at != whole[k] {
					t.Fatalf("shard %d/%d: its arrival %d due at %s, want the whole schedule's arrival %d", i, of, n, at, k)
				}
			}
			union = append(union, mine...)
		}
		slices.Sort(union)
		if !slices.Equal(union, whole) {
			t.Errorf("%d shards sent %d arrivals between them, the whole schedule %d", of, len(union), len(whole))
		}
	}
}
