package controls

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/run"
)

// IdleOutcome is the idle control: the second plan's idle phase measured
// on the head while the planted poller ran, and whether its limits failed
// (Caught), as they must.
type IdleOutcome struct {
	Plan   string
	Polls  int64
	Result judge.IdleResult
	Caught bool
}

// Line says the control's figures and limits.
func (r IdleOutcome) Line() string {
	return fmt.Sprintf("idle control (%s): with a store poller that never waits (%d polls), the head's store committed %.1f transactions/s (limit under %g) and it used %.2f %% of a core (limit under %.2f %%)",
		r.Plan, r.Polls, r.Result.TxPerSec, r.Result.TxLimit, r.Result.CPU*100, r.Result.CPULimit*100)
}

// IdleControl plants the poller on the head's store database and runs the
// control plan's idle phase beside it.
func IdleControl(ctx context.Context, c plan.Control, v *plan.Vars, head run.Arm, dsn string, log io.Writer) (IdleOutcome, error) {
	out := IdleOutcome{Plan: c.PlanFile}
	if c.Plan == nil {
		return out, fmt.Errorf("idle control: its plan %s was not read", c.PlanFile)
	}
	if dsn == "" || head.Commits == nil {
		return out, fmt.Errorf("idle control: the head has no store to plant the poller on; run the gate with a store or remove the [[control]] of kind idle")
	}
	poller, err := StartPoller(ctx, dsn)
	if err != nil {
		return out, err
	}
	idle, ierr := run.Idle(ctx, run.Config{Plan: c.Plan, Vars: v, Base: head, Head: head, Log: log})
	polls, perr := poller.Stop()
	out.Polls = polls
	if err := errors.Join(ierr, perr); err != nil {
		return out, err
	}
	r := judge.JudgeIdle(*idle)
	out.Result = r
	out.Caught = r.CPUFail || r.TxFail
	return out, nil
}
