package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/perfgate/perfgate/internal/base"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/trees"
)

// PrepareOptions are the build job's inputs.
type PrepareOptions struct {
	Repo  string       // the checkout: the head's tree
	Out   string       // receives perf-base/ and perf-head/ (Prepared's Target)
	Event *event.Event // the event the base is resolved for
	// Log receives the build commands' output.
	Log io.Writer
}

// Prepare is the build job: after it, Out/perf-base holds base.md, the
// base's tree, its binary and contract, and Out/perf-head the head's binary
// and contract. Each arm is built by its own tree's build command. The
// choice is returned also when a build fails, since base.md names it.
func Prepare(ctx context.Context, o PrepareOptions) (*base.Choice, error) {
	baseDir, headDir := contract.Target(o.Out).Base(), contract.Target(o.Out).Head()
	// Arms from an earlier run must not survive a run that fails: an
	// attempt would measure them, and base.md would name a stale base.
	for _, d := range []string{baseDir, headDir} {
		if err := os.RemoveAll(d); err != nil {
			return nil, fmt.Errorf("clearing the earlier %s: %w", d, err)
		}
	}
	// The head's contract is read first: a checkout without one cannot be
	// judged, and there is no use resolving or exporting anything.
	head, err := contract.Load(o.Repo)
	if err != nil {
		return nil, fmt.Errorf("reading the head's contract: %w", err)
	}
	choice, err := ResolveBase(ctx, o.Repo, o.Event, head)
	if err != nil {
		return nil, err
	}
	if err := base.WriteFile(contract.Target(o.Out).BaseNote(), choice); err != nil {
		return nil, err
	}
	baseC, err := exportBase(ctx, o.Repo, baseDir, choice.Commit, head)
	if err != nil {
		return choice, err
	}
	if err := baseC.BuildArm(ctx, baseDir, o.Log); err != nil {
		return choice, cleanArms(fmt.Errorf("building the base at %s: %w", event.ShortSHA(choice.Commit), err), baseDir, headDir)
	}
	if err := head.BuildArm(ctx, headDir, o.Log); err != nil {
		return choice, cleanArms(fmt.Errorf("building the head: %w", err), baseDir, headDir)
	}
	return choice, nil
}

// exportBase writes the base's tree and its manifest into baseDir and
// reads its contract there, as the attempt jobs will.
func exportBase(ctx context.Context, repo, baseDir, commit string, head *contract.Contract) (*contract.Contract, error) {
	tree := filepath.Join(baseDir, contract.TreeDir)
	if err := trees.Export(ctx, repo, commit, tree); err != nil {
		return nil, err
	}
	if err := contract.WriteTreeManifest(baseDir); err != nil {
		return nil, err
	}
	baseC, err := contract.LoadBase(tree, head)
	if err != nil {
		return nil, fmt.Errorf("reading the base's contract at %s: %w", event.ShortSHA(commit), err)
	}
	return baseC, nil
}

// cleanArms removes half-built arms but keeps base.md, which names the base
// the gate resolved whatever became of its build.
func cleanArms(err error, baseDir, headDir string) error {
	var errs []error
	entries, _ := os.ReadDir(baseDir)
	for _, e := range entries {
		if e.Name() != contract.BaseNote {
			errs = append(errs, os.RemoveAll(filepath.Join(baseDir, e.Name())))
		}
	}
	errs = append(errs, os.RemoveAll(headDir))
	if cerr := errors.Join(errs...); cerr != nil {
		return fmt.Errorf("%w (and clearing the half-built arms: %v)", err, cerr)
	}
	return err
}
