package controls

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/store"
)

// Spec is what the checks need from a gate whose pairs have run, with its
// arms still up.
type Spec struct {
	Plan *plan.Plan
	Vars *plan.Vars
	Seed int64
	// Head is the head arm: where its load went, its store database, and
	// its process and commit counter for the idle control.
	Head    Target
	HeadArm run.Arm
	// HeadPhases are the head's measured phases (judge.Input.Head), whose
	// answers the store-write accounting counts.
	HeadPhases []judge.Phase
	// StartVariant starts the head's build again as a third arm with env
	// added to its environment; stop ends it. nil when the gate cannot
	// start one, which refuses a plan with a variant control.
	StartVariant func(ctx context.Context, env []string) (t Target, stop func() error, err error)
	// StoreSettle is how long the store's statistics take to show the
	// last writes; 0 means store.FlushWait.
	StoreSettle time.Duration
	Log         io.Writer
}

// Outcome is what the checks found, as lines for the verdict: failures of
// the head (a regression), controls that did not fail (the gate is blind:
// cannot judge), and notes with every count.
type Outcome struct {
	Failures, CannotJudge, Notes []string
	Counters                     []CounterResult // on the head
	Writes                       []WritesResult
	Idle                         *IdleOutcome
	Variant                      *CounterResult
}

// Apply adds the outcome to a verdict. A head that failed a check is a
// regression even when the load phases could not be judged: a counter
// and the store writes compare with nothing but what was sent, like the
// idle limits, which the judge holds the same way. A control that did not
// fail turns a pass into cannot judge, since a gate that could not catch
// its own planted fault cannot vouch for the head; a regression found
// stays one, as the blind control does not unsay what the gate caught.
func (o Outcome) Apply(v *judge.Verdict) {
	v.Failures = append(v.Failures, o.Failures...)
	v.CannotJudge = append(v.CannotJudge, o.CannotJudge...)
	v.Notes = append(v.Notes, o.Notes...)
	switch {
	case len(o.Failures) > 0:
		v.Code = judge.Regression
	case v.Code == judge.Pass && len(o.CannotJudge) > 0:
		v.Code = judge.CannotJudge
	}
}

// Has reports whether the plan asks for any check this package runs.
func Has(p *plan.Plan) bool {
	return len(p.Counters) > 0 || len(p.StoreWrites) > 0 || len(p.Controls) > 0
}

// NeedsVariant reports whether the plan has a variant control (a third
// arm, with its own store database).
func NeedsVariant(p *plan.Plan) bool {
	_, ok := p.ControlOf(plan.ControlVariant)
	return ok
}

// Run runs the plan's checks in the seed's order: store writes (read
// first, before the counters send more), the counters on the head, the
// idle control, then the variant control. An error means a check could
// not run: the gate cannot judge.
func Run(ctx context.Context, s Spec) (Outcome, error) {
	var o Outcome
	p := s.Plan
	if len(p.StoreWrites) > 0 {
		settle := s.StoreSettle
		if settle <= 0 {
			settle = store.FlushWait
		}
		if err := sleep(ctx, settle); err != nil {
			return o, err
		}
		for _, w := range p.StoreWrites {
			r, err := StoreWrites(ctx, w, Answers(s.HeadPhases, w.Group), s.Head.DSN)
			if err != nil {
				return o, exit.Refuse(err)
			}
			o.Writes = append(o.Writes, r)
			o.add(r.Fail, r.Line())
			logf(s.Log, "%s", r.Line())
		}
	}
	for i, c := range p.Counters {
		r, err := RunCounter(ctx, p, s.Vars, c, s.Head, s.Seed+int64(i)+1)
		if err != nil {
			return o, exit.Refuse(err)
		}
		o.Counters = append(o.Counters, r)
		o.add(r.Fail, r.Line())
		logf(s.Log, "%s", r.Line())
	}
	if c, ok := p.ControlOf(plan.ControlIdle); ok {
		r, err := IdleControl(ctx, c, s.Vars, s.HeadArm, s.Head.DSN, s.Log)
		if err != nil {
			return o, exit.Refuse(err)
		}
		o.Idle = &r
		o.control(r.Caught, r.Line())
		logf(s.Log, "%s", r.Line())
	}
	if c, ok := p.ControlOf(plan.ControlVariant); ok {
		r, err := variant(ctx, s, c)
		if err != nil {
			return o, exit.Refuse(err)
		}
		o.Variant = &r
		o.control(r.Fail, "variant control: "+r.Line())
		logf(s.Log, "variant control: %s", r.Line())
	}
	return o, nil
}

// add records a head check: a failure, or a note with its counts.
func (o *Outcome) add(fail bool, line string) {
	if fail {
		o.Failures = append(o.Failures, line)
	} else {
		o.Notes = append(o.Notes, line)
	}
}

// control records a control: one that failed as it must is a note; one
// that passed means the gate is blind.
func (o *Outcome) control(caught bool, line string) {
	if caught {
		o.Notes = append(o.Notes, line+" (failed, as a control must)")
	} else {
		o.CannotJudge = append(o.CannotJudge, line+": the control passed, so the gate is blind to what it plants on this runner and its verdict cannot be trusted")
	}
}

func variant(ctx context.Context, s Spec, c plan.Control) (r CounterResult, err error) {
	counter, ok := s.Plan.CounterNamed(c.Counter)
	if !ok {
		return r, fmt.Errorf("variant control: no counter %q", c.Counter)
	}
	if s.StartVariant == nil {
		return r, exit.Refusef("%s:%d: this gate cannot start a variant arm (a third copy of the head); run it with perfgate ab or run, or remove the [[control]] of kind variant", s.Plan.Path, c.Line)
	}
	t, stop, err := s.StartVariant(ctx, c.Overrides)
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

// Preflight refuses, before anything starts, a plan whose checks need the
// arms' store on a gate run without one, naming the plan's line.
func Preflight(p *plan.Plan, withStore bool) error {
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
	if c, ok := p.ControlOf(plan.ControlIdle); ok {
		return exit.Refusef("%s:%d: the idle control plants a poller on the head's store, but this gate runs without a store; run it with a store (perfgate ab --store) or remove the control", p.Path, c.Line)
	}
	return nil
}
