package hostiletest_test

import (
	"context"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load/loadtest"

	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/load/hostiletest"
)

// TestEndlessTargetsEndByTimeouts: every request to a target that never
// ends its answer finishes by the request timeout or a parser bound, every
// arrival is sent on time (the loop is not starved by the stream), and the
// run ends when its window and the last timeout do.
func TestEndlessTargetsEndByTimeouts(t *testing.T) {
	t.Parallel()
	loadtest.BothEngines(t, testEndlessTargetsEndByTimeouts)
}

func testEndlessTargetsEndByTimeouts(t *testing.T) {
	for _, tg := range hostiletest.Endless {
		t.Run(tg.Name, func(t *testing.T) {
			// Each target's run waits on its timeouts or its cancel, not
			// on the CPU: the targets run side by side.
			t.Parallel()
			target := hostiletest.Start(t, tg)
			src := &loadtest.FixedSource{Reqs: []load.Request{{Method: "GET", Path: "/x"}}}
			const timeout = 500 * time.Millisecond
			const window = 500 * time.Millisecond // 20 arrivals at 40/s
			began := time.Now()
			r := loadtest.Run(t, load.Attack{Target: target, Source: src, Groups: []load.Group{{Name: "x", Expect: []int{200}}},
				Pacer: load.ConstantPacer{Freq: 40}, Duration: window, Timeout: timeout})
			took := time.Since(began)
			g, s := r.Groups[0], r.Schedule
			t.Logf("took %v; intended %d sent %d dropped %d late %d; errors %v statuses %v", took.Round(time.Millisecond),
				s.Intended, s.Sent, s.Dropped, s.Late, g.Errors, g.Statuses)
			if took > window+timeout+1500*time.Millisecond {
				t.Errorf("the run took %v: a %v window with a %v request timeout must end by its timeouts", took, window, timeout)
			}
			if r.Canceled {
				t.Errorf("the run reports itself canceled")
			}
			if s.Intended != 20 || s.Sent != 20 || s.Dropped != 0 || g.Requests+s.Canceled != s.Sent {
				t.Fatalf("intended %d sent %d dropped %d requests %d canceled %d: arrivals were not sent while the target streamed",
					s.Intended, s.Sent, s.Dropped, g.Requests, s.Canceled)
			}
			// A parser bound ends a request when the target streams its
			// bytes faster than the timeout runs out; on a crowded
			// machine (the race detector beside other test binaries) a
			// stream of header lines reached 1 MiB too late for 19 of 20.
			// Either end is bounded; nothing else may end them.
			ended := g.Errors[load.KindTimeout]
			if tg.ErrKind != load.KindTimeout {
				ended += g.Errors[tg.ErrKind]
			}
			if g.Expected != 0 || ended != 20 {
				t.Errorf("errors %v, statuses %v; want all 20 requests failed with %q (or, on a slow stream, %q)", g.Errors, g.Statuses, tg.ErrKind, load.KindTimeout)
			}
		})
	}
}

// TestEndlessTargetsCancel: a cancel (what SIGTERM becomes) ends a run
// against any of the endless targets at once, with the 30 s request
// timeout and the 30 s window still far off, and leaves no goroutine
// behind.
func TestEndlessTargetsCancel(t *testing.T) {
	t.Parallel()
	loadtest.BothEngines(t, testEndlessTargetsCancel)
}

