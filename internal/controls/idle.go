package controls

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/pairs"
	"github.com/perfgate/perfgate/internal/pgdsn"
	"github.com/perfgate/perfgate/internal/plan"
)

// IdleOutcome is the idle control's figures and whether its limits
// failed, as they must.
type IdleOutcome = judge.IdleControl

// IdleControl plants the poller on the head's store database and runs the
// control plan's idle phase beside it.
func IdleControl(ctx context.Context, c plan.Control, v *plan.Vars, head pairs.Arm, dsn string, log io.Writer) (IdleOutcome, error) {
	// The plan's file name is what the summary shows: the gate file names
	// it from the tree's root (perf/busy-loop.toml), a plan from its own
	// folder, and both are the same busy-loop.toml to a reader.
	out := IdleOutcome{Plan: filepath.Base(c.PlanFile)}
	if c.Plan == nil {
		return out, fmt.Errorf("idle control: its plan %s was not read", c.PlanFile)
	}
	if dsn == "" || head.Commits == nil {
		return out, fmt.Errorf("idle control: the head has no store to plant the poller on; run the gate with a store or remove the [[control]] of kind idle")
	}
	// The DSN is parsed once: the poller connects with the parsed value,
	// and a DSN that does not parse is refused here, before anything
	// connects, without quoting it (it may hold a password).
	cfg, err := pgdsn.Parse(dsn, "idle control")
	if err != nil {
		return out, err
	}
	db := cfg.Database
	// The phase's two readings of the head's commits go over one
	// connection made before the poller starts, as the gate's own idle
	// phase reads them: a connection made per reading authenticates
	// (SCRAM) while the poller keeps the store busy, and on a crowded
	// 2-core machine that took over the probe's 10 s and the gate could
	// not judge (run 234 in docs/testing.md).
	counter, err := armdb.NewCounter(ctx, dsn, db)
	if err != nil {
		return out, fmt.Errorf("idle control: %w", err)
	}
	defer counter.Close()
	poller, err := StartPoller(ctx, cfg)
	if err != nil {
		return out, err
	}
	key := head.Label() // pairs keys the readings by it
	counters := func(ctx context.Context) (map[string]int64, error) {
		m, err := counter.Read(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]int64{key: m[db]}, nil
	}
	idle, ierr := pairs.Idle(ctx, pairs.Config{Plan: c.Plan, Vars: v, Arms: []pairs.Arm{head}, Counters: counters, Log: log})
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
