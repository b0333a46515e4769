package load_test

import (
	"math"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

// schedule lists the intended times a pacer yields, the way the attack
// walks it: each call gets the previous arrival's intended time.
func schedule(p load.Pacer, limit time.Duration) []time.Duration {
	var out []time.Duration
	var due time.Duration
	for n := uint64(0); n < 1e6; n++ {
		wait, stop := p.Pace(due, n)
		if stop {
			break
		}
		if wait > 0 {
			due += wait
		}
		if due >= limit {
			break
		}
		out = append(out, due)
	}
	return out
}

func countIn(ts []time.Duration, from, to time.Duration) int {
	n := 0
	for _, t := range ts {
		if t >= from && t < to {
			n++
		}
	}
	return n
}

func TestPacers(t *testing.T) {
	s := time.Second
	tests := []struct {
		name   string
		pacer  load.Pacer
		limit  time.Duration
		want   int              // arrivals in total
		window [2]time.Duration // and in this window
		inWin  int
	}{
		{"constant 100/s", load.ConstantPacer{Freq: 100}, 10 * s, 1000, [2]time.Duration{2 * s, 3 * s}, 100},
		{"constant 3/s", load.ConstantPacer{Freq: 3}, 10 * s, 30, [2]time.Duration{0, s}, 3},
		{"zero rate sends nothing", load.ConstantPacer{Freq: 0}, 10 * s, 0, [2]time.Duration{0, s}, 0},
		// 0 -> 100/s over 10 s: 500 arrivals; the first 5 s carry a quarter.
		{"ramp up", load.NewStagedPacer(0, []load.RateStage{{Target: 100, Duration: 10 * s}}), time.Hour, 500, [2]time.Duration{0, 5 * s}, 125},
		// 100 -> 0/s over 10 s: the first 5 s carry three quarters.
		{"ramp down", load.NewStagedPacer(100, []load.RateStage{{Target: 0, Duration: 10 * s}}), time.Hour, 500, [2]time.Duration{0, 5 * s}, 375},
		// k6-like ramp, plateau, spike, recovery.
		{"ramp plateau spike", load.NewStagedPacer(10, []load.RateStage{
			{Target: 50, Duration: 4 * s}, {Target: 50, Duration: 10 * s}, {Target: 100, Duration: 0}, {Target: 100, Duration: 2 * s}, {Target: 0, Duration: 2 * s},
		}), time.Hour, 120 + 500 + 200 + 100, [2]time.Duration{4 * s, 14 * s}, 500},
		{"gap at zero rate", load.NewStagedPacer(0, []load.RateStage{{Target: 0, Duration: 5 * s}, {Target: 10, Duration: 0}, {Target: 10, Duration: 2 * s}}),
			time.Hour, 20, [2]time.Duration{0, 5 * s}, 0},
		{"func adapter", load.PacerFunc(func(el time.Duration, hits uint64) (time.Duration, bool) {
			return time.Duration(hits)*250*time.Millisecond - el, hits >= 8
		}), time.Hour, 8, [2]time.Duration{0, s}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := schedule(tc.pacer, tc.limit)
			// One arrival of slack for the boundary of a fractional count.
			if d := len(ts) - tc.want; d < -1 || d > 1 {
				t.Errorf("arrivals = %d, want %d", len(ts), tc.want)
			}
			if got := countIn(ts, tc.window[0], tc.window[1]); math.Abs(float64(got-tc.inWin)) > 1 {
				t.Errorf("arrivals in [%v, %v) = %d, want %d", tc.window[0], tc.window[1], got, tc.inWin)
			}
			for i := 1; i < len(ts); i++ {
				if ts[i] < ts[i-1] {
					t.Fatalf("arrival %d at %v before arrival %d at %v", i, ts[i], i-1, ts[i-1])
				}
			}
		})
	}
}

func TestStagedPacerRate(t *testing.T) {
	p := load.NewStagedPacer(0, []load.RateStage{{Target: 100, Duration: 10 * time.Second}, {Target: 100, Duration: 5 * time.Second}})
	for _, tc := range []struct {
		at   time.Duration
		want float64
	}{{0, 0}, {5 * time.Second, 50}, {12 * time.Second, 100}, {20 * time.Second, 0}} {
		if got := p.Rate(tc.at); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Rate(%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
	if p.Duration() != 15*time.Second {
		t.Errorf("Duration = %v, want 15s", p.Duration())
	}
}
