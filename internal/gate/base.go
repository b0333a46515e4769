package gate

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"

	"github.com/perfgate/perfgate/internal/base"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/event"
)

// ResolveBase is the base Prepare builds for ev. A commit without a gate
// file carries the contract when the head's declares how to read legacy
// trees and its script sets overrides. perfgate check resolves each event
// type's base with this same function, so what it checks is what prepare
// builds.
func ResolveBase(ctx context.Context, repo string, ev *event.Event, head *contract.Contract) (*base.Choice, error) {
	return base.Resolve(ctx, repo, ev, contract.InCommitWith(head))
}

// BaseOf is the base Prepare would build for ev, so base.md never names
// another commit than the gate judges against: with a gate file in the
// checkout, ResolveBase, which counts a legacy tree when the head's gate
// file declares [legacy]; without one there is no [legacy] to read, and a
// base is a commit carrying its own gate file.
func BaseOf(ctx context.Context, repo string, ev *event.Event) (*base.Choice, error) {
	if _, err := os.Stat(filepath.Join(repo, contract.GateFile)); errors.Is(err, iofs.ErrNotExist) {
		return base.Resolve(ctx, repo, ev, contract.InCommit)
	}
	head, err := contract.Load(repo)
	if err != nil {
		return nil, fmt.Errorf("reading the head's contract: %w", err)
	}
	return ResolveBase(ctx, repo, ev, head)
}

// WriteBase is perfgate base: BaseOf written to out as base.md. A stale
// base.md is removed by the command (internal/cli's runBase) on any
// failure, this one's and the event's alike.
func WriteBase(ctx context.Context, repo string, ev *event.Event, out string) (*base.Choice, error) {
	c, err := BaseOf(ctx, repo, ev)
	if err != nil {
		return nil, err
	}
	if err := base.WriteFile(out, c); err != nil {
		return nil, err
	}
	return c, nil
}
