package publish_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/cli"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/report/reporttest"
	"github.com/perfgate/perfgate/internal/verdict/client"
	"github.com/perfgate/perfgate/internal/verdict/daemon"
	"github.com/perfgate/perfgate/internal/verdict/publish"
)

const (
	e2eRepo  = "acme/api"
	e2eModel = "AMD EPYC 7763 64-Core Processor"
	prNumber = 42
	prHead   = "1111111111111111111111111111111111111111"
	prMerge  = "2222222222222222222222222222222222222222" // GITHUB_SHA of a pull_request run
	prHead2  = "3333333333333333333333333333333333333333" // the pull request's next push
	mgHead   = "4444444444444444444444444444444444444444"
	tagHead  = "5555555555555555555555555555555555555555"
	lateHead = "6666666666666666666666666666666666666666"
)

// verdictd runs the real perfgate-verdictd (serve, SQLite) in this process
// against the fake GitHub, with a repository token for acme/api; it stops
// in t's Cleanup.
func verdictd(t *testing.T, gh *publish.FakeGitHub) (url, token string) {
	t.Helper()
	data := t.TempDir()
	env := map[string]string{"GITHUB_API_URL": gh.APIURL(), "PERFGATE_GITHUB_TOKEN": publish.FakeToken}
	getenv := func(k string) string { return env[k] }
	var out bytes.Buffer
	if err := daemon.Main(context.Background(), []string{"token", "add", e2eRepo, "--data", data}, daemon.IO{Out: &out, Err: io.Discard, Getenv: getenv}); err != nil {
		t.Fatalf("token add: %v", err)
	}
	token = strings.TrimSpace(out.String())

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- daemon.Main(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--data", data}, daemon.IO{Out: io.Discard, Err: pw, Getenv: getenv})
		pw.Close()
	}()
	addr := make(chan string, 1)
	var logMu sync.Mutex
	var logs strings.Builder
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			logMu.Lock()
			logs.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving" {
				addr <- line.Addr
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("perfgate-verdictd: %v", err)
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("perfgate-verdictd's log:\n%s", logs.String())
			logMu.Unlock()
		}
	})
	select {
	case a := <-addr:
		return "http://" + a, token
	case err := <-done:
		done <- nil // the Cleanup waits on done: do not leave it waiting forever
		t.Fatalf("perfgate-verdictd ended before serving: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("perfgate-verdictd did not serve within 30 s")
	}
	return "", ""
}

// run is one workflow run as its jobs see it: GitHub's environment
// variables and event file, the gate's name, and the attempts' report
// folders the verdict job downloads.
type run struct {
	t       *testing.T
	env     map[string]string
	reports string
}

func newRun(t *testing.T, service, token string, id int64, runAttempt int, event, sha, payload, gate string) *run {
	t.Helper()
	dir := t.TempDir()
	ev := filepath.Join(dir, "event.json")
	if err := os.WriteFile(ev, []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	return &run{t: t, reports: filepath.Join(dir, "perf-reports"), env: map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": e2eRepo, "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": ev,
		"GITHUB_SHA": sha, "GITHUB_RUN_ID": fmt.Sprint(id), "GITHUB_RUN_ATTEMPT": fmt.Sprint(runAttempt),
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_OUTPUT": filepath.Join(dir, "output"),
		client.ServiceEnv: service, client.ServiceTokenEnv: token, client.GateEnv: gate,
	}}
}

// perfgate runs the perfgate command in this job's environment.
func (r *run) perfgate(args ...string) (string, error) {
	r.t.Helper()
	os.WriteFile(r.env["GITHUB_OUTPUT"], nil, 0o644)
	var out bytes.Buffer
	err := cli.RunIO(context.Background(), args, &cli.IO{Out: &out, Err: &out, Getenv: func(k string) string { return r.env[k] }})
	return out.String(), err
}

