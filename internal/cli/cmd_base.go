package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"os"

	"github.com/perfgate/perfgate/internal/base"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
)

// runBase is gate.WriteBase: it prints the base's reason and note.
func runBase(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("base", s)
	var ef eventFlags
	ef.register(fs, "commit judged (default HEAD; a release is judged at its tag's commit, and a --head elsewhere is refused)")
	repo := fs.String("repo", ".", "the repository's checkout")
	out := fs.String("out", base.DefaultFile, "where to write base.md")
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	c, err := writeBase(ctx, s, fs, &ef, *repo, *out)
	if err != nil {
		// Whatever failed once --out is known, a base.md an earlier run
		// left there must go: the release workflow's perfgate
		// release-note would quote a base this run did not name.
		if rmErr := os.Remove(*out); rmErr != nil && !errors.Is(rmErr, iofs.ErrNotExist) {
			return fmt.Errorf("%w (and removing the stale %s: %v)", err, *out, rmErr)
		}
		return err
	}
	fmt.Fprintln(s.Out, c.Reason)
	fmt.Fprintln(s.Out, c.Note)
	return nil
}

// writeBase is runBase's work once the flags are read: the event, then
// the base written to out.
func writeBase(ctx context.Context, s *IO, fs *flag.FlagSet, ef *eventFlags, repo, out string) (*base.Choice, error) {
	if fs.NArg() > 0 {
		return nil, exit.Refusef("perfgate base: unexpected argument %q: name revisions with --head, --base-ref, --before or --tag", fs.Arg(0))
	}
	ev, err := ef.event(s)
	if err != nil {
		return nil, err
	}
	return gate.WriteBase(ctx, repo, ev, out)
}

// eventFlags describe a local event (a laptop's --event pull_request
// --base-ref origin/main); without --event the GitHub Actions event is read.
type eventFlags struct {
	name string
	lo   event.LocalOptions
}

func (e *eventFlags) register(fs *flag.FlagSet, headUsage string) {
	fs.StringVar(&e.name, "event", "", "event to resolve locally: pull_request, merge_group, push, workflow_dispatch, release (default: the GitHub Actions event)")
	fs.StringVar(&e.lo.Head, "head", "", headUsage)
	fs.StringVar(&e.lo.BaseRef, "base-ref", "", "pull_request: the base branch (origin/main); push with a zero --before: the branch it left")
	fs.StringVar(&e.lo.BaseSHA, "base-sha", "", "merge_group: the group's base commit")
	fs.StringVar(&e.lo.Before, "before", "", "push: the tip before the push ("+event.ZeroSHA+" for a new branch)")
	fs.StringVar(&e.lo.Tag, "tag", "", "release: the release's tag (v1.2.0)")
	fs.BoolVar(&e.lo.Forced, "forced", false, "push: the push was forced")
}

func (e *eventFlags) event(s *IO) (*event.Event, error) { return event.Choose(e.name, e.lo, s.Env) }
