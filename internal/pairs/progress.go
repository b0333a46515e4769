package pairs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

// progressCell keeps an attack's latest snapshot for the progress line.
type progressCell struct {
	mu   sync.Mutex
	snap load.Snapshot
	ok   bool
}

func (p *progressCell) set(s load.Snapshot) {
	p.mu.Lock()
	p.snap, p.ok = s, true
	p.mu.Unlock()
}

func (p *progressCell) get() (load.Snapshot, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.snap, p.ok
}

// showProgress rewrites one terminal line a second with both arms' figures
// until the returned func is called.
func (c *Config) showProgress(ctx context.Context, pair int, start time.Time, runs []*armRun) (stop func()) {
	if c.Progress == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				fmt.Fprint(c.Progress, "\r\033[K")
				return
			case <-t.C:
			}
			line := fmt.Sprintf("pair %d/%d %5.0fs", pair+1, c.Plan.AB.Pairs, time.Since(start).Seconds())
			for _, r := range runs {
				if s, ok := r.progress.get(); ok {
					stage := "measure"
					if s.Warmup {
						stage = "warm-up"
					}
					line += fmt.Sprintf(" | %s %s %.0f/s p50 %s p99 %s err %d", r.arm.Name, stage, s.Rate,
						s.P50.Round(10*time.Microsecond), s.P99.Round(10*time.Microsecond), s.Failures)
				}
			}
			fmt.Fprintf(c.Progress, "\r\033[K%s", line)
		}
	}()
	return func() { cancel(); <-done }
}
