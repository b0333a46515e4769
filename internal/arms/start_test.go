package arms

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

func TestStartRefusesBadSpecs(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"no name", Spec{Command: []string{"true"}}, "needs a name"},
		{"no command", Spec{Name: "head"}, "no command given"},
		{"env without =", Spec{Name: "head", Command: []string{"true"}, Env: []string{"PORT"}}, `"PORT" is not KEY=VALUE`},
		{"ready scheme", Spec{Name: "head", Command: []string{"true"}, Ready: "ftp://127.0.0.1:1"}, `scheme "ftp"`},
		{"ready not a URL", Spec{Name: "head", Command: []string{"true"}, Ready: "127.0.0.1:8080"}, "is not a URL"},
		{"ready not a URL, with a password", Spec{Name: "head", Command: []string{"true"}, Ready: "probe:s3cret@127.0.0.1:8080"}, `ready probe "***@127.0.0.1:8080" is not a URL`},
		{"missing program", Spec{Name: "head", Command: []string{"/nonexistent/exampled"}}, "starting arm head"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.LogPath = filepath.Join(t.TempDir(), "arm.log")
			a, err := Start(context.Background(), tt.spec)
			if err == nil {
				a.Stop()
				t.Fatalf("Start(%+v) started an arm, want a refusal", tt.spec)
			}
			if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Start: exit %d %q, want exit 2 containing %q", exit.Code(err), err, tt.want)
			}
		})
	}
}

func TestStartFailsWithLogTail(t *testing.T) {
	tests := []struct {
		name    string
		command []string
		want    []string
	}{
		{"unknown flag", []string{exampled, "--bogus"}, []string{"exited", "exit status 2", "flag provided but not defined: -bogus"}},
		{"store file missing", []string{exampled, "--store-file", "/nonexistent/store.dsn"}, []string{"reading the store's connection string"}},
		{"shell exits 3", []string{"sh", "-c", "echo booting; echo boom >&2; exit 3"}, []string{"exit status 3", "booting", "boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := freeAddr(t)
			start := time.Now()
			a, err := Start(context.Background(), Spec{
				Name: "head", Command: tt.command, LogPath: filepath.Join(t.TempDir(), "head.log"),
				Ready: "http://" + addr + "/healthz", ReadyTimeout: 20 * time.Second,
			})
			if err == nil {
				a.Stop()
				t.Fatal("Start succeeded, want an early exit")
			}
			if exit.Code(err) != exit.CannotJudge {
				t.Fatalf("exit code %d, want 2: %v", exit.Code(err), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			// An early exit is noticed at once, not after the ready timeout.
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("early exit reported after %s", d)
			}
		})
	}
}

func TestStartNeverReady(t *testing.T) {
	// It waits out two readiness timeouts; nothing in it is timed against
	// the CPU, so it waits beside the other tests.
	t.Parallel()
	t.Run("service never healthy", func(t *testing.T) {
		addr := freeAddr(t)
		start := time.Now()
		a, err := Start(context.Background(), Spec{
			Name: "head", Command: []string{exampled, "--addr", addr, "--ready-delay", "1h"},
			LogPath: filepath.Join(t.TempDir(), "head.log"),
			Ready:   "http://" + addr + "/healthz", ReadyTimeout: 1500 * time.Millisecond,
		})
		elapsed := time.Since(start)
		if err == nil {
			a.Stop()
			t.Fatal("Start succeeded, want never ready")
		}
		if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), "did not get ready within 1.5s") ||
			!strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "listening on") {
			t.Fatalf("exit %d %q: want exit 2 naming the timeout, the 503 and the log tail", exit.Code(err), err)
		}
		if elapsed < 1500*time.Millisecond || elapsed > 5*time.Second {
			t.Errorf("gave up after %s, want about 1.5s", elapsed)
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("something still listens on %s after the refusal", addr)
		}
	})
	t.Run("nothing listens, tcp probe", func(t *testing.T) {
		dir := t.TempDir()
		log := filepath.Join(dir, "head.log")
		_, err := Start(context.Background(), Spec{
			Name: "head", Command: []string{"sh", "-c", "echo pid $$; exec sleep 300"},
			LogPath: log, Ready: "tcp://" + freeAddr(t), ReadyTimeout: time.Second, Grace: time.Second,
		})
		if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), "did not get ready") {
			t.Fatalf("exit %d %v, want exit 2, never ready", exit.Code(err), err)
		}
		pid := 0
		for _, line := range strings.Split(tailFile(log, 10), "\n") {
			if rest, ok := strings.CutPrefix(line, "pid "); ok {
				pid = atoi(t, rest)
			}
		}
		if pid == 0 || running(pid) {
			t.Fatalf("arm pid %d still running (log: %s)", pid, tailFile(log, 10))
		}
	})
}

func TestStartReadyProbes(t *testing.T) {
	addr := freeAddr(t)
	tests := []struct{ name, ready string }{
		{"http", "http://" + addr + "/healthz"},
		{"tcp", "tcp://" + addr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := startArm(t, Spec{Name: "base", Command: []string{exampled, "--addr", addr, "--ready-delay", "300ms"}, Ready: tt.ready})
			get(t, "http://"+addr+"/hello")
			if err := a.Stop(); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			// The service ended on SIGTERM, by its own graceful path.
			if log := a.LogTail(5); !strings.Contains(log, "exampled: stopped") || strings.Contains(log, "SIGKILL") {
				t.Fatalf("the service did not stop cleanly on SIGTERM; its log:\n%s", log)
			}
		})
	}
}

func TestEnvIsMinimalPlusSpec(t *testing.T) {
	t.Setenv("PERFGATE_TEST_SECRET", "must-not-leak")
	a := startArm(t, Spec{Name: "head", Command: []string{"sh", "-c", `echo "secret=$PERFGATE_TEST_SECRET knob=$EXAMPLED_X path=${PATH:+set}"; exec sleep 300`},
		Env: []string{"EXAMPLED_X=1"}})
	line := waitLog(t, a, "secret=")
	if line != "knob=1 path=set" {
		t.Fatalf("the arm saw %q, want no secret, its own knob and PATH", line)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, r := range strings.TrimSpace(s) {
		if r < '0' || r > '9' {
			t.Fatalf("%q is not a number", s)
		}
		n = n*10 + int(r-'0')
	}
	return n
}
