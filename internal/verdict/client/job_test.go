package client_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/client"
)

// TestJobFacts: what a job sends the service, from GitHub's environment
// and event file: the PR's head (never GITHUB_SHA, the merge commit), the
// merge group's head, the release's tag, the run attempt and the plan.
func TestJobFacts(t *testing.T) {
	const head, merge, mg = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222", "3333333333333333333333333333333333333333"
	for _, tc := range []struct {
		name    string
		env     map[string]string
		payload string
		want    verdict.Facts
	}{
		{"pull request, default plan", map[string]string{"GITHUB_EVENT_NAME": "pull_request", "GITHUB_SHA": merge, client.GateEnv: verdict.DefaultGate},
			`{"pull_request": {"number": 42, "head": {"sha": "` + head + `"}}}`,
			verdict.Facts{Event: "pull_request", HeadSHA: head, PR: 42}},
		{"re-run of a second plan", map[string]string{"GITHUB_EVENT_NAME": "pull_request", "GITHUB_SHA": merge, "GITHUB_RUN_ATTEMPT": "3", client.GateEnv: "search"},
			`{"pull_request": {"number": 42, "head": {"sha": "` + head + `"}}}`,
			verdict.Facts{Event: "pull_request", HeadSHA: head, PR: 42, RunAttempt: 3, Plan: "search"}},
		{"merge group", map[string]string{"GITHUB_EVENT_NAME": "merge_group", "GITHUB_SHA": mg},
			`{"merge_group": {"head_sha": "` + mg + `"}}`,
			verdict.Facts{Event: "merge_group", HeadSHA: mg, MergeGroupSHA: mg}},
		{"release judged on a pushed tag", map[string]string{"GITHUB_EVENT_NAME": "push", "GITHUB_SHA": head, client.EventEnv: "release", client.TagEnv: "v1.4.0"},
			`{"ref": "refs/tags/v1.4.0"}`,
			verdict.Facts{Event: "release", HeadSHA: head, Tag: "v1.4.0"}},
		{"release from its tag ref", map[string]string{"GITHUB_EVENT_NAME": "release", "GITHUB_SHA": head, "GITHUB_REF_TYPE": "tag", "GITHUB_REF_NAME": "v2"},
			`{}`, verdict.Facts{Event: "release", HeadSHA: head, Tag: "v2"}},
		{"push, no gate name", map[string]string{"GITHUB_EVENT_NAME": "push", "GITHUB_SHA": head}, `{}`,
			verdict.Facts{Event: "push", HeadSHA: head}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := filepath.Join(t.TempDir(), "event.json")
			if err := os.WriteFile(ev, []byte(tc.payload), 0o644); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"GITHUB_REPOSITORY": "acme/api", "GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "1",
				"GITHUB_EVENT_PATH": ev, "GITHUB_SERVER_URL": "https://github.com"}
			for k, v := range tc.env {
				env[k] = v
			}
			got, err := client.JobFacts(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Repository, want.RunID, want.DetailsURL = "acme/api", 7001, "https://github.com/acme/api/actions/runs/7001"
			if want.RunAttempt == 0 {
				want.RunAttempt = 1
			}
			if got != want {
				t.Errorf("JobFacts =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// TestJobFactsRefusals: outside a GitHub Actions job, or with a run id
// that is none, the facts are refused with exit 2 and what to set.
func TestJobFactsRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"not in Actions", map[string]string{}, "GITHUB_REPOSITORY or GITHUB_EVENT_NAME is not set"},
		{"bad run id", map[string]string{"GITHUB_REPOSITORY": "acme/api", "GITHUB_EVENT_NAME": "push", "GITHUB_RUN_ID": "x"}, `GITHUB_RUN_ID "x" is not a run id`},
		{"event file missing", map[string]string{"GITHUB_REPOSITORY": "acme/api", "GITHUB_EVENT_NAME": "push", "GITHUB_RUN_ID": "1", "GITHUB_EVENT_PATH": "/nonexistent/event.json"}, "reading the GitHub event payload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.JobFacts(func(k string) string { return tc.env[k] })
			if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("JobFacts: %v (exit %d), want exit 2 saying %q", err, exit.Code(err), tc.want)
			}
		})
	}
}
