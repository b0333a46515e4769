package cli

import (
	"context"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/plan"
)

// runRun is an attempt job: after `prepare` (or `unpack`), it boots each arm
// from its own tree's contract over its own services and judges.
func runRun(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("run", s)
	target := fs.String("target", contract.DefaultTarget, "the folder holding perf-base/ and perf-head/ (prepare's --out)")
	repo := fs.String("repo", ".", "the checkout: the head's tree")
	planPath := fs.String("plan", "", "the plan (default: the head's contract plan)")
	out := fs.String("out", "", "folder for the report, summary, logs and rendered configs (default TARGET/perf-run)")
	withStore := fs.Bool("store", true, "start a PostgreSQL with a database per arm; each arm's @DIR@/store.dsn names its own")
	seed := fs.Int64("seed", 1, "seed of the request sequences")
	var vars listFlag
	fs.Var(&vars, "var", "a plan variable, name=value or name=@file (repeatable)")
	var prof profileFlags
	prof.register(fs)
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	if err := exit.NoArguments(fs); err != nil {
		return err
	}
	var resolved *plan.Vars
	pr := gate.Prepared{
		Target: *target, Repo: *repo, Plan: *planPath, Vars: vars, Getenv: s.Env,
		Store: *withStore, Seed: *seed, Out: *out, Log: s.Err,
		Reshape:  func(ab *plan.AB) error { return prof.apply(ab) },
		Resolved: func(v *plan.Vars) { resolved = v; maskSecrets(s, v) },
	}
	if s.IsTerminal {
		pr.Progress = s.Err
	}
	rep, err := pr.Run(ctx)
	if err != nil {
		return resolved.RedactError(err) // inner errors may quote a secret
	}
	return printVerdict(s, rep, pr.OutDir())
}
