package event

import (
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/perfgate/perfgate/internal/exit"
)

// FromActions reads the event of the running GitHub Actions job: the event
// name from GITHUB_EVENT_NAME, the payload from the file GITHUB_EVENT_PATH
// names. A field the base needs that the payload lacks is refused (exit 2)
// naming the payload file and the field.
func FromActions(getenv func(string) string) (*Event, error) {
	name := getenv("GITHUB_EVENT_NAME")
	if name == "" {
		return nil, exit.Refusef("GITHUB_EVENT_NAME is not set, so this is not a GitHub Actions job: name the event with --event (one of %s)", strings.Join(Names, ", "))
	}
	if err := supported(name); err != nil {
		return nil, err
	}
	// Context joins parse errors of unrelated numeric variables (run id,
	// retention days) into its error while still filling the context; none
	// of them matters to the base, so only a missing context is fatal.
	gh, err := githubactions.New(githubactions.WithGetenv(getenv)).Context()
	if gh == nil {
		return nil, exit.Refusef("reading the GitHub event payload %s: %w", getenv("GITHUB_EVENT_PATH"), err)
	}
	path := gh.EventPath
	if path == "" {
		return nil, exit.Refusef("GITHUB_EVENT_PATH is not set: the %s event's payload is needed to find the base", name)
	}
	if gh.Event == nil {
		return nil, exit.Refusef("reading the GitHub event payload %s: the file is missing or empty", path)
	}
	p := payload{path: path, m: gh.Event}
	ev := &Event{Name: name, SHA: gh.SHA, Repo: gh.Repository, Ref: gh.Ref}
	if ev.Repo == "" {
		ev.Repo = p.str("repository.full_name")
	}
	switch name {
	case PullRequest:
		ev.BaseRef = p.str("pull_request.base.ref")
		if ev.BaseRef == "" {
			ev.BaseRef = gh.BaseRef
		}
		ev.BaseSHA = p.str("pull_request.base.sha")
		if ev.BaseRef == "" && ev.BaseSHA == "" {
			return nil, p.missing("pull_request.base.ref")
		}
	case MergeGroup:
		ev.BaseSHA = p.str("merge_group.base_sha")
		if ev.BaseSHA == "" {
			return nil, p.missing("merge_group.base_sha")
		}
		ev.BaseRef = p.str("merge_group.base_ref")
		if ev.SHA == "" {
			ev.SHA = p.str("merge_group.head_sha")
		}
	case Push:
		ev.Before = p.str("before")
		if ev.Before == "" {
			return nil, p.missing("before")
		}
		if after := p.str("after"); ev.SHA == "" {
			ev.SHA = after
		}
		if ref := p.str("ref"); ref != "" {
			ev.Ref = ref
		}
		ev.Forced = p.bool("forced")
		ev.BaseRef = p.str("repository.default_branch")
	case WorkflowDispatch:
		// The base is the previous release tag before the checked-out commit;
		// the payload names nothing more.
	case Release:
		ev.Tag = p.str("release.tag_name")
		if ev.Tag == "" {
			return nil, p.missing("release.tag_name")
		}
	}
	return ev, nil
}

// payload walks the decoded JSON by dotted paths, so a field of the wrong
// type reads as absent rather than panicking.
type payload struct {
	path string
	m    map[string]any
}

func (p payload) get(dotted string) any {
	var cur any = p.m
	for _, k := range strings.Split(dotted, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[k]
	}
	return cur
}

func (p payload) str(dotted string) string {
	s, _ := p.get(dotted).(string)
	return s
}

func (p payload) bool(dotted string) bool {
	b, _ := p.get(dotted).(bool)
	return b
}

func (p payload) missing(dotted string) error {
	return exit.Refusef("%s: the event payload has no %s, which the base is read from: run the gate from the event it is made for, or locally with --event and its flags", p.path, dotted)
}
