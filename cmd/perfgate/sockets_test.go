package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoadOutOfSocketsCannotJudge: a generator whose open-file limit
// (ulimit -n 40) is below the connections its rate needs cannot send most
// arrivals; that is its own fault, not the target's errors, so `perfgate
// load` exits 2 and says so.
func TestLoadOutOfSocketsCannotJudge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // every answer holds its connection for a while
		case <-time.After(1500 * time.Millisecond):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.toml")
	if err := os.WriteFile(plan, []byte(hostilePlan), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.json")
	cmd := exec.Command("sh", "-c", `ulimit -n 40 && exec "$0" "$@"`, perfgate, "load", "--plan", plan, "--target", srv.URL,
		"--rate", "200", "--duration", "1s", "--warmup", "0s", "--out", report)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := exitCode(t, cmd.Run())
	t.Logf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	if code != 2 {
		t.Errorf("exit %d, want 2 (cannot judge)", code)
	}
	if !strings.Contains(stderr.String(), "the generator ran out of sockets") || !strings.Contains(stderr.String(), "ulimit -n") {
		t.Errorf("stderr does not say the generator ran out of sockets and how to fix it: %q", stderr.String())
	}
	if !strings.Contains(stdout.String(), "WARNING:") || strings.Contains(stdout.String(), "x generator out of sockets") {
		t.Errorf("the summary must warn, and not count the generator's failures as the target's errors:\n%s", stdout.String())
	}
	b, err := os.ReadFile(report)
	if err != nil || !bytes.Contains(b, []byte(`"out_of_sockets"`)) {
		t.Errorf("the report does not carry out_of_sockets (%v)", err)
	}
}
