package pairs

import (
	"context"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
)

// Idle runs the idle phase alone, over the head arm: the idle control's
// second plan beside its planted store poller (internal/controls). It
// needs no base; one given is not judged. It does not wait for the
// counters to settle: the poller is already committing, and what it
// plants is what the window must see.
func Idle(ctx context.Context, c Config) (*judge.Idle, error) {
	if err := c.pick(false); err != nil {
		return nil, err
	}
	if c.Plan == nil || c.head.Proc == nil {
		return nil, fmt.Errorf("run: the idle phase needs a plan and a started head arm")
	}
	return c.idlePhase(ctx, false)
}

// idle is the gate's idle phase: a fixed gate's right after both arms got
// ready, an adaptive gate's after its pairs (idleLast).
func (c *Config) idle(ctx context.Context) (*judge.Idle, error) { return c.idlePhase(ctx, true) }

// idlePhase sends nothing for the plan's idle time and reads the head's CPU
// time and store commits around it. The limits are absolute: the base is
// not consulted, so a busy loop both arms share still fails (the gate's
// phase logs the base's rate beside the head's). With settle,
// the window opens only once the store's counters settled: an arm that
// just got ready may hold its start-up commits unpublished for up to
// armdb.FlushWait (docs/armdb.md), which the window would count as idle
// work.
func (c *Config) idlePhase(ctx context.Context, settle bool) (*judge.Idle, error) {
	ab := c.Plan.AB
	withStore := c.withStore()
	if settle && withStore {
		wait := c.settle()
		c.logf("idle: waiting %s for the store's counters to settle", wait)
		if err := sleep(ctx, wait); err != nil {
			return nil, exit.Refusef("idle phase interrupted while the store's counters settled: %w", err)
		}
	}
	c.logf("idle: %s with no requests (head CPU under %.1f%% of a core, store under %g tx/s)",
		ab.Idle, ab.IdleCPU*100, ab.IdleTxPerSec)
	cpu0 := c.head.Proc.CPU()
	tx0, err := c.readCommits(ctx, c.arms()...)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := sleep(ctx, ab.Idle); err != nil {
		return nil, exit.Refusef("idle phase interrupted after %s: %w", time.Since(start).Round(time.Second), err)
	}
	elapsed := time.Since(start)
	cpu := c.head.Proc.CPU() - cpu0
	idle := &judge.Idle{
		Seconds:  elapsed.Seconds(),
		CPU:      cpu.Seconds() / elapsed.Seconds(),
		CPULimit: ab.IdleCPU,
		TxLimit:  ab.IdleTxPerSec,
	}
	if withStore {
		// Counts published within a flush interval of the window's end
		// belong to it; waiting keeps them out of the first pair.
		if err := sleep(ctx, c.storeFlush()); err != nil {
			return nil, exit.Refusef("idle phase interrupted: %w", err)
		}
		tx1, err := c.readCommits(ctx, c.arms()...)
		if err != nil {
			return nil, err
		}
		idle.TxPerSec = float64(tx1[c.head.Name]-tx0[c.head.Name]) / elapsed.Seconds()
		idle.StoreMeasured = true
		if _, ok := tx1[c.base.Name]; ok && settle && c.base.Proc != nil {
			c.logf("idle: the base's store committed %.2f tx/s (not judged: the limits are the head's)", float64(tx1[c.base.Name]-tx0[c.base.Name])/elapsed.Seconds())
		}
	}
	c.logf("idle: head CPU %.2f%% of a core, %.2f tx/s", idle.CPU*100, idle.TxPerSec)
	return idle, nil
}

// arms are the base (when there is one) and the head.
func (c *Config) arms() []Arm {
	if c.base.Proc == nil {
		return []Arm{c.head}
	}
	return []Arm{c.base, c.head}
}

// readCommits reads the arms' committed transactions, keyed by arm name:
// all in one query through Counters when the gate gave it, else each
// arm's Commits in turn (an arm without a store is left out).
func (c *Config) readCommits(ctx context.Context, arms ...Arm) (map[string]int64, error) {
	if c.Counters != nil {
		m, err := c.Counters(ctx)
		if err != nil {
			return nil, exit.Refusef("reading the arms' committed transactions: %w", err)
		}
		return m, nil
	}
	m := map[string]int64{}
	for _, a := range arms {
		if a.Commits == nil {
			continue
		}
		n, err := c.commits(ctx, a)
		if err != nil {
			return nil, err
		}
		m[a.Name] = n
	}
	return m, nil
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

// withStore says whether the idle phase reads store commits.
func (c *Config) withStore() bool { return c.Counters != nil || c.head.Commits != nil }

// settle is the wait before an idle window for the store's counters.
func (c *Config) settle() time.Duration {
	if c.Settle > 0 {
		return c.Settle
	}
	return armdb.FlushWait
}
