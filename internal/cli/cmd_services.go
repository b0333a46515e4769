package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/services"
)

// treeFlags fill a services.Pair from the command line.
type treeFlags struct {
	services.Pair
	// oldSeed is set when the deprecated --seed was given: --seed names the
	// request sequences' seed in run, ab and load, so seed files took
	// --seed-file.
	oldSeed bool
}

func (t *treeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.Head, "head", ".", "the head's tree")
	fs.StringVar(&t.Base, "base", "", "the base's tree (required)")
	fs.StringVar(&t.Project, "project", "", "compose project name (default: the head tree's folder name)")
	fs.Var((*listFlag)(&t.Files), "f", "compose file, relative to each tree; repeat in merge order (default compose.yaml)")
	fs.Var((*listFlag)(&t.Profiles), "profile", "compose profile to enable; repeatable")
	fs.Var((*listFlag)(&t.Seeds), "seed-file", "SERVICE=FILE: a file the service is seeded from, relative to each tree; repeatable")
	fs.Func("seed", "deprecated: write --seed-file SERVICE=FILE", func(v string) error {
		t.oldSeed = true
		t.Seeds = append(t.Seeds, v)
		return nil
	})
	fs.Var((*listFlag)(&t.Env), "env", "NAME=VALUE for compose interpolation (beside each tree's .env); repeatable")
}

// trees are the Pair's trees, after a warning for the deprecated --seed.
func (t *treeFlags) trees(s *IO, cmd string) (services.Tree, services.Tree, error) {
	if t.oldSeed {
		fmt.Fprintf(s.Err, "warning: perfgate %s: --seed is deprecated and will go: write --seed-file SERVICE=FILE\n", cmd)
	}
	return t.Trees(cmd)
}

func runServicesPlan(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("services plan", s)
	var tf treeFlags
	tf.register(fs)
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	head, base, err := tf.trees(s, "services plan")
	if err != nil {
		return err
	}
	p, err := services.Diff(ctx, head, base)
	if err != nil {
		return err
	}
	p.WriteTable(s.Out)
	return nil
}

func runServicesUp(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("services up", s)
	var tf treeFlags
	tf.register(fs)
	runID := fs.String("run-id", "", "the run's id, set as label perfgate.run on everything started and part of the project names (default: generated)")
	logDir := fs.String("log-dir", contract.Target(contract.DefaultTarget).Run().Services(), "where the resolved compose files and the services' logs go")
	wait := fs.Duration("wait-timeout", 3*time.Minute, "how long to wait for every service to be healthy")
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	head, base, err := tf.trees(s, "services up")
	if err != nil {
		return err
	}
	return gate.ServicesUp(ctx, gate.ServicesUpOptions{Head: head, Base: base, RunID: *runID, LogDir: *logDir, Wait: *wait, Out: s.Out, Err: s.Err})
}

func runServicesDown(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("services down", s)
	runID := fs.String("run-id", "", "the run whose services to remove (required)")
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	if *runID == "" {
		return exit.Refusef("perfgate services down: --run-id is required: give the id `services up` printed")
	}
	if err := services.DownByLabel(ctx, *runID); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "run %s: nothing labelled %s=%s remains\n", *runID, services.RunLabel, *runID)
	return nil
}
