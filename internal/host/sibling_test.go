package host

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/services/servicetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	servicetest.Cleanup()
	os.Exit(code)
}

func containerExists(name string) bool {
	return exec.Command("docker", "container", "inspect", name).Run() == nil
}

// A real sibling: its exit code passes through, the environment reaches it
// by name, a cancel sends it SIGTERM, and it is gone afterwards.
func TestSiblingRun(t *testing.T) {
	img := servicetest.Image(t)
	tests := []struct {
		name   string
		env    []string
		cancel bool
		grace  time.Duration
		code   int // -1: any
	}{
		// The echo server exits 3 at once when FAIL is set.
		{"exit code passes through", []string{"FAIL=1", "MESSAGE=x"}, false, 20 * time.Second, 3},
		// It exits 0 on SIGTERM, as a service tearing down does.
		{"a cancel sends SIGTERM", []string{"LISTEN=127.0.0.1:0", "MESSAGE=x"}, true, 20 * time.Second, 0},
		// A sibling whose teardown outlives its grace is killed and
		// removed, and Run returns: the runner's kill is seconds away.
		{"past its grace it is killed", []string{"LISTEN=127.0.0.1:0", "MESSAGE=x", "IGNORE_TERM=1"}, true, 2 * time.Second, -1},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "perfgate-host-test-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(i)
			t.Cleanup(func() { exec.Command("docker", "rm", "-f", name).Run() })
			// A file, read while the docker CLI writes it.
			out, err := os.Create(filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			said := func() string { b, _ := os.ReadFile(out.Name()); return string(b) }
			s := &Sibling{Parent: &Container{ID: "parent-test", Image: img}, Name: name, Label: "host-test",
				Dir: "/", Env: tc.env, Stdout: out, Stderr: out, Grace: tc.grace}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The stop is timed from the cancel: starting the container
			// took 10 s and more in CI's run beside the race-detector
			// packages (the cores 1 % idle), which said nothing about
			// SIGTERM reaching it.
			cancelled := make(chan time.Time, 1)
			if tc.cancel {
				// The server says it listens after it has taken SIGTERM
				// over: a SIGTERM before that (the container existed,
				// and half a second had passed, on a busy machine) met
				// Go's default, which for PID 1 is exit 2.
				go func() {
					deadline := time.Now().Add(time.Minute)
					for !strings.Contains(said(), "listening on") && time.Now().Before(deadline) {
						time.Sleep(50 * time.Millisecond)
					}
					cancelled <- time.Now()
					cancel()
				}()
			}
			code, err := s.Run(ctx)
			stopped := time.Now()
			if err != nil {
				t.Fatal(err)
			}
			if tc.code >= 0 && code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, said())
			}
			if tc.cancel {
				select {
				case at := <-cancelled:
					// Inside its grace (20 s) only SIGTERM stops it early.
					if took := stopped.Sub(at); took > 15*time.Second {
						t.Errorf("the sibling took %s after the cancel to stop: SIGTERM did not reach it", took)
					}
				default:
					t.Errorf("Run returned before the cancel\n%s", said())
				}
			}
			if containerExists(name) {
				t.Errorf("the sibling %s remains", name)
			}
		})
	}
}

// A sibling whose parent container goes away cancels itself.
func TestWatchParent(t *testing.T) {
	img := servicetest.Image(t)
	name := "perfgate-host-parent-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", name).Run() })
	if out, err := exec.Command("docker", "run", "-d", "--name", name, "-e", "MESSAGE=parent", img).CombinedOutput(); err != nil {
		t.Fatalf("starting the parent: %v\n%s", err, out)
	}
	env := map[string]string{SiblingEnv: "1", ParentEnv: name}
	ctx, stop := WatchParent(context.Background(), func(k string) string { return env[k] })
	defer stop()
	select {
	case <-ctx.Done():
		t.Fatal("cancelled while the parent runs")
	case <-time.After(time.Second):
	}
	if out, err := exec.Command("docker", "rm", "-f", name).CombinedOutput(); err != nil {
		t.Fatalf("removing the parent: %v\n%s", err, out)
	}
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the parent is gone but the sibling's context is not cancelled")
	}
	// Outside a sibling nothing is watched.
	plain, stopPlain := WatchParent(context.Background(), func(string) string { return "" })
	defer stopPlain()
	if plain.Err() != nil {
		t.Error("WatchParent cancelled a process that is no sibling")
	}
}
