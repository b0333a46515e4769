package actiontest

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/report/reporttest"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db/dbtest"
	"github.com/perfgate/perfgate/internal/verdict/httpapi"
	"github.com/perfgate/perfgate/internal/verdict/httpapi/oidctest"
	"github.com/perfgate/perfgate/internal/verdict/publish"
	"github.com/perfgate/perfgate/internal/verdict/publish/githubtest"
)

// relayService is perfgate-verdictd's HTTP surface as it runs with a
// GitHub App: OIDC tokens from is, GitHub's record of runs and the check
// published through gh.
func relayService(t *testing.T, is *oidctest.Issuer, gh *githubtest.GitHub) string {
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
		Allow: map[int64]string{4242: "acme/api"}, UseTokenID: st.UseTokenID}}
	srv := httptest.NewServer(httpapi.New(verdict.New(st, verdict.Config{Publisher: pub}), httpapi.Options{Auth: auth}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// jobTokens is the runner's ACTIONS_ID_TOKEN_REQUEST_URL for a job of
// workflow, on event, in run: a fresh token of is for every request.
func jobTokens(t *testing.T, is *oidctest.Issuer, workflow, event, run string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer request-token" {
			http.Error(w, "bad request token", http.StatusUnauthorized)
			return
		}
		c := is.Claims()
		c["aud"], c["event_name"], c["run_id"], c["job_workflow_ref"] = r.URL.Query().Get("audience"), event, run, workflow
		c["sub"] = "repo:acme/api:ref:refs/heads/main"
		json.NewEncoder(w).Encode(map[string]string{"value": oidctest.Sign(t, is.Key, c)})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/token?api-version=2.0"
}

// writeArtifact lays one attempt's report artifact out as
// actions/download-artifact does with a pattern: path/<artifact name>/...,
// the files under the upload's common folder.
func writeArtifact(t *testing.T, dir, name string, rec map[string]any, rep *report.Report) {
	t.Helper()
	run := filepath.Join(dir, name, "perf-run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, v := range map[string]any{"attempt.json": rec, "latest.json": rep} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRelayPostsAForkRunsAttempts plays workflows/perf-relay.yml's job
// after a fork pull request's gate: its if for real, its download of the
// fork run's artifacts as the artifacts it lays out, its script in bash
// against a verdict service with a GitHub App on the fake GitHub. The fork
// run's attempts land on the pull request's head commit as a completed
// check.
func TestRelayPostsAForkRunsAttempts(t *testing.T) {
	t.Parallel() // wftool's and bash's processes, its own servers, beside the others
	root := moduleRoot(t)
	w := readWorkflow(t, filepath.Join(root, "workflows", "perf-relay.yml"))
	e := newEvaluator(t)
	var job wfJob
	for _, j := range w.Jobs {
		if j.ID == "relay" {
			job = j
		}
	}
	if job.ID == "" {
		t.Fatal("perf-relay.yml has no relay job")
	}

	gh := githubtest.New(t, "acme")
	head := strings.Repeat("f0", 20)
	// GitHub links no pull request to a fork's run.
	gh.AddRun("acme/api", githubtest.Run{ID: 7001, Event: "pull_request", HeadSHA: head, RunAttempt: 1, HeadRepository: "mallory/api"})
	gh.AddPR("acme/api", githubtest.PR{Number: 42, HeadSHA: head, HeadRepo: "mallory/api", HeadRef: "faster"})
	is := oidctest.New(t)
	service := relayService(t, is, gh)

	event := func(headRepo string) map[string]any {
		owner, _, _ := strings.Cut(headRepo, "/")
		return map[string]any{"workflow_run": map[string]any{
			"id": 7001, "run_attempt": 1, "event": "pull_request", "conclusion": "failure", "head_sha": head,
			"head_branch": "faster", "html_url": "https://github.com/acme/api/actions/runs/7001",
			"head_repository": map[string]any{"full_name": headRepo, "owner": map[string]any{"login": owner}},
		}}
	}
	ctx := map[string]any{
		"github":  map[string]any{"repository": "acme/api", "token": gh.InstallationToken("acme"), "event": event("mallory/api")},
		"vars":    map[string]any{"PERFGATE_SERVICE": service},
		"secrets": map[string]any{},
	}
	if !e.ask(evalRequest{Mode: "if", Src: job.If, Ctx: ctx, Success: true}).Bool {
		t.Fatalf("the relay does not run after a fork's pull_request run (if: %s)", job.If)
	}
	same := map[string]any{"github": map[string]any{"repository": "acme/api", "event": event("acme/api")}, "vars": ctx["vars"]}
	if e.ask(evalRequest{Mode: "if", Src: job.If, Ctx: same, Success: true}).Bool {
		t.Error("the relay runs after a same-repository run, which posted its attempts itself")
	}
	dl := stepUsing(t, job, "actions/download-artifact@")
	if got := e.ask(evalRequest{Mode: "interpolate", Src: dl.With["run-id"], Ctx: ctx}).Value; got != "7001" || dl.With["pattern"] != "*-report-attempt-*" {
		t.Fatalf("the relay downloads run %q's %q, want run 7001's *-report-attempt-*", got, dl.With["pattern"])
	}

	// The fork run: attempt 1 could not judge (a retry), attempt 2 passed.
	// An artifact of a run attempt newer than the one that triggered this
	// relay (a re-run still going) is not posted.
	work := t.TempDir()
	arts := filepath.Join(work, "perf-artifacts")
	two := 2
	zero := 0
	// A second plan's gate (perf-search) ran one attempt, a regression: it
	// gets its own check, and its attempt 1 is no repeat of the default's.
	writeArtifact(t, arts, "perf-plan-report-attempt-1-a1", map[string]any{"attempt": 1, "run_attempt": 1, "exit_code": two, "cpu_model": "EPYC", "next": "retry", "reason": "cannot judge"}, reporttest.CannotJudge())
	writeArtifact(t, arts, "perf-plan-report-attempt-1-a2", map[string]any{"attempt": 1, "run_attempt": 2, "exit_code": zero, "cpu_model": "EPYC", "next": "final", "reason": "a later run attempt"}, reporttest.Pass())
	writeArtifact(t, arts, "perf-plan-report-attempt-2-a1", map[string]any{"attempt": 2, "run_attempt": 1, "exit_code": zero, "cpu_model": "EPYC", "next": "final", "reason": "passed"}, reporttest.Pass())
	writeArtifact(t, arts, "perf-search-report-attempt-1-a1", map[string]any{"attempt": 1, "run_attempt": 1, "exit_code": 1, "cpu_model": "EPYC", "next": "final", "reason": "regression"}, reporttest.Regression())

	step := stepByID(t, job, "relay")
	outFile := filepath.Join(work, "github-output")
	// relay runs the step's script in bash as the runner would, for the
	// relay run relayRun, with the artifacts under work.
	relay := func(work, relayRun string) (string, error) {
		os.WriteFile(outFile, nil, 0o644)
		cmd := exec.Command("bash", "-e", "-c", e.ask(evalRequest{Mode: "interpolate", Src: step.Run, Ctx: ctx}).Value)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GITHUB_OUTPUT="+outFile, "GITHUB_API_URL="+strings.TrimSuffix(gh.URL, "/"),
			"ACTIONS_ID_TOKEN_REQUEST_URL="+jobTokens(t, is, "acme/api/.github/workflows/perf-relay.yml@refs/heads/main", "workflow_run", relayRun),
			"ACTIONS_ID_TOKEN_REQUEST_TOKEN=request-token")
		for k, v := range step.Env {
			cmd.Env = append(cmd.Env, k+"="+e.ask(evalRequest{Mode: "interpolate", Src: v, Ctx: ctx}).Value)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := relay(work, "8001")
	if err != nil {
		t.Fatalf("the relay's script: %v\n%s", err, out)
	}
	if got := readOutputs(t, outFile)["posted"]; got != "3" {
		t.Errorf("posted %v attempts, want 3\n%s", got, out)
	}
	checks := gh.Checks(head)
	got := map[string]string{}
	for _, c := range checks {
		got[c.Name] = c.Status + " " + c.Conclusion
	}
	if want := map[string]string{"perfgate": "completed success", "perfgate (perf-search)": "completed failure"}; len(checks) != 2 || !maps.Equal(got, want) {
		t.Errorf("checks on the fork's head %s: %+v, want %v\n%s", head, checks, want, out)
	}
	if all := gh.AllChecks(); len(all) != len(checks) {
		t.Errorf("checks elsewhere than the fork's head: %+v", all)
	}

	wr := ctx["github"].(map[string]any)["event"].(map[string]any)["workflow_run"].(map[string]any)
	// The same relay for a run GitHub's record does not back (its head is
	// another commit) is refused and the step fails.
	gh.AddRun("acme/api", githubtest.Run{ID: 7002, Event: "pull_request", HeadSHA: strings.Repeat("e1", 20), RunAttempt: 1, HeadRepository: "mallory/api"})
	wr["id"] = 7002
	out, err = relay(work, "8002")
	if err == nil || !strings.Contains(out, "answered 403") || !strings.Contains(out, "head_sha") {
		t.Errorf("relaying run 7002, whose record is for another commit: %v\n%s", err, out)
	}

	// A fork run whose last attempt the service would retry leaves the
	// check in progress: the step fails and says to re-run.
	gh.AddRun("acme/api", githubtest.Run{ID: 7003, Event: "pull_request", HeadSHA: head, RunAttempt: 1, HeadRepository: "mallory/api"})
	wr["id"] = 7003
	short := t.TempDir()
	writeArtifact(t, filepath.Join(short, "perf-artifacts"), "api-report-attempt-1-a1", map[string]any{"attempt": 1, "run_attempt": 1, "exit_code": two, "cpu_model": "EPYC", "next": "final", "reason": "the run's own policy"}, reporttest.CannotJudge())
	out, err = relay(short, "8003")
	if err == nil || !strings.Contains(out, "re-run the fork's perf workflow") {
		t.Errorf("relaying run 7003, one attempt the service retries: %v\n%s", err, out)
	}
}
