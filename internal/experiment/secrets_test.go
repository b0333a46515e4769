package experiment_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment"
)

const secretToken = "tok-5ecret-9f3a"

// secretPlan sends the secret in a header; its body rule fails every
// answer, which the target makes echo the header.
const secretPlan = `[vars]
api_token = { secret = true }

[[group]]
name = "work"
path = "/work"
expect = 200
expect_body = '"ok":true'
headers = { Authorization = "Bearer {api_token}" }

[experiment]
model = "closed"
concurrency = [1]
warmup = "100ms"
stage = "400ms"
gauges = ["/metrics", "/missing"]
`

func writeSecretPlan(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.toml")
	if err := os.WriteFile(path, []byte(secretPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The plan's secrets never reach what the experiment prints or writes: a
// target that echoes the request's Authorization header in a wrong answer,
// and a target URL whose path holds the secret, from which "/metrics" is
// resolved (the gauges' endpoints and the note about the one that failed).
func TestExperimentKeepsSecretsOutOfItsReports(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/" + secretToken + "/work":
			fmt.Fprintf(w, `{"ok":false,"seen":%q}`, r.Header.Get("Authorization"))
		case "/" + secretToken + "/metrics":
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			fmt.Fprint(w, "# TYPE pool_in_use gauge\npool_in_use 1\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	out, htmlOut := filepath.Join(dir, "exp.json"), filepath.Join(dir, "exp.html")
	var stdout bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := experiment.RunPlan(ctx, experiment.PlanOptions{Plan: writeSecretPlan(t), Target: srv.URL + "/" + secretToken + "/",
		Out: out, HTML: htmlOut, Seed: 1, Vars: []string{"api_token=" + secretToken}, Stdout: &stdout})
	// Every answer is wrong, so the first stage is under the success gate.
	if exit.Code(err) != 2 {
		t.Fatalf("exit %d (%v), want 2: every answer failed the body rule", exit.Code(err), err)
	}
	rep, rerr := experiment.ReadFile(out)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(rep.Gauges) == 0 {
		t.Fatal("no gauge scraped: the test would check nothing")
	}
	jsonText, _ := os.ReadFile(out)
	htmlText, _ := os.ReadFile(htmlOut)
	for what, text := range map[string]string{"the JSON report": string(jsonText), "the HTML report": string(htmlText),
		"the summary": stdout.String(), "the error": err.Error()} {
		if strings.Contains(text, secretToken) {
			i := strings.Index(text, secretToken)
			t.Errorf("%s holds the secret: ...%s...", what, text[max(0, i-120):min(len(text), i+40)])
		}
	}
	if !strings.Contains(string(jsonText), `/***/metrics"`) || !strings.Contains(stdout.String(), "/***/missing") {
		t.Errorf("the gauges' endpoints and the failed scrape's note should name the target as shown; summary:\n%s", stdout.String())
	}
}

// A target perfgate refuses is refused before anything runs, exit 2, in
// words that repeat neither credentials in the URL nor a plan's secret.
func TestExperimentTargetRefusedWithoutItsSecrets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, target, secret, want string }{
		// A password no variable declares: only the URL's form says it is one.
		{"credentials in the URL", "http://admin:pw-in-the-url@127.0.0.1:1/", "pw-in-the-url", "drop them from the URL and send them in a header"},
		{"a secret in the query", "http://127.0.0.1:1/?key=" + secretToken, secretToken, "drop the query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := experiment.RunPlan(context.Background(), experiment.PlanOptions{Plan: writeSecretPlan(t), Target: tc.target,
				Seed: 1, Vars: []string{"api_token=" + secretToken}, Stdout: &stdout})
			if exit.Code(err) != 2 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("exit %d (%v), want 2 saying %q", exit.Code(err), err, tc.want)
			}
			if strings.Contains(err.Error(), tc.secret) || strings.Contains(stdout.String(), tc.secret) {
				t.Errorf("the refusal repeats the secret: %v", err)
			}
		})
	}
}
