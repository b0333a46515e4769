package run

import (
	"context"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
)

// Idle runs the idle phase alone, over c.Head: the idle control's second
// plan beside its planted store poller (internal/controls). c.Base is not
// read.
func Idle(ctx context.Context, c Config) (*judge.Idle, error) { return c.idle(ctx) }

// idle sends nothing for the plan's idle time and reads the head's CPU
// time and store commits around it. The limits are absolute: the base is
// not consulted, so a busy loop both arms share still fails.
func (c *Config) idle(ctx context.Context) (*judge.Idle, error) {
	ab := c.Plan.AB
	c.logf("idle: %s with no requests (head CPU under %.1f%% of a core, store under %g tx/s)",
		ab.Idle, ab.IdleCPU*100, ab.IdleTxPerSec)
	cpu0 := c.Head.Proc.CPU()
	tx0, err := c.commits(ctx, c.Head)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := sleep(ctx, ab.Idle); err != nil {
		return nil, exit.Refusef("idle phase interrupted after %s: %w", time.Since(start).Round(time.Second), err)
	}
	elapsed := time.Since(start)
	cpu := c.Head.Proc.CPU() - cpu0
	idle := &judge.Idle{
		Seconds:  elapsed.Seconds(),
		CPU:      cpu.Seconds() / elapsed.Seconds(),
		CPULimit: ab.IdleCPU,
		TxLimit:  ab.IdleTxPerSec,
	}
	if c.Head.Commits != nil {
		// Counts published within a flush interval of the window's end
		// belong to it; waiting keeps them out of the first pair.
		if err := sleep(ctx, c.storeFlush()); err != nil {
			return nil, exit.Refusef("idle phase interrupted: %w", err)
		}
		tx1, err := c.commits(ctx, c.Head)
		if err != nil {
			return nil, err
		}
		idle.TxPerSec = float64(tx1-tx0) / elapsed.Seconds()
		idle.StoreMeasured = true
	}
	c.logf("idle: head CPU %.2f%% of a core, %.2f tx/s", idle.CPU*100, idle.TxPerSec)
	return idle, nil
}

func (c *Config) commits(ctx context.Context, a Arm) (int64, error) {
	if a.Commits == nil {
		return 0, nil
	}
	n, err := a.Commits(ctx)
	if err != nil {
		return 0, exit.Refusef("reading the %s arm's committed transactions: %w", a.Name, err)
	}
	return n, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
