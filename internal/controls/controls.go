package controls

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/pairs"
	"github.com/perfgate/perfgate/internal/plan"
)

// Spec is what the checks need from a gate whose pairs have run, with its
// arms still up.
type Spec struct {
	// Plan is the main plan: its groups, counters and store writes.
	Plan *plan.Plan
	// Controls are the gate's controls: the gate file's [[control]]
	// tables under perfgate run, the plan's under perfgate ab.
	Controls plan.Controls
	Vars     *plan.Vars
	Seed     int64
	// Head is the head arm: where its load went, its store database, and
	// its process and commit counter for the idle control.
	Head    Target
	HeadArm pairs.Arm
	// HeadPhases are the head's measured phases (judge.Input.Head), whose
	// answers the store-write accounting counts.
	HeadPhases []judge.Phase
	// StartVariant starts the variant arm, the head's build with the
	// control's overrides, as a third process beside the head; stop ends
	// it. nil when the gate has no variant arm, which refuses a variant
	// control.
	StartVariant func(ctx context.Context) (t Target, stop func() error, err error)
	// StoreSettle is how long the store's statistics take to show the
	// last writes; 0 means armdb.FlushWait.
	StoreSettle time.Duration
	Log         io.Writer
}

// Outcome is what the checks found, as lines for the verdict: failures of
// the head (a regression), controls that did not fail (the gate is blind:
// cannot judge), and notes with every count, beside the counts
// themselves. It is judge.Controls, which the report keeps for perfgate
// compare; judge.Verdict.AddChecks adds its lines to a verdict.
type Outcome = judge.Controls

// Has reports whether the plan and the controls ask for any check this
// package runs.
func Has(p *plan.Plan, cs plan.Controls) bool {
	return len(p.Counters) > 0 || len(p.StoreWrites) > 0 || len(cs) > 0
}

// Run runs the checks in FerroFED's gate's order: store writes (read
// first, before the counters send more), the counters on the head, the
// idle control, then the variant control. An error means a check could
// not run: the gate cannot judge.
func Run(ctx context.Context, s Spec) (Outcome, error) {
	var o Outcome
	p := s.Plan
	if len(p.StoreWrites) > 0 {
		settle := s.StoreSettle
		if settle <= 0 {
			settle = armdb.FlushWait
		}
		if err := sleep(ctx, settle); err != nil {
			return o, err
		}
		for _, w := range p.StoreWrites {
			r, err := StoreWrites(ctx, w, Answers(s.HeadPhases, w.Group), s.Head.DSN)
			if err != nil {
				// A table the store does not have is fixed on this line.
				return o, exit.Refuse(fmt.Errorf("%s:%d: [[store_writes]]: %w", p.Path, w.Line, err))
			}
			o.Writes = append(o.Writes, r)
			o.AddCheck(r.Fail, r.Line())
			logf(s.Log, "%s", r.Line())
		}
	}
	for i, c := range p.Counters {
		r, err := RunCounter(ctx, p, s.Vars, c, s.Head, s.Seed+int64(i)+1)
		if err != nil {
			return o, exit.Refuse(err)
		}
		o.Counters = append(o.Counters, r)
		o.AddCheck(r.Fail, r.Line())
		logf(s.Log, "%s", r.Line())
	}
	if c, ok := s.Controls.Of(plan.ControlIdle); ok {
		r, err := IdleControl(ctx, c, s.Vars, s.HeadArm, s.Head.DSN, s.Log)
		if err != nil {
			return o, exit.Refuse(err)
		}
		o.Idle = &r
		o.AddControl(r.Caught, r.Line())
		logf(s.Log, "%s", r.Line())
	}
	if c, ok := s.Controls.Of(plan.ControlVariant); ok {
		r, err := variant(ctx, s, c)
		if err != nil {
			return o, exit.Refuse(err)
		}
		o.Variant = &r
		o.AddControl(r.Fail, "variant control: "+r.Line())
		logf(s.Log, "variant control: %s", r.Line())
	}
	return o, nil
}

func variant(ctx context.Context, s Spec, c plan.Control) (r CounterResult, err error) {
	counter, ok := s.Plan.CounterNamed(c.Counter)
	if !ok {
		return r, exit.Refusef("%s:%d: the variant control's counter %q is not declared in %s", c.File, c.CounterLine, c.Counter, s.Plan.Path)
	}
	if s.StartVariant == nil {
		return r, exit.Refusef("%s:%d: this gate cannot start a variant arm (a third copy of the head); run it with perfgate ab or run, or remove the [[control]] of kind variant", c.File, c.Line)
	}
	t, stop, err := s.StartVariant(ctx)
	if err != nil {
		return r, fmt.Errorf("variant control: starting the head with %v: %w", c.Overrides, err)
	}
	defer func() {
		if serr := stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("variant control: stopping the variant arm: %w", serr))
		}
	}()
	return RunCounter(ctx, s.Plan, s.Vars, counter, t, s.Seed+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return exit.Refusef("the after-run checks were interrupted: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

func logf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", a...)
	}
}

// Preflight refuses, before anything starts, a plan or a control that
// needs the arms' store on a gate run without one, naming its line.
func Preflight(p *plan.Plan, cs plan.Controls, withStore bool) error {
	if withStore {
		return nil
	}
	if len(p.StoreWrites) > 0 {
		w := p.StoreWrites[0]
		return exit.Refusef("%s:%d: [[store_writes]] counts the head's store's writes, but this gate runs without a store; run it with a store (perfgate ab --store) or remove the table", p.Path, w.Line)
	}
	for _, c := range p.Counters {
		if c.SQL != "" {
			return exit.Refusef("%s:%d: counter %s reads sql on the arm's store, but this gate runs without a store; run it with a store (perfgate ab --store) or read url = \"...\"", p.Path, c.Line, c.Name)
		}
	}
	if c, ok := cs.Of(plan.ControlIdle); ok {
		return exit.Refusef("%s:%d: the idle control plants a poller on the head's store, but this gate runs without a store; run it with a store (perfgate ab --store) or remove the control", c.File, c.Line)
	}
	return nil
}
