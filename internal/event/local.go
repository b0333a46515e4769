package event

import (
	"github.com/perfgate/perfgate/internal/exit"
)

// LocalOptions are the laptop's stand-ins for an event payload; each is a
// revision git understands (origin/main, v1.2.0, a hash).
type LocalOptions struct {
	// Head is the commit judged; empty means HEAD.
	Head string
	// BaseRef: pull_request's base branch, merge_group's target, or for a
	// push with a zero Before the branch the new branch came from.
	BaseRef string
	// BaseSHA: merge_group's base (pull_request takes it when BaseRef is empty).
	BaseSHA string
	// Before: push's previous tip.
	Before string
	// Tag: release's tag.
	Tag string
	// Forced marks a push as forced (informative, as in the payload).
	Forced bool
}

// Local builds an event from flags, refusing (exit 2) a combination that
// leaves the base undefined and naming the flag to add.
func Local(name string, opts LocalOptions) (*Event, error) {
	if name == "" {
		return nil, exit.Refusef("--event is empty: use one of pull_request, merge_group, push, workflow_dispatch, release")
	}
	if err := supported(name); err != nil {
		return nil, err
	}
	ev := &Event{Name: name, SHA: opts.Head, BaseRef: opts.BaseRef, BaseSHA: opts.BaseSHA,
		Before: opts.Before, Tag: opts.Tag, Forced: opts.Forced}
	switch name {
	case PullRequest:
		if ev.BaseRef == "" && ev.BaseSHA == "" {
			return nil, exit.Refusef("--event pull_request needs the pull request's base branch: add --base-ref origin/main (or the branch it targets)")
		}
	case MergeGroup:
		if ev.BaseSHA == "" {
			if ev.BaseRef == "" {
				return nil, exit.Refusef("--event merge_group needs the group's base: add --base-sha <commit> (or --base-ref origin/main)")
			}
			ev.BaseSHA = ev.BaseRef
		}
	case Push:
		if ev.Before == "" {
			return nil, exit.Refusef("--event push needs the tip before the push: add --before <commit> (%s for a new branch)", ZeroSHA)
		}
	case Release:
		if ev.Tag == "" {
			return nil, exit.Refusef("--event release needs the release's tag: add --tag v1.2.0")
		}
	}
	return ev, nil
}
