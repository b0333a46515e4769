package event_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
)

// actionsEnv is what the runner sets for a job; GITHUB_SHA is the merge
// commit on pull_request, the queue head on merge_group, the tag's commit
// on release.
func actionsEnv(name, fixture, sha string, extra map[string]string) func(string) string {
	env := map[string]string{
		"GITHUB_ACTIONS":       "true",
		"GITHUB_EVENT_NAME":    name,
		"GITHUB_SHA":           sha,
		"GITHUB_REPOSITORY":    "octo-org/ferrofed",
		"GITHUB_RUN_ID":        "5512345678",
		"GITHUB_RUN_ATTEMPT":   "1",
		"GITHUB_RUN_NUMBER":    "88",
		"GITHUB_REF_PROTECTED": "false",
	}
	if fixture != "" {
		env["GITHUB_EVENT_PATH"] = filepath.Join("testdata", fixture)
	}
	for k, v := range extra {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

func TestFromActions(t *testing.T) {
	const merge = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4"
	for _, tc := range []struct {
		name, event, fixture, sha string
		extra                     map[string]string
		want                      event.Event
	}{
		{"pull_request: merge commit and base branch", "pull_request", "pull_request.json", merge,
			map[string]string{"GITHUB_BASE_REF": "main", "GITHUB_REF": "refs/pull/42/merge"},
			event.Event{Name: "pull_request", SHA: merge, BaseRef: "main", BaseSHA: "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", Repo: "octo-org/ferrofed", Ref: "refs/pull/42/merge"}},
		{"merge_group: base_sha", "merge_group", "merge_group.json", "7b1e9a0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", nil,
			event.Event{Name: "merge_group", SHA: "7b1e9a0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", BaseRef: "refs/heads/main", BaseSHA: "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", Repo: "octo-org/ferrofed"}},
		{"merge_group: head from the payload when GITHUB_SHA is absent", "merge_group", "merge_group.json", "", nil,
			event.Event{Name: "merge_group", SHA: "7b1e9a0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", BaseRef: "refs/heads/main", BaseSHA: "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", Repo: "octo-org/ferrofed"}},
		{"push: before", "push", "push.json", "7b1e9a0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", map[string]string{"GITHUB_REF": "refs/heads/main"},
			event.Event{Name: "push", SHA: "7b1e9a0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", Before: "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", BaseRef: "main", Repo: "octo-org/ferrofed", Ref: "refs/heads/main"}},
		{"push: new branch has a zero before", "push", "push_new_branch.json", "5d0f7c9e1b2a3c4d5e6f708192a3b4c5d6e7f809", nil,
			event.Event{Name: "push", SHA: "5d0f7c9e1b2a3c4d5e6f708192a3b4c5d6e7f809", Before: event.ZeroSHA, BaseRef: "main", Repo: "octo-org/ferrofed", Ref: "refs/heads/summary-cache"}},
		{"push: forced", "push", "push_forced.json", "c0ffee0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", nil,
			event.Event{Name: "push", SHA: "c0ffee0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", Before: "5d0f7c9e1b2a3c4d5e6f708192a3b4c5d6e7f809", Forced: true, BaseRef: "main", Repo: "octo-org/ferrofed", Ref: "refs/heads/summary-cache"}},
		{"workflow_dispatch", "workflow_dispatch", "workflow_dispatch.json", "7b1e9a0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", map[string]string{"GITHUB_REF": "refs/heads/main"},
			event.Event{Name: "workflow_dispatch", SHA: "7b1e9a0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", Repo: "octo-org/ferrofed", Ref: "refs/heads/main"}},
		{"release: the tag", "release", "release.json", "7b1e9a0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", map[string]string{"GITHUB_REF": "refs/tags/v0.0.17"},
			event.Event{Name: "release", SHA: "7b1e9a0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", Tag: "v0.0.17", Repo: "octo-org/ferrofed", Ref: "refs/tags/v0.0.17"}},
		{"repository from the payload, a garbage run id ignored", "release", "release.json", "7b1e9a0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", map[string]string{"GITHUB_REPOSITORY": "", "GITHUB_RUN_ID": "x"},
			event.Event{Name: "release", SHA: "7b1e9a0c2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b", Tag: "v0.0.17", Repo: "octo-org/ferrofed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := event.FromActions(actionsEnv(tc.event, tc.fixture, tc.sha, tc.extra))
			if err != nil {
				t.Fatal(err)
			}
			if *got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", *got, tc.want)
			}
		})
	}
}

func TestFromActionsRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, event, fixture string
		says                 []string
	}{
		{"not in Actions", "", "push.json", []string{"GITHUB_EVENT_NAME is not set", "--event"}},
		{"unsupported event", "issues", "push.json", []string{`"issues"`, "pull_request, merge_group, push, workflow_dispatch, release"}},
		{"no payload path", "push", "", []string{"GITHUB_EVENT_PATH is not set"}},
		{"payload file missing", "push", "no-such.json", []string{"no-such.json", "missing"}},
		{"malformed payload", "pull_request", "malformed.json", []string{"malformed.json"}},
		{"pull_request payload from another event", "pull_request", "push.json", []string{"push.json", "pull_request.base.ref"}},
		{"field of the wrong type", "pull_request", "pull_request_wrong_type.json", []string{"pull_request.base.ref"}},
		{"merge_group without base_sha", "merge_group", "release.json", []string{"merge_group.base_sha"}},
		{"push without before", "push", "workflow_dispatch.json", []string{"before"}},
		{"release without tag", "release", "push.json", []string{"release.tag_name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := event.FromActions(actionsEnv(tc.event, tc.fixture, "", nil))
			if err == nil || exit.Code(err) != exit.CannotJudge {
				t.Fatalf("got %v (exit %d), want a refusal", err, exit.Code(err))
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("refusal %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestLocal(t *testing.T) {
	for _, tc := range []struct {
		name, event string
		opts        event.LocalOptions
		want        *event.Event
		refusal     string
	}{
		{"pull_request", "pull_request", event.LocalOptions{BaseRef: "origin/main"}, &event.Event{Name: "pull_request", BaseRef: "origin/main"}, ""},
		{"pull_request without a base", "pull_request", event.LocalOptions{}, nil, "--base-ref origin/main"},
		{"merge_group", "merge_group", event.LocalOptions{BaseSHA: "abc"}, &event.Event{Name: "merge_group", BaseSHA: "abc"}, ""},
		{"merge_group from a branch", "merge_group", event.LocalOptions{BaseRef: "origin/main"}, &event.Event{Name: "merge_group", BaseRef: "origin/main", BaseSHA: "origin/main"}, ""},
		{"merge_group without a base", "merge_group", event.LocalOptions{}, nil, "--base-sha"},
		{"push", "push", event.LocalOptions{Head: "HEAD", Before: "HEAD~3", Forced: true}, &event.Event{Name: "push", SHA: "HEAD", Before: "HEAD~3", Forced: true}, ""},
		{"push without before", "push", event.LocalOptions{}, nil, "--before"},
		{"workflow_dispatch", "workflow_dispatch", event.LocalOptions{}, &event.Event{Name: "workflow_dispatch"}, ""},
		{"release", "release", event.LocalOptions{Tag: "v1.2.0"}, &event.Event{Name: "release", Tag: "v1.2.0"}, ""},
		{"release without tag", "release", event.LocalOptions{}, nil, "--tag v1.2.0"},
		{"unknown event", "schedule", event.LocalOptions{}, nil, `"schedule"`},
		{"empty event", "", event.LocalOptions{}, nil, "--event is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := event.Local(tc.event, tc.opts)
			if tc.refusal != "" {
				if err == nil || exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), tc.refusal) {
					t.Fatalf("got %v, want a refusal mentioning %q", err, tc.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got != *tc.want {
				t.Fatalf("got %+v, want %+v", *got, *tc.want)
			}
		})
	}
}

func TestIsZero(t *testing.T) {
	for in, want := range map[string]bool{event.ZeroSHA: true, "0000000": true, "": false, "a000": false} {
		if got := event.IsZero(in); got != want {
			t.Errorf("IsZero(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestShortSHA(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0123456789abcdef0123456789abcdef01234567", "0123456789ab"},
		{"0123456789ab", "0123456789ab"},
		{"main", "main"},
		{"", ""},
	} {
		if got := event.ShortSHA(tc.in); got != tc.want {
			t.Errorf("ShortSHA(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
