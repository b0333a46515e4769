package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment/target"
	"github.com/perfgate/perfgate/internal/verdict/client"
	"github.com/perfgate/perfgate/internal/verdict/httpapi/apitest"
)

// A scheduled experiment posted twice to a real verdict service (the
// whole HTTP surface over SQLite) against one staging URL: the second
// time the staging pool's service time is 40 % longer, so its knee is
// about 30 % lower, past the default 10 % knee_tolerance against the
// first: exit 1 naming the first's commit, and the service's page draws
// both knees.
func experimentPostedTwiceKneeFell(t *testing.T) {
	svc := apitest.Start(t, nil)
	var staging atomic.Pointer[http.Handler]
	deploy := func(service time.Duration) {
		s, err := target.New(target.Config{Workers: 2, Service: service})
		if err != nil {
			t.Fatal(err)
		}
		h := s.Handler()
		staging.Store(&h)
	}
	stagingSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*staging.Load()).ServeHTTP(w, r) }))
	t.Cleanup(stagingSrv.Close)
	planPath := writePlan(t, experimentGroups+`
[experiment]
model = "closed"
latency = "p50"
concurrency = [1, 2, 4]
warmup = "100ms"
stage = "700ms"
`)
	env := map[string]string{client.ServiceTokenEnv: svc.Token, "GITHUB_REPOSITORY": apitest.Repository, "GITHUB_REF_NAME": "main"}
	run := func(commit string) (string, error) {
		t.Helper()
		env["GITHUB_SHA"] = commit
		var out bytes.Buffer
		err := RunIO(context.Background(), []string{"experiment", "--plan", planPath, "--target", stagingSrv.URL, "--post", svc.URL},
			&IO{Out: &out, Err: &out, Getenv: func(k string) string { return env[k] }})
		return out.String(), err
	}
	const c1, c2 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	deploy(100 * time.Millisecond)
	text, err := run(c1)
	if err != nil || !strings.Contains(text, "filed as experiment 1 of acme/api") {
		t.Fatalf("first experiment: %v\n%s", err, text)
	}
	deploy(140 * time.Millisecond)
	text, err = run(c2)
	if exit.Code(err) != 1 || !strings.Contains(text, "down by more than the 10 % tolerance") ||
		!strings.Contains(text, "the default branch's last on the service, commit 111111111111") {
		t.Fatalf("second experiment, knee 30 %% lower: exit %d (%v), want 1 naming the first's commit:\n%s", exit.Code(err), err, text)
	}

	resp, err := http.Get(svc.URL + "/r/acme/api/experiments?target=" + url.QueryEscape(stagingSrv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `<circle class="knee"`); resp.StatusCode != 200 || n != 2 {
		t.Errorf("the experiments page: status %d, %d knees drawn, want both:\n%s", resp.StatusCode, n, page)
	}
	for _, c := range []string{c1, c2} {
		if !strings.Contains(string(page), c[:12]) {
			t.Errorf("the experiments page lacks commit %s", c[:12])
		}
	}
}
