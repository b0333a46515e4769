package exampleservice

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// startBackground starts the workers the knobs ask for; each ends with ctx.
// A worker that fails for good sends its error on errc, which stops the
// service (a dead poller must not look like an idle one).
func (s *server) startBackground(ctx context.Context, wg *sync.WaitGroup, errc chan<- error) {
	if s.c.idleBusy > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); s.busyWorker(ctx) }()
	}
	if s.c.stall > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); s.staller(ctx) }()
	}
	if s.c.idleCommits != 0 && s.st != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.poller(ctx); err != nil {
				select {
				case errc <- err:
				default:
				}
			}
		}()
	}
}

// busyWorker burns --idle-busy of one core: in every 100 ms it spends that
// share of CPU time (its own thread's, so a busy machine delays the burn
// rather than shrinking it), then sleeps out the rest of the period.
func (s *server) busyWorker(ctx context.Context) {
	runtime.LockOSThread() // the thread's CPU clock below must stay this goroutine's
	defer runtime.UnlockOSThread()
	const period = 100 * time.Millisecond
	busy := time.Duration(float64(period) * s.c.idleBusy)
	for ctx.Err() == nil {
		start := time.Now()
		end := threadCPU() + busy
		for threadCPU() < end && ctx.Err() == nil {
			s.burn(100)
		}
		if rest := period - time.Since(start); rest > 0 && !sleep(ctx, rest) {
			return
		}
	}
}

// threadCPU is the CPU time of the calling thread.
func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// staller opens a stall of --stall every --stall-every.
func (s *server) staller(ctx context.Context) {
	t := time.NewTicker(s.c.stallEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.stallUntil.Store(int64(now.Add(s.c.stall).Sub(s.started)))
		}
	}
}

// poller is the outbox sender: it commits --idle-commits transactions a
// second, or, at -1, one after another without waiting (the busy-loop
// outbox the idle phase exists to catch).
func (s *server) poller(ctx context.Context) error {
	var interval time.Duration
	if s.c.idleCommits > 0 {
		interval = time.Duration(float64(time.Second) / s.c.idleCommits)
	}
	next := time.Now()
	failures := 0
	for ctx.Err() == nil {
		if err := s.st.pollOutbox(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			failures++
			if failures >= 10 {
				return fmt.Errorf("exampled: the outbox poller failed 10 times in a row: %w", err)
			}
			if !sleep(ctx, 100*time.Millisecond) {
				return nil
			}
			continue
		}
		failures = 0
		if interval > 0 {
			next = next.Add(interval)
			if d := time.Until(next); d > 0 {
				if !sleep(ctx, d) {
					return nil
				}
			} else {
				next = time.Now()
			}
		}
	}
	return nil
}
