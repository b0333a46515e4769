package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/report/reporttest"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/client"
	"github.com/perfgate/perfgate/internal/verdict/httpapi/apitest"
)

// service is the real HTTP API (apitest) with a token for acme/api.
func service(t *testing.T) (string, string) {
	t.Helper()
	s := apitest.Start(t, nil)
	return s.URL, s.Token
}

func submission(t *testing.T, event string, run int64, n, exit int) verdict.Submission {
	t.Helper()
	r := reporttest.Pass()
	if exit == 2 {
		r = reporttest.CannotJudge()
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	f := verdict.Facts{Repository: "acme/api", Event: event, HeadSHA: fmt.Sprintf("%040x", run), RunID: run, RunAttempt: 1, Attempt: n, CPUModel: "EPYC", ExitCode: &exit}
	if event == "release" {
		f.Tag = "v1.0.0"
	}
	return verdict.Submission{Facts: f, Report: b}
}

func TestClientAgainstTheService(t *testing.T) {
	url, tok := service(t)
	ctx := context.Background()
	c, err := client.New(url+"/", client.StaticToken(tok), nil)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.PostAttempt(ctx, submission(t, "push", 1, 1, 2))
	if err != nil || !rc.Created || rc.Attempt.Decision.Next != verdict.NextRetry {
		t.Fatalf("PostAttempt: %+v, %v", rc, err)
	}
	rc, err = c.PostAttempt(ctx, submission(t, "push", 1, 1, 2))
	if err != nil || rc.Created {
		t.Errorf("the repeat: %+v, %v", rc, err)
	}
	d, err := c.Decision(ctx, verdict.RunKey{Repository: "acme/api", RunID: 1, RunAttempt: 1}, 1)
	if err != nil || d.Next != verdict.NextRetry || d.Reason == "" {
		t.Errorf("Decision: %+v, %v", d, err)
	}
	if _, err := c.Decision(ctx, verdict.RunKey{Repository: "acme/api", RunID: 1, RunAttempt: 1}, 2); !errors.Is(err, verdict.ErrNotFound) {
		t.Errorf("Decision of an unposted attempt: %v, want ErrNotFound", err)
	}
	if _, err := c.PostAttempt(ctx, submission(t, "push", 1, 2, 0)); err != nil {
		t.Fatal(err)
	}
	runs, err := c.Verdicts(ctx, verdict.Query{Repository: "acme/api", SHA: fmt.Sprintf("%040x", 1)})
	if err != nil || len(runs) != 1 || runs[0].Verdict != verdict.WordPass {
		t.Errorf("Verdicts: %+v, %v", runs, err)
	}
	if _, err := c.PostAttempt(ctx, submission(t, "release", 2, 1, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReleaseLine(ctx, "acme/api", "v1.0.0", ""); !errors.Is(err, verdict.ErrNoBase) {
		t.Errorf("ReleaseLine without a base: %v, want ErrNoBase", err)
	}
	bad := submission(t, "push", 3, 1, 0)
	bad.Facts.HeadSHA = "HEAD"
	_, err = c.PostAttempt(ctx, bad)
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Field != "facts.head_sha" {
		t.Errorf("a refused attempt: %v, want a 400 on facts.head_sha", err)
	}
	anon, _ := client.New(url, nil, nil)
	if _, err := anon.PostAttempt(ctx, submission(t, "push", 4, 1, 0)); !errors.As(err, &ae) || ae.Status != 401 {
		t.Errorf("posting without a token: %v, want 401", err)
	}
}

func TestClientRetriesWhatFailedInTransit(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"the store does not answer"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"next":"final","reason":"passed","verdict":"pass"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Backoff = time.Millisecond
	d, err := c.Decision(context.Background(), verdict.RunKey{Repository: "acme/api", RunID: 1, RunAttempt: 1}, 1)
	if err != nil || d.Verdict != "pass" || calls.Load() != 3 {
		t.Errorf("after two 503s: %+v, %v, %d calls", d, err, calls.Load())
	}
	calls.Store(-100)
	c.Tries = 2
	if _, err := c.Decision(context.Background(), verdict.RunKey{Repository: "acme/api", RunID: 1, RunAttempt: 1}, 1); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("after the last try: %v, want the 503", err)
	}
}

func TestActionsOIDC(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer request-token" || r.URL.Query().Get("audience") != "perfgate-verdictd" || r.URL.Query().Get("api-version") != "2.0" {
			http.Error(w, "bad request", http.StatusForbidden)
			return
		}
		w.Write([]byte(`{"value":"eyJ.the.jwt"}`))
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": srv.URL + "/token?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token"}
	src, err := client.ActionsOIDC(func(k string) string { return env[k] }, "perfgate-verdictd", nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := src(context.Background())
	if err != nil || tok != "eyJ.the.jwt" {
		t.Errorf("token %q, %v", tok, err)
	}
	wrong, _ := client.ActionsOIDC(func(k string) string { return env[k] }, "other", nil)
	if _, err := wrong(context.Background()); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a refused token request: %v", err)
	}
	if _, err := client.ActionsOIDC(func(string) string { return "" }, "x", nil); err == nil || !strings.Contains(err.Error(), "id-token: write") {
		t.Errorf("outside a job: %v, want the permissions advice", err)
	}
}

// The service's address is never quoted with a password, whether it
// parses or not, and one with a user part is refused: the job signs in
// with its OIDC token, and the address shows in the job's log.
func TestNewRefusesAnAddressWithCredentialsWithoutQuotingThem(t *testing.T) {
	const secret = "s3cret-pw"
	for _, addr := range []string{
		"https://ci:" + secret + "@verdicts.example.com",
		"https://ci:pa@ss%zz-" + secret + "@verdicts.example.com", // does not parse
		"ci:" + secret + "@verdicts.example.com",                  // no scheme
	} {
		_, err := client.New(addr, nil, nil)
		switch {
		case err == nil:
			t.Errorf("New(%q) took an address with a password", addr)
		case strings.Contains(err.Error(), secret):
			t.Errorf("New's refusal quotes the password: %q", err)
		case !strings.Contains(err.Error(), "verdicts.example.com"):
			t.Errorf("New's refusal does not name the address: %q", err)
		}
	}
}
