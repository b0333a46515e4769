package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/report/reporttest"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/client"
	"github.com/perfgate/perfgate/internal/verdict/httpapi"
	"github.com/perfgate/perfgate/internal/verdict/httpapi/apitest"
	"github.com/perfgate/perfgate/internal/verdict/httpapi/oidctest"
)

const (
	prHead      = "1111111111111111111111111111111111111111"
	stallyModel = "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz"
)

// actionsJob is the environment of one GitHub Actions job of run 7001 of
// acme/api on pull request 42, whose runner hands out OIDC tokens signed
// by is (the runner's token endpoint is a fake on loopback, the issuer
// and the verdict service are real).
type actionsJob struct {
	env       map[string]string
	tokenAsks atomic.Int32
	token     string
}

func newActionsJob(t *testing.T, is *oidctest.Issuer, service string) *actionsJob {
	t.Helper()
	claims := is.Claims()
	claims["run_id"] = "7001" // the service binds an attempt to its token's run
	j := &actionsJob{token: oidctest.Sign(t, is.Key, claims)}
	const reqToken = "runner-request-token"
	runner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+reqToken {
			http.Error(w, "wrong request token", http.StatusUnauthorized)
			return
		}
		if aud := r.URL.Query().Get("audience"); aud != client.DefaultServiceAudience {
			http.Error(w, "asked for audience "+aud, http.StatusBadRequest)
			return
		}
		j.tokenAsks.Add(1)
		json.NewEncoder(w).Encode(map[string]string{"value": j.token})
	}))
	t.Cleanup(runner.Close)
	dir := t.TempDir()
	ev := filepath.Join(dir, "event.json")
	os.WriteFile(ev, []byte(`{"pull_request": {"number": 42, "head": {"sha": "`+prHead+`"}}}`), 0o644)
	j.env = map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": apitest.Repository, "GITHUB_EVENT_NAME": "pull_request",
		"GITHUB_EVENT_PATH": ev, "GITHUB_SHA": "2222222222222222222222222222222222222222", // the merge commit
		"GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_OUTPUT":                filepath.Join(dir, "output"),
		"ACTIONS_ID_TOKEN_REQUEST_URL": runner.URL + "/token?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": reqToken,
		client.ServiceEnv: service,
	}
	return j
}

func (j *actionsJob) run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	os.WriteFile(j.env["GITHUB_OUTPUT"], nil, 0o644)
	var out, errb bytes.Buffer
	// The client's retries against a service that is down wait 10 ms,
	// doubling, not its 500 ms: the same four tries in 70 ms, not 3.5 s.
	err = RunIO(context.Background(), args, &IO{Out: &out, Err: &errb, Getenv: func(k string) string { return j.env[k] }, ServiceBackoff: 10 * time.Millisecond})
	// The token may be in the job log only in its ::add-mask:: line; the
	// test never prints it.
	for _, s := range []string{out.String(), errb.String()} {
		if n, masks := strings.Count(s, j.token), strings.Count(s, "::add-mask::"+j.token); n != masks {
			t.Fatalf("perfgate %s wrote the OIDC token outside an ::add-mask:: line", strings.Join(args, " "))
		}
	}
	return strings.ReplaceAll(out.String(), j.token, "<token>"), errb.String(), err
}

