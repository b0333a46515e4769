package load

import (
	"strings"
	"testing"
	"time"
)

// TestOriginReadsTheMonotonicClock: a run's waits and lateness are measured
// against its origin, so the origin must carry the monotonic clock's
// reading even when the Start came as text (the shards' --start). Without
// it, a step of the wall clock made a sharded experiment's five processes
// take every arrival for late and send nothing (CI, 2026-12-07).
func TestOriginReadsTheMonotonicClock(t *testing.T) {
	const mono = "m=" // how Time.String shows a monotonic reading
	text := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	parsed, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(parsed.String(), mono) {
		t.Fatalf("a parsed time %s has a monotonic reading; this test no longer tests anything", parsed)
	}
	for _, tc := range []struct {
		name   string
		a      Attack
		lead   time.Duration
		within [2]time.Duration // the origin's wall clock from just before the call
	}{
		{"a start given as text", Attack{Start: parsed}, 0, [2]time.Duration{2 * time.Second, 3 * time.Second}},
		{"with an offset", Attack{Start: parsed, Offset: 500 * time.Millisecond}, 0, [2]time.Duration{2500 * time.Millisecond, 3500 * time.Millisecond}},
		{"no start", Attack{}, 5 * time.Millisecond, [2]time.Duration{5 * time.Millisecond, 100 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := time.Now()
			got := tc.a.origin(tc.lead)
			if !strings.Contains(got.String(), mono) {
				t.Errorf("origin %s has no monotonic reading: its waits would follow the wall clock's steps", got)
			}
			if d := got.Round(0).Sub(before.Round(0)); d < tc.within[0] || d > tc.within[1] {
				t.Errorf("origin is %s from now on the wall clock, want %s to %s", d, tc.within[0], tc.within[1])
			}
		})
	}
	// A Start made from time.Now (the paired arms' shared origin) comes
	// back as the same instant on the monotonic clock.
	start := time.Now().Add(time.Second)
	if got := (&Attack{Start: start}).origin(0); got.Sub(start) != 0 {
		t.Errorf("origin of a monotonic start moved by %s", got.Sub(start))
	}
}
