package load_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/load/hostiletest"
)

// TestEndlessTargetsEndByTimeouts: every request to a target that never
// ends its answer finishes by the request timeout or a parser bound, every
// arrival is sent on time (the loop is not starved by the stream), and the
// run ends when its window and the last timeout do.
func TestEndlessTargetsEndByTimeouts(t *testing.T) { bothEngines(t, testEndlessTargetsEndByTimeouts) }

func testEndlessTargetsEndByTimeouts(t *testing.T) {
	for _, tg := range hostiletest.Endless {
		t.Run(tg.Name, func(t *testing.T) {
			target := hostiletest.Start(t, tg)
			src := &fixedSource{reqs: []load.Request{{Method: "GET", Path: "/x"}}}
			const timeout = 500 * time.Millisecond
			began := time.Now()
			r := run(t, load.Attack{Target: target, Source: src, Groups: []load.Group{{Name: "x", Expect: []int{200}}},
				Pacer: load.ConstantPacer{Freq: 20}, Duration: time.Second, Timeout: timeout})
			took := time.Since(began)
			g, s := r.Groups[0], r.Schedule
			t.Logf("took %v; intended %d sent %d dropped %d late %d; errors %v statuses %v", took.Round(time.Millisecond),
				s.Intended, s.Sent, s.Dropped, s.Late, g.Errors, g.Statuses)
			if took > time.Second+timeout+1500*time.Millisecond {
				t.Errorf("the run took %v: a 1 s window with a %v request timeout must end by its timeouts", took, timeout)
			}
			if r.Canceled {
				t.Errorf("the run reports itself canceled")
			}
			if s.Intended != 20 || s.Sent != 20 || s.Dropped != 0 || g.Requests+s.Canceled != s.Sent {
				t.Fatalf("intended %d sent %d dropped %d requests %d canceled %d: arrivals were not sent while the target streamed",
					s.Intended, s.Sent, s.Dropped, g.Requests, s.Canceled)
			}
			if g.Expected != 0 || g.Errors[tg.ErrKind] != 20 {
				t.Errorf("errors %v, statuses %v; want all 20 requests failed with %q", g.Errors, g.Statuses, tg.ErrKind)
			}
		})
	}
}

// TestEndlessTargetsCancel: a cancel (what SIGTERM becomes) ends a run
// against any of the endless targets within a fraction of a second, with a
// long request timeout still far off, and leaves no goroutine behind.
func TestEndlessTargetsCancel(t *testing.T) { bothEngines(t, testEndlessTargetsCancel) }

func testEndlessTargetsCancel(t *testing.T) {
	for _, tg := range hostiletest.Endless {
		t.Run(tg.Name, func(t *testing.T) {
			target := hostiletest.Start(t, tg)
			before := runtime.NumGoroutine()
			src := &fixedSource{reqs: []load.Request{{Method: "GET", Path: "/x"}}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			const after = 700 * time.Millisecond
			var canceled time.Time
			time.AfterFunc(after, func() { canceled = time.Now(); cancel() })
			r, err := load.Run(ctx, load.Attack{Target: target, Source: src, Groups: []load.Group{{Name: "x", Expect: []int{200}}},
				Pacer: load.ConstantPacer{Freq: 20}, Duration: 30 * time.Second, Engine: engine})
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(canceled)
			s := r.Schedule
			t.Logf("returned %v after the cancel; intended %d sent %d dropped %d canceled %d", took.Round(time.Millisecond),
				s.Intended, s.Sent, s.Dropped, s.Canceled)
			if took > 500*time.Millisecond {
				t.Errorf("returned %v after the cancel, want well under a second", took)
			}
			if !r.Canceled || s.Sent+s.Dropped != s.Intended || r.Groups[0].Requests+s.Canceled != s.Sent {
				t.Errorf("canceled %v, intended %d sent %d dropped %d requests %d canceled %d", r.Canceled, s.Intended, s.Sent,
					s.Dropped, r.Groups[0].Requests, s.Canceled)
			}
			// 700 ms at 20/s: 14 or 15 arrivals were due, each sent but
			// the one the cancel may cross on its way to a connection.
			if s.Intended < 13 || s.Dropped > 1 {
				t.Errorf("%d arrivals due, %d dropped in 700 ms at 20/s: the stream held the schedule up", s.Intended, s.Dropped)
			}
			// The engine's goroutines are gone (the target's own end
			// with its connections, which the engine closed).
			deadline := time.Now().Add(2 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before {
				t.Errorf("%d goroutines after the run, %d before", n, before)
			}
		})
	}
}
