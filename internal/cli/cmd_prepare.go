package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/perfgate/perfgate/internal/base"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/trees"
)

func init() {
	register(Command{Name: "prepare", Summary: "resolve the base, export its tree and build both arms with their own contracts", Run: runPrepare})
}

// runPrepare is the build job: after it, <out>/perf-base holds base.md, the
// base's tree, its binary and contract, and <out>/perf-head the head's binary
// and contract. Each arm is built by its own tree's build command.
func runPrepare(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("prepare", s)
	var ef eventFlags
	ef.register(fs, "commit judged (default HEAD; the head arm is always built from the checkout)")
	repo := fs.String("repo", ".", "the repository's checkout: the head's tree")
	out := fs.String("out", contract.DefaultTarget, "the folder that receives perf-base/ and perf-head/")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return exit.Refusef("perfgate prepare: unexpected argument %q: name revisions with --head, --base-ref, --before or --tag", fs.Arg(0))
	}
	ev, err := ef.event(s)
	if err != nil {
		return err
	}
	baseDir, headDir := contract.Target(*out).Base(), contract.Target(*out).Head()
	// Arms from an earlier run must not survive a run that fails: an
	// attempt would measure them, and base.md would name a stale base.
	for _, d := range []string{baseDir, headDir} {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("clearing the earlier %s: %w", d, err)
		}
	}
	// The head's contract is read first: a checkout without one cannot be
	// judged, and there is no use resolving or exporting anything.
	head, err := contract.Load(*repo)
	if err != nil {
		return fmt.Errorf("reading the head's contract: %w", err)
	}

	choice, err := resolveBase(ctx, *repo, ev, head)
	if err != nil {
		return err
	}
	if err := base.WriteFile(contract.Target(*out).BaseNote(), choice); err != nil {
		return err
	}
	fmt.Fprintln(s.Out, choice.Reason)

	tree := filepath.Join(baseDir, contract.TreeDir)
	if err := trees.Export(ctx, *repo, choice.Commit, tree); err != nil {
		return err
	}
	if err := contract.WriteTreeManifest(baseDir); err != nil {
		return err
	}
	baseC, err := contract.LoadBase(tree, head)
	if err != nil {
		return fmt.Errorf("reading the base's contract at %s: %w", event.ShortSHA(choice.Commit), err)
	}
	if err := baseC.BuildArm(ctx, baseDir, s.Err); err != nil {
		return cleanArms(fmt.Errorf("building the base at %s: %w", event.ShortSHA(choice.Commit), err), baseDir, headDir)
	}
	if err := head.BuildArm(ctx, headDir, s.Err); err != nil {
		return cleanArms(fmt.Errorf("building the head: %w", err), baseDir, headDir)
	}
	fmt.Fprintf(s.Out, "base arm: %s\nhead arm: %s\n", baseDir, headDir)
	return nil
}

// resolveBase is the base prepare builds for ev. A commit without a gate
// file carries the contract when the head's declares how to read legacy
// trees and its script sets overrides. perfgate check resolves each event
// type's base with this same function, so what it checks is what prepare
// builds.
func resolveBase(ctx context.Context, repo string, ev *event.Event, head *contract.Contract) (*base.Choice, error) {
	return base.Resolve(ctx, repo, ev, contract.InCommitWith(head))
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