func testEndlessTargetsCancel(t *testing.T) {
	for _, tg := range hostiletest.Endless {
		t.Run(tg.Name, func(t *testing.T) {
			// Each target's run waits on its timeouts or its cancel, not
			// on the CPU: the targets run side by side.
			t.Parallel()
			target := hostiletest.Start(t, tg)
			src := &loadtest.FixedSource{Reqs: []load.Request{{Method: "GET", Path: "/x"}}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			const after = 700 * time.Millisecond
			var canceled time.Time
			stall := loadtest.WatchStalls(t)
			time.AfterFunc(after, func() { canceled = time.Now(); cancel() })
			// The run's goroutines carry this test's label (goroutines
			// inherit the labels of the one that starts them), so the
			// check below counts this run's alone, beside parallel tests.
			var r *load.Result
			var err error
			pprof.Do(ctx, pprof.Labels("test", t.Name()), func(ctx context.Context) {
				r, err = load.Run(ctx, load.Attack{Target: target, Source: src, Groups: []load.Group{{Name: "x", Expect: []int{200}}},
					Pacer: load.ConstantPacer{Freq: 20}, Duration: 30 * time.Second, Engine: loadtest.EngineOf(t)})
			})
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(canceled)
			s := r.Schedule
			t.Logf("returned %v after the cancel; intended %d sent %d dropped %d canceled %d", took.Round(time.Millisecond),
				s.Intended, s.Sent, s.Dropped, s.Canceled)
			// A run deaf to the cancel would wait 30 s for its timeout;
			// one that hears it returns in milliseconds. 2 s between them
			// is headroom for a crowded machine's scheduler (a loaded
			// 2-core runner delays a wake by hundreds of ms), where half
			// a second was a coin toss.
			if took > 2*time.Second {
				t.Errorf("returned %v after the cancel, want at once (the timeout is 30 s off)", took)
			}
			if !r.Canceled || s.Sent+s.Dropped != s.Intended || r.Groups[0].Requests+s.Canceled != s.Sent {
				t.Errorf("canceled %v, intended %d sent %d dropped %d requests %d canceled %d", r.Canceled, s.Intended, s.Sent,
					s.Dropped, r.Groups[0].Requests, s.Canceled)
			}
			// 700 ms at 20/s: 14 or 15 arrivals were due. Those due by
			// 400 ms, 300 ms before the cancel, were all sent: a stream
			// that held the schedule up would have left all but the first
			// unsent. The later ones may meet the cancel on their way to
			// a connection, the more of them the further a crowded
			// machine's scheduler lags: under the race detector beside the
			// suite's other binaries 4 were (11 sent of 15), so the ones
			// due in the last 300 ms are not counted; nor, when the host
			// stalled the whole process longer than that (the timer
			// probe's worst oversleep), those due within the stall and
			// an arrival interval of the cancel: in the short tier
			// beside 40 other binaries 7 met it (8 sent of 15).
			unseen := max(300*time.Millisecond, stall()+50*time.Millisecond)
			var due uint64
			if unseen < after {
				due = uint64((after-unseen)/(50*time.Millisecond)) + 1
			}
			if s.Intended < 13 || s.Sent < min(due, 9) || s.Sent < 1 {
				t.Errorf("%d arrivals due, %d sent, %d dropped in 700 ms at 20/s, the %d due more than %s before the cancel not all sent: the stream held the schedule up",
					s.Intended, s.Sent, s.Dropped, due, unseen)
			}
			// The engine's goroutines are gone (the target's own, which
			// carry no label, end with its connections, which the engine
			// closed).
			deadline := time.Now().Add(2 * time.Second)
			for loadtest.Labelled(t, t.Name()) > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := loadtest.Labelled(t, t.Name()); n > 0 {
				t.Errorf("%d of the run's goroutines are left after it returned", n)
			}
		})
	}
}

// Labelled sees the goroutines a labelled function started, and only
// while they run: the leak check above is not blind.
func TestLabelledCountsARunsGoroutines(t *testing.T) {
	stop := make(chan struct{})
	pprof.Do(context.Background(), pprof.Labels("test", t.Name()), func(context.Context) {
		for range 3 {
			go func() { <-stop }()
		}
	})
	if n := loadtest.Labelled(t, t.Name()); n != 3 {
		t.Fatalf("labelled counts %d of the 3 goroutines started under the label", n)
	}
	close(stop)
	deadline := time.Now().Add(5 * time.Second)
	for loadtest.Labelled(t, t.Name()) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := loadtest.Labelled(t, t.Name()); n != 0 {
		t.Fatalf("labelled counts %d after the goroutines ended", n)
	}
}
