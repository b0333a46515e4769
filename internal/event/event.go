// Package event reads what triggered a gate run: the GitHub Actions event
// (name and payload) or, on a laptop, the same facts given as flags. It
// only reads; which commit becomes the base is decided by package base.
package event

import (
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
)

// The event names the gate understands.
const (
	PullRequest      = "pull_request"
	MergeGroup       = "merge_group"
	Push             = "push"
	WorkflowDispatch = "workflow_dispatch"
	Release          = "release"
)

// Names lists the supported events in the order the docs give them.
var Names = []string{PullRequest, MergeGroup, Push, WorkflowDispatch, Release}

// ZeroSHA is what GitHub sends as `before` when a push creates a branch.
const ZeroSHA = "0000000000000000000000000000000000000000"

// Event is the part of a trigger that decides the base. Revisions may be
// full hashes (from GitHub) or any revision git understands (local mode).
type Event struct {
	// Name is one of Names.
	Name string
	// SHA is the checked-out commit: GitHub's merge commit on pull_request,
	// the queue's head on merge_group, the pushed head on push. Empty means HEAD.
	SHA string
	// BaseRef is the pull request's base branch (pull_request), the merge
	// queue's target branch (merge_group) or the repository's default branch
	// (push, used when `before` is zero).
	BaseRef string
	// BaseSHA is the pull request's base tip when the event fired
	// (pull_request) or the merge group's base_sha (merge_group).
	BaseSHA string
	// Before is the branch tip before a push; ZeroSHA for a new branch.
	Before string
	// Tag is the release's tag (release).
	Tag string
	// Forced is GitHub's "forced" flag of a push. The base does not trust it
	// alone: ancestry decides whether history was rewritten.
	Forced bool
	// Repo is owner/name.
	Repo string
	// Ref is the pushed ref (push), for example refs/heads/main.
	Ref string
}

// IsZero reports whether a revision is GitHub's all-zero "no commit".
func IsZero(rev string) bool {
	return rev != "" && strings.Trim(rev, "0") == ""
}

func supported(name string) error {
	for _, n := range Names {
		if n == name {
			return nil
		}
	}
	return exit.Refusef("event %q is not one the gate judges: use one of %s", name, strings.Join(Names, ", "))
}
