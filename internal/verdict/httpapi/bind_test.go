package httpapi_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/report/reporttest"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db/dbtest"
	"github.com/perfgate/perfgate/internal/verdict/httpapi"
	"github.com/perfgate/perfgate/internal/verdict/httpapi/oidctest"
	"github.com/perfgate/perfgate/internal/verdict/publish"
	"github.com/perfgate/perfgate/internal/verdict/publish/githubtest"
)

// boundAPI is the API as perfgate-verdictd serves it with a GitHub App: a
// real SQLite store, OIDC tokens from is, GitHub's record of runs and the
// checks published read from gh through go-github.
func boundAPI(t *testing.T, is *oidctest.Issuer, gh *githubtest.GitHub) *api {
	t.Helper()
	key, err := os.ReadFile(gh.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := publish.New(publish.Credentials{AppID: githubtest.AppID, PrivateKey: key}, gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	st := dbtest.Open(t, "sqlite")
	auth := &httpapi.Auth{Runs: pub, OIDC: &httpapi.OIDC{Issuer: is.URL, Audience: "perfgate-verdictd",
		Allow: map[int64]string{4242: "acme/api", 4343: "beta/api"}, UseTokenID: st.UseTokenID}}
	srv := httptest.NewServer(httpapi.New(verdict.New(st, verdict.Config{Publisher: pub}), httpapi.Options{Auth: auth}))
	t.Cleanup(srv.Close)
	return &api{url: srv.URL, st: st}
}

// TestOIDCBindsTheRun: a token posts only its own run's attempts, from
// perfgate's workflow, once, and only what GitHub's record of the run
// confirms; each refusal names the claim or field and publishes nothing.
func TestOIDCBindsTheRun(t *testing.T) {
	is := oidctest.New(t)
	gh := githubtest.New(t, "acme")
	a := boundAPI(t, is, gh)
	head := sha(0xabc)
	for run := int64(1); run <= 9; run++ {
		gh.AddRun("acme/api", githubtest.Run{ID: run, Event: "pull_request", HeadSHA: head, RunAttempt: 1, PRs: []int{42}})
	}
	gh.AddRun("acme/api", githubtest.Run{ID: 20, Event: "pull_request", HeadSHA: sha(0xdef), RunAttempt: 1, PRs: []int{42}})
	gh.AddRun("acme/api", githubtest.Run{ID: 21, Event: "push", HeadSHA: head, RunAttempt: 1})
	gh.AddRun("acme/api", githubtest.Run{ID: 22, Event: "pull_request", HeadSHA: head, RunAttempt: 1, PRs: []int{7}})

	token := func(run int64, change func(c map[string]any)) string {
		c := is.Claims()
		c["run_id"] = strconv.FormatInt(run, 10)
		if change != nil {
			change(c)
		}
		return oidctest.Sign(t, is.Key, c)
	}
	replayed := token(3, nil)
	for _, tc := range []struct {
		name   string
		token  string
		run    int64
		status int
		want   string
	}{
		{"a token for run 2 posting run 1", token(2, nil), 1, 403, "run_id: the OIDC token is run 2's, the attempt says run 1"},
		{"a token from another workflow", token(1, func(c map[string]any) {
			c["job_workflow_ref"] = "acme/api/.github/workflows/forge.yml@refs/heads/forge"
		}), 1, 403, `job_workflow_ref: \"acme/api/.github/workflows/forge.yml@refs/heads/forge\" is not a workflow`},
		{"a token of another run attempt", token(1, func(c map[string]any) { c["run_attempt"] = "2" }), 1, 403, "run_attempt"},
		{"a token of another event", token(1, func(c map[string]any) { c["event_name"] = "push" }), 1, 403, "event_name"},
		{"a body whose head SHA the runs API does not confirm", token(20, nil), 20, 403, "head_sha: GitHub's record of run 20 is for commit " + sha(0xdef)},
		{"a body whose event the runs API does not confirm", token(21, nil), 21, 403, "event: GitHub's record of run 21 is a push"},
		{"a body whose pull request the runs API does not confirm", token(22, nil), 22, 403, "pr: acme/api has no pull request #42"},
		{"a run GitHub does not know", token(99, nil), 99, 403, "run_id: GitHub has no run 99 in acme/api, or does not show acme/api to the service's GitHub credentials"},
		{"a repository whose owner has not installed the App", token(5, func(c map[string]any) { c["repository_id"], c["repository"] = "4343", "beta/api" }), -5, 403, "not installed on beta"},
		{"the honest post", replayed, 3, 201, `"created":true`},
		{"the honest token replayed", replayed, 3, 401, "already used"},
		{"a token without jti", token(4, func(c map[string]any) { delete(c, "jti") }), 4, 401, "no jti"},
	} {
		body := submission(t, tc.run, 1, 0)
		if tc.run < 0 { // the same attempt, of beta/api
			body = []byte(strings.Replace(string(submission(t, -tc.run, 1, 0)), `"acme/api"`, `"beta/api"`, 1))
		}
		got := a.do(t, "POST", "/v1/attempts", tc.token, body)
		if got.status != tc.status || !strings.Contains(got.raw, tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, got.status, got.raw, tc.status, tc.want)
		}
	}
	// Only the honest post published: one check, completed, on its head.
	checks := gh.AllChecks()
	if len(checks) != 1 || checks[0].HeadSHA != head || checks[0].Status != "completed" || checks[0].Conclusion != "success" {
		t.Errorf("check runs published: %+v, want the honest post's one, completed success on %s", checks, head)
	}
	if stored, err := a.st.RunAttempts(t.Context(), verdict.RunKey{Repository: "acme/api", RunID: 1, RunAttempt: 1}); err != nil || len(stored) != 0 {
		t.Errorf("run 1 has %d stored attempts (%v): the forged posts must file nothing", len(stored), err)
	}
}

// TestReleaseJudgedOnItsPushedTag: workflows/release.yml runs on the
// pushed tag and posts event release: a push token of that tag's ref may,
// one of another ref may not.
func TestReleaseJudgedOnItsPushedTag(t *testing.T) {
	is := oidctest.New(t)
	gh := githubtest.New(t, "acme")
	a := boundAPI(t, is, gh)
	head := sha(0xabc)
	for _, tc := range []struct {
		name   string
		run    int64
		ref    string
		status int
		want   string
	}{
		{"the tag's own run", 31, "refs/tags/v1.2.0", 201, `"created":true`},
		{"a push of another ref", 32, "refs/heads/main", 403, "ref: the OIDC token's run was pushed refs/heads/main"},
	} {
		gh.AddRun("acme/api", githubtest.Run{ID: tc.run, Event: "push", HeadSHA: head, RunAttempt: 1})
		c := is.Claims()
		c["run_id"], c["event_name"], c["ref"] = strconv.FormatInt(tc.run, 10), "push", tc.ref
		code := 0
		body, err := json.Marshal(verdict.Submission{Facts: verdict.Facts{Repository: "acme/api", Event: "release", Tag: "v1.2.0",
			HeadSHA: head, RunID: tc.run, RunAttempt: 1, Attempt: 1, CPUModel: "EPYC", ExitCode: &code}, Report: json.RawMessage(mustJSON(t, reporttest.Pass()))})
		if err != nil {
			t.Fatal(err)
		}
		got := a.do(t, "POST", "/v1/attempts", oidctest.Sign(t, is.Key, c), body)
		if got.status != tc.status || !strings.Contains(got.raw, tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, got.status, got.raw, tc.status, tc.want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