// TestServiceRecordsAttemptsAndDecides plays a pull request's gate through
// a real verdict service (SQLite) that trusts a test issuer: each
// attempt's `attempts next` posts the attempt with the job's OIDC token and
// takes the service's decision, then `verdict` posts them again (repeats)
// and prints the service's final word.
func TestServiceRecordsAttemptsAndDecides(t *testing.T) {
	is := oidctest.New(t)
	srv := apitest.Start(t, func(a *httpapi.Auth, o *httpapi.Options) {
		a.OIDC = &httpapi.OIDC{Issuer: is.URL, Audience: client.DefaultServiceAudience, Allow: map[int64]string{4242: apitest.Repository}}
	})
	job := newActionsJob(t, is, srv.URL)
	// The workflow lists the model as stall-prone, the service does not:
	// the service's decision is the one that counts.
	job.env[attempts.StallProneEnv] = stallyModel
	reports := t.TempDir()

	attempt := func(n int, rep *report.Report, code string) string {
		t.Helper()
		run := filepath.Join(reports, attempts.FolderPrefix+itoa(n), "perf-run")
		os.MkdirAll(run, 0o755)
		rep.Attempt = n
		if err := report.Write(filepath.Join(run, "latest.json"), rep); err != nil {
			t.Fatal(err)
		}
		out, errs, err := job.run(t, "attempts", "next", "--attempt", itoa(n), "--exit-code", code, "--cpu-model", stallyModel,
			"--report", filepath.Join(run, "latest.json"), "--record", filepath.Join(run, "attempt.json"))
		if err != nil {
			t.Fatalf("attempts next %d: %v\n%s", n, err, errs)
		}
		if !strings.Contains(errs, "decided by the verdict service "+srv.URL) {
			t.Errorf("attempts next %d does not say the service decided:\n%s%s", n, out, errs)
		}
		return out
	}
	if out := attempt(1, reporttest.CannotJudge(), "2"); !strings.HasPrefix(out, "::add-mask::<token>\nretry\n") {
		t.Errorf("attempt 1 (cannot judge) printed %q, want the token masked, then retry", out)
	}
	// Locally an exit 1 on a STALL_PRONE model retries; the service, with
	// no stall-prone models configured, says final.
	if out := attempt(2, reporttest.Regression(), "1"); !strings.Contains(out, "\nfinal\n") {
		t.Errorf("attempt 2 (a regression on %s) printed %q, want the service's final", stallyModel, out)
	}
	out, errs, err := job.run(t, "verdict", "--reports", reports, "--out", filepath.Join(t.TempDir(), "v"))
	if exit.Code(err) != exit.Regression {
		t.Fatalf("verdict: %v (exit %d), want exit 1\n%s%s", err, exit.Code(err), out, errs)
	}
	if !strings.Contains(out, "service "+srv.URL+": attempt 2: final (regression)") {
		t.Errorf("verdict does not print the service's decision:\n%s%s", out, errs)
	}
	// One token a request: the service accepts each token once. The two
	// attempt commands post one attempt each; verdict posts both again
	// and asks for the decision.
	if job.tokenAsks.Load() != 5 {
		t.Errorf("the runner was asked for %d OIDC tokens, want one per request (5)", job.tokenAsks.Load())
	}

	got, err := srv.Store.RunAttempts(context.Background(), verdict.RunKey{Repository: apitest.Repository, RunID: 7001, RunAttempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("the service stored %d attempts, want 2", len(got))
	}
	for i, want := range []struct {
		code int
		next string
	}{{2, verdict.NextRetry}, {1, verdict.NextFinal}} {
		f := got[i].Facts
		if f.Attempt != i+1 || f.ExitCode == nil || *f.ExitCode != want.code || got[i].Decision.Next != want.next {
			t.Errorf("stored attempt %d: attempt %d exit %v decision %+v, want exit %d, %s", i+1, f.Attempt, f.ExitCode, got[i].Decision, want.code, want.next)
		}
		// The check belongs on the pull request's head, not the merge commit.
		if f.Event != "pull_request" || f.HeadSHA != prHead || f.PR != 42 || f.RunAttempt != 1 || f.CPUModel != stallyModel ||
			f.BaseSHA != reporttest.Pass().Base.Commit || f.DetailsURL != "https://github.com/acme/api/actions/runs/7001" {
			t.Errorf("stored attempt %d has the facts %+v", i+1, f)
		}
		if len(got[i].Report) == 0 {
			t.Errorf("stored attempt %d has no report", i+1)
		}
	}
	// A re-run of the workflow keeps the run id and raises the run
	// attempt: the service judges it anew and decides.
	job.env["GITHUB_RUN_ATTEMPT"] = "2"
	rerunClaims := is.Claims()
	rerunClaims["run_id"], rerunClaims["run_attempt"] = "7001", "2" // the re-run's job token
	job.token = oidctest.Sign(t, is.Key, rerunClaims)
	rerun := filepath.Join(t.TempDir(), "latest.json")
	report.Write(rerun, reporttest.Pass())
	out, errs, err = job.run(t, "attempts", "next", "--attempt", "1", "--exit-code", "0", "--cpu-model", stallyModel, "--report", rerun, "--record", "")
	if err != nil || !strings.Contains(out, "\nfinal\n") || !strings.Contains(errs, "decided by the verdict service") || strings.Contains(out, "the local policy decided instead") {
		t.Errorf("attempts next on a re-run: %v\n%s%s", err, out, errs)
	}
	if as, err := srv.Store.RunAttempts(context.Background(), verdict.RunKey{Repository: apitest.Repository, RunID: 7001, RunAttempt: 2}); err != nil || len(as) != 1 {
		t.Errorf("the re-run's attempts: %d, %v; want its attempt 1 stored apart", len(as), err)
	}
	d, err := srv.Store.GetRun(context.Background(), verdict.RunKey{Repository: apitest.Repository, RunID: 7001, RunAttempt: 1})
	if err != nil || d.Verdict != verdict.WordRegression || d.FinalAttempt != 2 {
		t.Errorf("the service's run: %+v, %v; want final regression at attempt 2", d, err)
	}
}

// TestServiceUnreachableDecidesLocally: with the service down, `attempts
// next` still answers, by the local policy, and says so; `verdict` keeps
// its own exit code.
func TestServiceUnreachableDecidesLocally(t *testing.T) {
	t.Parallel()
	is := oidctest.New(t)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	job := newActionsJob(t, is, down.URL)
	job.env[attempts.StallProneEnv] = stallyModel
	reports := t.TempDir()
	run := filepath.Join(reports, attempts.FolderPrefix+"1", "perf-run")
	os.MkdirAll(run, 0o755)
	report.Write(filepath.Join(run, "latest.json"), reporttest.Regression())
	out, errs, err := job.run(t, "attempts", "next", "--attempt", "1", "--exit-code", "1", "--cpu-model", stallyModel,
		"--report", filepath.Join(run, "latest.json"), "--record", filepath.Join(run, "attempt.json"))
	if err != nil {
		t.Fatalf("attempts next: %v\n%s", err, errs)
	}
	if !strings.Contains(out, "\nretry\n") || !strings.Contains(out, "::warning::the verdict service "+down.URL+" did not decide") ||
		!strings.Contains(out, "the local policy decided instead") {
		t.Errorf("attempts next with the service down printed:\n%s%s", out, errs)
	}
	out, errs, err = job.run(t, "verdict", "--reports", reports, "--out", filepath.Join(t.TempDir(), "v"))
	// Attempt 1 is the last that ran to an exit code: its regression.
	if exit.Code(err) != exit.Regression {
		t.Fatalf("verdict: %v, want the local regression\n%s%s", err, out, errs)
	}
	if !strings.Contains(out, "::warning::the verdict service "+down.URL+" is unreachable") {
		t.Errorf("verdict with the service down does not say so:\n%s%s", out, errs)
	}
}

// Without a service nothing asks for a token or posts: a job without
// id-token permission works as before.
func TestNoServiceNoToken(t *testing.T) {
	is := oidctest.New(t)
	job := newActionsJob(t, is, "")
	out, errs, err := job.run(t, "attempts", "next", "--attempt", "1", "--exit-code", "0", "--cpu-model", stallyModel, "--record", "")
	if err != nil || !strings.HasPrefix(out, "final\n") {
		t.Fatalf("attempts next without a service: %v\n%s%s", err, out, errs)
	}
	if job.tokenAsks.Load() != 0 || strings.Contains(out+errs, "service") {
		t.Errorf("without a service the job asked for %d tokens, printed:\n%s%s", job.tokenAsks.Load(), out, errs)
	}
}

// TestServiceAddressWithPasswordRefused: a --service address holding a
// user name and password is refused by both commands, with a job token and
// without one (a fork's pull request), and the password never reaches the
// job's log: the warning a job without a token gives quotes the address.
func TestServiceAddressWithPasswordRefused(t *testing.T) {
	is := oidctest.New(t)
	reports := t.TempDir()
	run := filepath.Join(reports, attempts.FolderPrefix+"1", "perf-run")
	os.MkdirAll(run, 0o755)
	report.Write(filepath.Join(run, "latest.json"), reporttest.Pass())
	const password = "hunter2"
	for _, tc := range []struct {
		name  string
		token bool
		args  []string
	}{
		{"attempts next with a job token", true, []string{"attempts", "next", "--attempt", "1", "--exit-code", "0", "--cpu-model", stallyModel, "--record", ""}},
		{"attempts next on a fork's pull request", false, []string{"attempts", "next", "--attempt", "1", "--exit-code", "0", "--cpu-model", stallyModel, "--record", ""}},
		{"verdict with a job token", true, []string{"verdict", "--reports", reports, "--out", t.TempDir()}},
		{"verdict on a fork's pull request", false, []string{"verdict", "--reports", reports, "--out", t.TempDir()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := newActionsJob(t, is, "https://ci:"+password+"@verdicts.example.com")
			if !tc.token {
				delete(job.env, "ACTIONS_ID_TOKEN_REQUEST_URL")
				delete(job.env, "ACTIONS_ID_TOKEN_REQUEST_TOKEN")
			}
			out, errs, err := job.run(t, tc.args...)
			if exit.Code(err) != exit.CannotJudge || err == nil || !strings.Contains(err.Error(), "https://***@verdicts.example.com") {
				t.Errorf("exit %d (%v), want a refusal naming the address without its password\n%s%s", exit.Code(err), err, out, errs)
			}
			if log := out + errs + fmt.Sprint(err); strings.Contains(log, password) {
				t.Errorf("the password reached the job's log:\n%s%s%v", out, errs, err)
			}
			if job.tokenAsks.Load() != 0 {
				t.Errorf("asked the runner for %d tokens before refusing the address", job.tokenAsks.Load())
			}
		})
	}
}