// attempt is attempt job n: the gate wrote rep and exited with its code,
// then `perfgate attempts next --service` asks the service; it returns
// the decision (retry or final).
func (r *run) attempt(n int, rep *report.Report) string {
	r.t.Helper()
	folder := filepath.Join(r.reports, fmt.Sprintf("perf-report-attempt-%d", n), "perf-run")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		r.t.Fatal(err)
	}
	rep.Attempt = n
	if err := report.Write(filepath.Join(folder, "latest.json"), rep); err != nil {
		r.t.Fatal(err)
	}
	out, err := r.perfgate("attempts", "next", "--attempt", fmt.Sprint(n), "--exit-code", fmt.Sprint(int(rep.Verdict.Code)),
		"--cpu-model", e2eModel, "--report", filepath.Join(folder, "latest.json"), "--record", filepath.Join(folder, "attempt.json"))
	if err != nil {
		r.t.Fatalf("attempts next %d: %v\n%s", n, err, out)
	}
	if !strings.Contains(out, "decided by the verdict service") || strings.Contains(out, "local policy decided") {
		r.t.Fatalf("attempts next %d was not decided by the service:\n%s", n, out)
	}
	for _, next := range []string{"retry", "final"} {
		if strings.Contains(out, "\n"+next+"\n") || strings.HasPrefix(out, next+"\n") {
			return next
		}
	}
	r.t.Fatalf("attempts next %d printed neither retry nor final:\n%s", n, out)
	return ""
}

// verdict is the verdict job: `perfgate verdict --service` over every
// attempt's folder; it returns the command's exit code and output.
func (r *run) verdict() (int, string) {
	r.t.Helper()
	out, err := r.perfgate("verdict", "--reports", r.reports, "--out", filepath.Join(r.t.TempDir(), "verdict"))
	return exit.Code(err), out
}

func prPayload(head string) string {
	return fmt.Sprintf(`{"action": "synchronize", "number": %d, "pull_request": {"number": %d, "head": {"sha": %q}, "base": {"ref": "main"}}}`, prNumber, prNumber, head)
}

