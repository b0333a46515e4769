package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/report/reporttest"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/client"
	"github.com/perfgate/perfgate/internal/verdict/httpapi"
	"github.com/perfgate/perfgate/internal/verdict/httpapi/apitest"
	"github.com/perfgate/perfgate/internal/verdict/httpapi/oidctest"
)

// TestJobTokenIsFreshForEveryRequest plays `perfgate verdict --service`
// with the job's OIDC token against a service that, as
// perfgate-verdictd serve does, accepts each token's jti once: posting
// two attempts and asking for the decision are three requests, each of
// which needs a token of its own. A token kept from one request for the
// next is refused as a replay, and the verdict job fails with exit 2.
func TestJobTokenIsFreshForEveryRequest(t *testing.T) {
	const head = "1111111111111111111111111111111111111111"
	is := oidctest.New(t)
	var srv *apitest.Server
	srv = apitest.Start(t, func(a *httpapi.Auth, o *httpapi.Options) {
		a.OIDC = &httpapi.OIDC{Issuer: is.URL, Audience: client.DefaultServiceAudience,
			Allow: map[int64]string{4242: apitest.Repository},
			UseTokenID: func(ctx context.Context, jti string, exp time.Time) (bool, error) {
				return srv.Store.UseTokenID(ctx, jti, exp)
			}}
	})

	// The runner signs a new token, with a jti of its own, at every ask,
	// as GitHub's does.
	var mu sync.Mutex
	var issued []string
	runner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims := is.Claims()
		claims["run_id"] = "7001"
		tok := oidctest.Sign(t, is.Key, claims)
		mu.Lock()
		issued = append(issued, tok)
		mu.Unlock()
		json.NewEncoder(w).Encode(map[string]string{"value": tok})
	}))
	t.Cleanup(runner.Close)

	dir := t.TempDir()
	ev := filepath.Join(dir, "event.json")
	if err := os.WriteFile(ev, []byte(`{"pull_request": {"number": 42, "head": {"sha": "`+head+`"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"GITHUB_REPOSITORY": apitest.Repository, "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": ev,
		"GITHUB_SHA": "2222222222222222222222222222222222222222", "GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "1",
		"ACTIONS_ID_TOKEN_REQUEST_URL": runner.URL + "/token", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token",
	}
	getenv := func(k string) string { return env[k] }
	var masked []string
	tok, err := client.JobToken(getenv, client.DefaultServiceAudience, func(s string) { masked = append(masked, s) })
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(srv.URL, tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	var posted []client.Posted
	for n, rep := range []*report.Report{reporttest.CannotJudge(), reporttest.Regression()} {
		rep.Attempt = n + 1
		path := filepath.Join(dir, fmt.Sprintf("attempt-%d.json", n+1))
		if err := report.Write(path, rep); err != nil {
			t.Fatal(err)
		}
		posted = append(posted, client.Posted{Outcome: attempts.Outcome{Number: n + 1, HasExitCode: true, ExitCode: int(rep.Verdict.Code), CPUModel: rep.CPUModel}, Report: path})
	}
	var out, errb strings.Builder
	var warnings []string
	job := &client.Job{URL: srv.URL, Client: c, Getenv: getenv, Out: &out, Err: &errb,
		Warn: func(format string, a ...any) { warnings = append(warnings, fmt.Sprintf(format, a...)) }}
	if err := job.Publish(context.Background(), posted, true, 1); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if !strings.Contains(out.String(), "attempt 2: final (regression)") || len(warnings) > 0 {
		t.Errorf("Publish printed %q, warned %q; want the service's final regression and no warning", out.String(), warnings)
	}
	got, err := srv.Store.RunAttempts(context.Background(), verdict.RunKey{Repository: apitest.Repository, RunID: 7001, RunAttempt: 1})
	if err != nil || len(got) != 2 {
		t.Fatalf("the service stored %d attempts (%v), want 2", len(got), err)
	}
	// Every token that went out was masked in the job log first.
	mu.Lock()
	defer mu.Unlock()
	if len(issued) != 3 || strings.Join(masked, " ") != strings.Join(issued, " ") {
		t.Errorf("the runner issued %d tokens for 3 requests and %d were masked; want one per request, each masked", len(issued), len(masked))
	}
}
