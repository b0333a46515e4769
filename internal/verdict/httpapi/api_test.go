package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/report/reporttest"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db"
	"github.com/perfgate/perfgate/internal/verdict/httpapi"
	"github.com/perfgate/perfgate/internal/verdict/httpapi/apitest"
)

func sha(i int) string { return fmt.Sprintf("%040x", i) }

// api is the whole HTTP surface over a real SQLite store (apitest).
type api struct {
	url   string
	st    *db.DB
	token string
}

func newAPI(t *testing.T, configure func(a *httpapi.Auth, o *httpapi.Options)) *api {
	t.Helper()
	s := apitest.Start(t, configure)
	return &api{url: s.URL, st: s.Store, token: s.Token}
}

// submission is a body for POST /v1/attempts: an attempt of run on the
// pull request 42 that exited c, with its report.
func submission(t *testing.T, run int64, n, c int) []byte {
	t.Helper()
	r := reporttest.Pass()
	switch c {
	case 1:
		r = reporttest.Regression()
	case 2:
		r = reporttest.CannotJudge()
	}
	rep, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(verdict.Submission{Facts: verdict.Facts{Repository: "acme/api", Event: "pull_request",
		HeadSHA: sha(0xabc), PR: 42, RunID: run, RunAttempt: 1, Attempt: n, CPUModel: "EPYC", ExitCode: &c}, Report: rep})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type answer struct {
	status int
	body   map[string]any
	raw    string
	header http.Header
}

func (a *api) do(t *testing.T, method, path, token string, body []byte) answer {
	t.Helper()
	req, err := http.NewRequest(method, a.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ans := answer{status: resp.StatusCode, raw: string(raw), header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &ans.body); err != nil {
			t.Fatalf("%s %s: the JSON answer does not parse: %v\n%s", method, path, err, raw)
		}
	}
	return ans
}

func TestAPI(t *testing.T) {
	a := newAPI(t, func(_ *httpapi.Auth, o *httpapi.Options) { o.MaxBody = 200_000 })
	other, otherHash, _ := httpapi.NewToken()
	if err := a.st.PutTokenHash(context.Background(), "someone/else", otherHash); err != nil {
		t.Fatal(err)
	}
	big := append([]byte(`{"facts":{"repository":"`), bytes.Repeat([]byte("a"), 300_000)...)
	unknown := bytes.Replace(submission(t, 1, 1, 0), []byte(`"run_id"`), []byte(`"bogus":1,"run_id"`), 1)
	for _, tc := range []struct {
		name, method, path, token string
		body                      []byte
		status                    int
		want                      string // in the body
	}{
		{"no credential", "POST", "/v1/attempts", "", submission(t, 1, 1, 0), 401, "no credential"},
		{"unknown token", "POST", "/v1/attempts", "pgv_nope", submission(t, 1, 1, 0), 401, "token add"},
		{"another repository's token", "POST", "/v1/attempts", other, submission(t, 1, 1, 0), 403, "for someone/else, not acme/api"},
		{"stored", "POST", "/v1/attempts", a.token, submission(t, 1, 1, 2), 201, `"created":true`},
		{"a repeat returns the stored one", "POST", "/v1/attempts", a.token, submission(t, 1, 1, 2), 200, `"created":false`},
		{"final", "POST", "/v1/attempts", a.token, submission(t, 1, 2, 0), 201, `"verdict":"pass"`},
		{"unknown field named", "POST", "/v1/attempts", a.token, unknown, 400, `unknown field \"bogus\"`},
		{"too large", "POST", "/v1/attempts", a.token, big, 413, "over the limit of 200000 bytes"},
		{"not JSON", "POST", "/v1/attempts", a.token, []byte("{\n\"facts\": nope}"), 400, "line 2"},
		{"refused facts", "POST", "/v1/attempts", a.token, bytes.Replace(submission(t, 2, 1, 0), []byte(`"event":"pull_request"`), []byte(`"event":"cron"`), 1), 400, `"field":"facts.event"`},
		{"wrong method", "GET", "/v1/attempts", "", nil, 405, "use POST"},
		{"decision retry", "GET", "/v1/decision?repo=acme/api&run_id=1&attempt=1", "", nil, 200, `"next":"retry"`},
		{"decision final", "GET", "/v1/decision?repo=acme/api&run_id=1&attempt=2", "", nil, 200, `"next":"final"`},
		{"decision of nothing", "GET", "/v1/decision?repo=acme/api&run_id=1&attempt=3", "", nil, 404, "POST /v1/attempts first"},
		{"decision of run attempt 1 named", "GET", "/v1/decision?repo=acme/api&run_id=1&run_attempt=1&attempt=2", "", nil, 200, `"run_attempt":1`},
		{"decision of a re-run never posted", "GET", "/v1/decision?repo=acme/api&run_id=1&run_attempt=2&attempt=1", "", nil, 404, "run attempt 2"},
		{"decision of another plan never posted", "GET", "/v1/decision?repo=acme/api&run_id=1&plan=search&attempt=1", "", nil, 404, "plan search"},
		{"decision bad run attempt", "GET", "/v1/decision?repo=acme/api&run_id=1&run_attempt=0&attempt=1", "", nil, 400, `"field":"run_attempt"`},
		{"decision bad number", "GET", "/v1/decision?repo=acme/api&run_id=x&attempt=1", "", nil, 400, `"field":"run_id"`},
		{"unknown parameter", "GET", "/v1/decision?repo=acme/api&run_id=1&attempt=1&run=2", "", nil, 400, `unknown parameter \"run\"`},
		{"no repo", "GET", "/v1/verdicts?sha=" + sha(0xabc), "", nil, 400, `"field":"repo"`},
		{"verdicts by sha", "GET", "/v1/verdicts?repo=acme/api&sha=" + sha(0xabc), "", nil, 200, `"final_attempt":2`},
		{"verdicts by pr", "GET", "/v1/verdicts?repo=acme/api&pr=42", "", nil, 200, `"run_id":1`},
		{"verdicts by tag, none", "GET", "/v1/verdicts?repo=acme/api&tag=v1", "", nil, 200, `"verdicts":[]`},
		{"verdicts by two keys", "GET", "/v1/verdicts?repo=acme/api&pr=42&tag=v1", "", nil, 400, "exactly one"},
		{"verdicts by an empty sha", "GET", "/v1/verdicts?repo=acme/api&sha=", "", nil, 400, `"field":"sha"`},
		{"verdicts by an empty tag", "GET", "/v1/verdicts?repo=acme/api&tag=", "", nil, 400, `"field":"tag"`},
		{"experiments' unknown parameter", "GET", "/v1/experiments?repo=acme/api&target=t&tagret=u", "", nil, 400, `unknown parameter \"tagret\"`},
		{"experiments without repo", "GET", "/v1/experiments?target=t", "", nil, 400, `"field":"repo"`},
		{"release line of no release", "GET", "/v1/release-line?repo=acme/api&tag=v1", "", nil, 404, "tag v1"},
		{"no route", "GET", "/v1/nothing", "", nil, 404, "no route"},
		{"healthz", "GET", "/healthz", "", nil, 200, "ok"},
		{"readyz", "GET", "/readyz", "", nil, 200, "ready"},
	} {
		got := a.do(t, tc.method, tc.path, tc.token, tc.body)
		if got.status != tc.status || !strings.Contains(got.raw, tc.want) {
			t.Errorf("%s: %s %s answered %d %s, want %d with %s", tc.name, tc.method, tc.path, got.status, got.raw, tc.status, tc.want)
		}
		if got.status >= 400 && (got.body == nil || got.body["error"] == "") {
			t.Errorf("%s: the error is not JSON with a message: %q", tc.name, got.raw)
		}
	}
	m := a.do(t, "GET", "/metrics", "", nil)
	for _, want := range []string{`perfgate_verdictd_requests_total{code="201",route="attempts"} 2`, `perfgate_verdictd_attempts_total{cpu_model="EPYC",verdict="cannot-judge"} 1`, "perfgate_verdictd_request_duration_seconds_bucket"} {
		if !strings.Contains(m.raw, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(m.raw, a.token) {
		t.Error("/metrics shows a token")
	}
}

func TestReleaseLineConflict(t *testing.T) {
	a := newAPI(t, nil)
	body := bytes.Replace(submission(t, 5, 1, 0), []byte(`"event":"pull_request","head_sha"`), []byte(`"event":"release","tag":"v2.0.0","head_sha"`), 1)
	if got := a.do(t, "POST", "/v1/attempts", a.token, body); got.status != 201 {
		t.Fatalf("posting the release's attempt: %d %s", got.status, got.raw)
	}
	got := a.do(t, "GET", "/v1/release-line?repo=acme/api&tag=v2.0.0", "", nil)
	if got.status != 409 || !strings.Contains(got.raw, "the gate named no base") {
		t.Errorf("release line without a base: %d %s, want 409 naming why", got.status, got.raw)
	}
	withBase := bytes.Replace(body, []byte(`"run_id":5`), []byte(`"base_sha":"`+sha(0xba5e)+`","run_id":6`), 1)
	if got := a.do(t, "POST", "/v1/attempts", a.token, withBase); got.status != 201 {
		t.Fatalf("posting the release's second run: %d %s", got.status, got.raw)
	}
	got = a.do(t, "GET", "/v1/release-line?repo=acme/api&tag=v2.0.0", "", nil)
	if got.status != 200 || got.body["line"] != "Performance: The base is `4f1c2a9e8d7b`, the merge base with main." {
		t.Errorf("release line with a base: %d %s", got.status, got.raw)
	}
	// Each plan has its line: the search plan's run is found by plan=.
	search := bytes.Replace(withBase, []byte(`"run_id":6`), []byte(`"plan":"search","run_id":6`), 1)
	if got := a.do(t, "POST", "/v1/attempts", a.token, search); got.status != 201 {
		t.Fatalf("posting the search plan's attempt of run 6: %d %s", got.status, got.raw)
	}
	got = a.do(t, "GET", "/v1/release-line?repo=acme/api&tag=v2.0.0&plan=search", "", nil)
	if got.status != 200 || got.body["plan"] != "search" || !strings.HasPrefix(fmt.Sprint(got.body["line"]), "Performance: ") {
		t.Errorf("the search plan's release line: %d %s", got.status, got.raw)
	}
	if got := a.do(t, "GET", "/v1/release-line?repo=acme/api&tag=v2.0.0&plan=web", "", nil); got.status != 404 || !strings.Contains(got.raw, "plan web") {
		t.Errorf("a plan with no run for the tag: %d %s, want 404", got.status, got.raw)
	}
}

func TestReadsGated(t *testing.T) {
	a := newAPI(t, func(auth *httpapi.Auth, _ *httpapi.Options) { auth.ReadsPublic = false })
	if got := a.do(t, "POST", "/v1/attempts", a.token, submission(t, 1, 1, 0)); got.status != 201 {
		t.Fatalf("posting: %d %s", got.status, got.raw)
	}
	for _, path := range []string{"/v1/verdicts?repo=acme/api&pr=42", "/v1/decision?repo=acme/api&run_id=1&attempt=1", "/r/acme/api", "/"} {
		if got := a.do(t, "GET", path, "", nil); got.status != 401 || got.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s without a credential: %d %s, want 401", path, got.status, got.raw)
		}
		if got := a.do(t, "GET", path, a.token, nil); got.status != 200 {
			t.Errorf("%s with the repository's token: %d %s, want 200", path, got.status, got.raw)
		}
	}
}

func TestReadyzWhenTheStoreIsGone(t *testing.T) {
	a := newAPI(t, nil)
	a.st.Close()
	got := a.do(t, "GET", "/readyz", "", nil)
	if got.status != 503 || !strings.Contains(got.raw, "the store does not answer") {
		t.Errorf("/readyz with the store closed: %d %s", got.status, got.raw)
	}
	if got := a.do(t, "GET", "/healthz", "", nil); got.status != 200 {
		t.Errorf("/healthz with the store closed: %d, want 200 (the process lives)", got.status)
	}
}