// only is the one check run named name on sha, failing the test when
// there is not exactly one.
func only(t *testing.T, gh *publish.FakeGitHub, sha, name string) publish.FakeCheck {
	t.Helper()
	var found []publish.FakeCheck
	for _, c := range gh.Checks(sha) {
		if c.Name == name {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d check runs named %q on %s, want exactly one: %+v", len(found), name, sha[:7], found)
	}
	return found[0]
}

// TestServiceEndToEnd drives the real service through the perfgate
// command, as the reusable workflow's jobs run it, against a fake of
// GitHub's REST API that records every request (issue 20's "must show").
func TestServiceEndToEnd(t *testing.T) {
	gh := publish.NewFakeGitHub(t)
	// GitHub's records of the runs below, which the service holds each
	// posted attempt against.
	gh.AddWorkflowRun(9001, "pull_request", prHead, 2, prNumber)
	gh.AddWorkflowRun(9002, "pull_request", prHead2, 1, prNumber)
	gh.AddWorkflowRun(9003, "merge_group", mgHead, 1)
	gh.AddWorkflowRun(9004, "push", tagHead, 1)
	gh.AddWorkflowRun(9005, "push", lateHead, 1)
	url, token := verdictd(t, gh)

	// A pull request's run: attempt 1 cannot judge (retry), attempt 2
	// regresses (final); the head gets one failed check run, not the
	// merge commit GITHUB_SHA names.
	pr := newRun(t, url, token, 9001, 1, "pull_request", prMerge, prPayload(prHead), "perf-plan")
	if next := pr.attempt(1, reporttest.CannotJudge()); next != "retry" {
		t.Fatalf("attempt 1 (exit 2): %s, want retry", next)
	}
	if c := only(t, gh, prHead, "perfgate"); c.Status != "in_progress" {
		t.Errorf("after attempt 1 the check is %s, want in_progress", c.Status)
	}
	if next := pr.attempt(2, reporttest.Regression()); next != "final" {
		t.Fatalf("attempt 2 (exit 1): %s, want final", next)
	}
	if code, out := pr.verdict(); code != exit.Regression || !strings.Contains(out, "attempt 2: final (regression)") {
		t.Fatalf("the verdict job: exit %d, want 1\n%s", code, out)
	}
	check := only(t, gh, prHead, "perfgate")
	if check.Status != "completed" || check.Conclusion != "failure" || !strings.HasPrefix(check.Title, "regression") {
		t.Errorf("the check after the regression: %+v", check)
	}
	for _, p := range check.AnnotationPaths {
		if p != "perf/plan.toml" {
			t.Errorf("an annotation on %s, want perf/plan.toml", p)
		}
	}
	if len(gh.Checks(prMerge)) != 0 {
		t.Errorf("a check run on the merge commit GITHUB_SHA names: %+v", gh.Checks(prMerge))
	}
	comments := gh.Comments(prNumber)
	if len(comments) != 1 || !strings.HasPrefix(comments[0].Body, publish.Marker("")) {
		t.Fatalf("the pull request's comments: %+v, want perfgate's one", comments)
	}
	comment := comments[0]

	// A second plan in the same run: its own check and its own comment.
	search := newRun(t, url, token, 9001, 1, "pull_request", prMerge, prPayload(prHead), "search")
	if next := search.attempt(1, reporttest.Pass()); next != "final" {
		t.Fatalf("the second plan's attempt 1: %s, want final", next)
	}
	if code, out := search.verdict(); code != exit.Pass {
		t.Fatalf("the second plan's verdict job: exit %d\n%s", code, out)
	}
	if c := only(t, gh, prHead, "perfgate (search)"); c.Conclusion != "success" {
		t.Errorf("the second plan's check: %+v", c)
	}
	if c := only(t, gh, prHead, "perfgate"); c.Conclusion != "failure" {
		t.Errorf("the second plan changed the first plan's check: %+v", c)
	}
	comments = gh.Comments(prNumber)
	if len(comments) != 2 || comments[0].Body != comment.Body || !strings.HasPrefix(comments[1].Body, publish.Marker("search")) {
		t.Fatalf("after the second plan the comments are %+v, want the first plan's unchanged and one of search's", comments)
	}

	// "Re-run all jobs": the same run id, run attempt 2, passes; the
	// head's one check run turns to success.
	rerun := newRun(t, url, token, 9001, 2, "pull_request", prMerge, prPayload(prHead), "perf-plan")
	if next := rerun.attempt(1, reporttest.Pass()); next != "final" {
		t.Fatalf("the re-run's attempt 1: %s, want final", next)
	}
	if code, out := rerun.verdict(); code != exit.Pass || !strings.Contains(out, "attempt 1: final (pass)") {
		t.Fatalf("the re-run's verdict job: exit %d, want 0\n%s", code, out)
	}
	if c := only(t, gh, prHead, "perfgate"); c.ID != check.ID || c.Conclusion != "success" || c.Title != "pass" {
		t.Errorf("after the re-run the check is %+v, want run %d turned to success", c, check.ID)
	}

	// The pull request's next push: a check on the new head, and the one
	// comment edited.
	push := newRun(t, url, token, 9002, 1, "pull_request", prMerge, prPayload(prHead2), "perf-plan")
	if next := push.attempt(1, reporttest.Regression()); next != "final" {
		t.Fatalf("the next push's attempt 1: %s, want final", next)
	}
	if code, _ := push.verdict(); code != exit.Regression {
		t.Fatalf("the next push's verdict job: exit %d, want 1", code)
	}
	if c := only(t, gh, prHead2, "perfgate"); c.Conclusion != "failure" {
		t.Errorf("the next push's check: %+v", c)
	}
	comments = gh.Comments(prNumber)
	if len(comments) != 2 || comments[0].ID != comment.ID || comments[0].Body == comment.Body {
		t.Errorf("after the next push the comments are %+v, want comment %d edited", comments, comment.ID)
	}
	if n := gh.Calls("POST", fmt.Sprintf("/issues/%d/comments", prNumber)); n != 2 {
		t.Errorf("%d comments posted, want 2 (one a plan)", n)
	}

	// The merge queue: the check goes on merge_group.head_sha.
	mg := newRun(t, url, token, 9003, 1, "merge_group", mgHead, fmt.Sprintf(`{"merge_group": {"head_sha": %q, "head_ref": "refs/heads/gh-readonly-queue/main/pr-42-x"}}`, mgHead), "perf-plan")
	mg.attempt(1, reporttest.Pass())
	if code, _ := mg.verdict(); code != exit.Pass {
		t.Fatalf("the merge group's verdict job: exit %d", code)
	}
	if c := only(t, gh, mgHead, "perfgate"); c.Conclusion != "success" {
		t.Errorf("the merge group's check: %+v", c)
	}

	// A release: release.yml runs on the pushed tag, judges the release
	// event, and drafted the release first; the marked line lands once in
	// its body, and GET /v1/release-line returns it. The line needs the
	// base SHA the client read from the report and the report's base_note.
	gh.AddRelease("v1.4.0", "## What's changed\n* faster search\n", true)
	rel := newRun(t, url, token, 9004, 1, "push", tagHead, `{"ref": "refs/tags/v1.4.0"}`, "perf-plan")
	rel.env[client.EventEnv], rel.env[client.TagEnv] = "release", "v1.4.0"
	rel.attempt(1, reporttest.Pass())
	for range 2 { // the verdict job re-run: its repeats write nothing twice
		if code, out := rel.verdict(); code != exit.Pass {
			t.Fatalf("the release's verdict job: exit %d\n%s", code, out)
		}
	}
	start, end := publish.ReleaseLineMarkers("")
	body := gh.ReleaseBody("v1.4.0")
	line := "Performance: " + reporttest.Pass().BaseNote
	if strings.Count(body, start) != 1 || strings.Count(body, end) != 1 || strings.Count(body, line) != 1 || !strings.HasPrefix(body, "## What's changed") {
		t.Errorf("the release body:\n%s\nwant the notes and one marked line %q", body, line)
	}
	got, err := httpGetLine(url, token, "v1.4.0")
	if err != nil || got != line {
		t.Errorf("GET /v1/release-line = %q, %v; want %q", got, err, line)
	}

	// A release made after its gate: the line waits, and the verdict job's
	// repeat writes it once the release exists, without a second check.
	late := newRun(t, url, token, 9005, 1, "push", lateHead, `{"ref": "refs/tags/v1.5.0"}`, "perf-plan")
	late.env[client.EventEnv], late.env[client.TagEnv] = "release", "v1.5.0"
	late.attempt(1, reporttest.Pass())
	if code, out := late.verdict(); code != exit.Pass || !strings.Contains(out, "no release tagged v1.5.0") {
		t.Fatalf("the verdict job before the release exists: exit %d\n%s", code, out)
	}
	checksBefore := gh.Calls("POST", "/check-runs")
	lateCheck := fmt.Sprintf("/check-runs/%d", only(t, gh, lateHead, "perfgate").ID)
	updatesBefore := gh.Calls("PATCH", lateCheck)
	gh.AddRelease("v1.5.0", "", true)
	if code, out := late.verdict(); code != exit.Pass || strings.Contains(out, "could not publish") {
		t.Fatalf("the verdict job once the release exists: exit %d\n%s", code, out)
	}
	if b := gh.ReleaseBody("v1.5.0"); strings.Count(b, start) != 1 || !strings.Contains(b, line) {
		t.Errorf("the late release's body: %q", b)
	}
	if n := gh.Calls("POST", "/check-runs"); n != checksBefore {
		t.Errorf("the publish retry created %d check runs, want none (the check had landed)", n-checksBefore)
	}
	if n := gh.Calls("PATCH", lateCheck); n != updatesBefore {
		t.Errorf("the publish retry updated the check %d times, want none: only the release line had failed", n-updatesBefore)
	}
	if c := only(t, gh, lateHead, "perfgate"); c.Conclusion != "success" {
		t.Errorf("the late release's check: %+v", c)
	}
}

func httpGetLine(service, token, tag string) (string, error) {
	req, err := http.NewRequest(http.MethodGet, service+"/v1/release-line?repo="+e2eRepo+"&tag="+tag, nil)
	if err != nil {
		return "", err
	}
	// Reads need a credential for the repository (--reads token, the default).
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct{ Line string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s", resp.Status)
	}
	return out.Line, nil
}
