package pairs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
)

// armRun is one arm's side of a pair: its attack and what its process did
// over the measured window.
type armRun struct {
	arm      Arm
	offset   time.Duration
	res      *load.Result
	err      error
	cpu0     time.Duration
	cpu      time.Duration
	peak     int64
	tx0, tx  int64
	groups   []load.Group
	src      load.Source
	progress progressCell
}

// pairOut is what one pair gives the gate beyond its two phases: the
// head's whole result, for the thresholds, and the data sources' notes.
type pairOut struct {
	head  *load.Result
	notes []string
}

// noter is a request source that can say a data file ran out and repeated
// values (a primed cache); plan.RequestSource is one.
type noter interface{ Notes() []string }

// pair drives both arms at once from one schedule: the same requests, the
// leading arm's arrivals on the grid and the other's half an interval
// after, so neither always finds the runner fresh. The lead alternates.
func (c *Config) pair(ctx context.Context, i int) (base, head judge.Phase, out pairOut, err error) {
	ab := c.Plan.AB
	lead, follow := c.base, c.head
	if i%2 == 1 {
		lead, follow = c.head, c.base
	}
	interval := time.Duration(float64(time.Second) / ab.Rate)
	runs := []*armRun{{arm: lead}, {arm: follow, offset: interval / 2}}
	start := time.Now().Add(200 * time.Millisecond)
	c.logf("pair %d/%d: %s leads; %s warm-up, %s measured at %g arrivals/s to each arm",
		i+1, ab.Pairs, lead.Name, ab.Warmup, ab.Measure, ab.Rate)

	attacks := make([]load.Attack, len(runs))
	for k, r := range runs {
		src, groups, err := c.Plan.PairSource(c.Vars, c.Seed, i, ab.Pairs)
		if err != nil {
			return base, head, out, err
		}
		// Groups with a dpop_key_file take proofs from pools that sign
		// ahead of the schedule (internal/dpop), stopped with the pair.
		src, stopProofs, err := c.Plan.DPoP(ctx, src, c.Vars, r.arm.URL)
		if err != nil {
			return base, head, out, err
		}
		defer stopProofs()
		r.groups, r.src = groups, src
		attacks[k] = load.Attack{
			Target:       r.arm.URL,
			CAFile:       r.arm.CAFile,
			Source:       src,
			Groups:       groups,
			Pacer:        load.ConstantPacer{Freq: ab.Rate},
			Warmup:       ab.Warmup,
			Duration:     ab.Measure,
			Start:        start,
			Offset:       r.offset,
			ServerTiming: c.Plan.ServerTiming,
			Progress:     r.progress.set,
			Redact:       c.Vars.Redactor(), // a wrong answer's body may hold a plan secret
		}
	}

	// A window that cannot be read (the store went away) ends the pair's
	// attacks at once rather than after their full window.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for k, r := range runs {
		wg.Add(1)
		go func(r *armRun, a load.Attack) {
			defer wg.Done()
			r.res, r.err = load.Run(ctx, a)
		}(r, attacks[k])
	}
	stopProgress := c.showProgress(ctx, i, start, runs)
	// The process figures cover the measured window alone, like the load's.
	windowErr := c.openWindow(ctx, start.Add(ab.Warmup), runs)
	if windowErr != nil {
		cancel()
	}
	wg.Wait()
	stopProgress()
	if windowErr != nil {
		return base, head, out, windowErr
	}
	for _, r := range runs {
		if r.err != nil {
			return base, head, out, exit.Refusef("pair %d, %s arm: %w", i+1, r.arm.Name, r.err)
		}
		if r.res.Canceled {
			return base, head, out, exit.Refusef("pair %d was interrupted after %s of its measured window; a cut phase is not judged: %w",
				i+1, r.res.Measured.Round(time.Second), context.Cause(ctx))
		}
	}
	if err := c.closeWindow(ctx, runs); err != nil {
		return base, head, out, err
	}
	withStore := c.base.Commits != nil && c.head.Commits != nil
	for _, r := range runs {
		ph := phaseFigures(i, lead.Name, r, withStore)
		if r.arm.Name == c.base.Name {
			base = ph
		} else {
			head = ph
			out.head = r.res
		}
		if n, ok := r.src.(noter); ok {
			for _, note := range n.Notes() {
				out.notes = append(out.notes, fmt.Sprintf("pair %d, %s: %s", i+1, r.arm.Name, note))
			}
		}
	}
	c.logf("pair %d/%d: base p50 %s, head p50 %s", i+1, ab.Pairs, total(runs, c.base.Name), total(runs, c.head.Name))
	return base, head, out, nil
}

func (c *Config) openWindow(ctx context.Context, at time.Time, runs []*armRun) error {
	if err := sleep(ctx, time.Until(at)); err != nil {
		return exit.Refusef("pair interrupted during its warm-up: %w", err)
	}
	for _, r := range runs {
		r.cpu0 = r.arm.Proc.CPU()
		r.arm.Proc.ResetPeak()
	}
	// Both arms' counters at one instant (idle.go).
	tx, err := c.readCommits(ctx, runs[0].arm, runs[1].arm)
	if err != nil {
		return err
	}
	for _, r := range runs {
		r.tx0 = tx[r.arm.Name]
	}
	return nil
}

func (c *Config) closeWindow(ctx context.Context, runs []*armRun) error {
	for _, r := range runs {
		r.cpu = r.arm.Proc.CPU() - r.cpu0
		r.peak = r.arm.Proc.Peak()
	}
	if runs[0].arm.Commits == nil && runs[1].arm.Commits == nil {
		return nil
	}
	if err := sleep(ctx, c.storeFlush()); err != nil {
		return exit.Refusef("pair interrupted while reading the stores: %w", err)
	}
	tx, err := c.readCommits(ctx, runs[0].arm, runs[1].arm)
	if err != nil {
		return err
	}
	for _, r := range runs {
		r.tx = tx[r.arm.Name] - r.tx0
	}
	return nil
}

func total(runs []*armRun, name string) string {
	for _, r := range runs {
		if r.arm.Name == name && r.res != nil {
			return fmt.Sprint(r.res.Total().Percentile(50))
		}
	}
	return "-"
}
