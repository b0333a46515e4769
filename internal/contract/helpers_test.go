package contract

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

// writeTree makes a tree from path -> content; a path ending in "*" is
// written executable (without the star).
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, "*") {
			p, mode = strings.TrimSuffix(p, "*"), 0o755
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// serviceTreeGate is the test service's gate file.
const serviceTreeGate = `# the test service's contract
build = "mkdir -p bin && install -m 0755 svc.sh bin/svc"
binary = "bin/svc"
start = "@BIN@ serve"
check = "@BIN@ check"
config = "perf/service.toml"
config_env = "SVC_CONFIG"
prefix = "SVC__"
ready = "/health"
compose = ["compose.yaml"]
plan = "perf/plan.toml"

[env]
SVC__USAGE__ENABLED = "false"
`

// serviceTree is a tree whose build installs the test service knowing the
// given keys, with the given service config and arm.env.
func serviceTree(t *testing.T, known, config, armEnv string) map[string]string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n" + serviceEnv + "=1 exec '" + self + "' \"$1\" '" + known + "'\n"
	return map[string]string{
		GateFile:            serviceTreeGate,
		"svc.sh*":           script,
		"perf/service.toml": config,
		"perf/arm.env":      armEnv,
		"perf/plan.toml":    "# plan\n",
		"compose.yaml":      "services: {}\n",
	}
}

func wantRefusal(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want exit 2 mentioning %q", parts)
	}
	if exit.Code(err) != exit.CannotJudge {
		t.Fatalf("exit code %d, want 2: %v", exit.Code(err), err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startArm starts a rendered arm and waits for its ready probe; the process
// is ended when the test ends.
func startArm(t *testing.T, c *Contract, a *Rendered) {
	t.Helper()
	cmd := exec.Command(a.Command[0], a.Command[1:]...)
	cmd.Env = c.Environ(os.Environ(), a)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %v: %v", a.Command, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.Ready, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("arm %v exited before ready (%v): %s", a.Command, err, logs.String())
		case <-ctx.Done():
			t.Fatalf("arm %v not ready at %s: %v", a.Command, a.Ready, errors.Join(err, ctx.Err()))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func replace(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic("test fixture lacks " + old)
	}
	return strings.Replace(s, old, new, 1)
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
