package arms

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exampleservice"
	"github.com/perfgate/perfgate/internal/testtier"
)

// exampled is the example service, built once for this test binary.
var exampled string

func TestMain(m *testing.M) {
	if d := os.Getenv("ARMS_TEST_BURN"); d != "" {
		burnHelper(d)
		return
	}
	// Its parallel tests wait: on a CPU window of 2 s read from /proc (each
	// of its own process), on readiness timeouts, on a stray's drain.
	testtier.Waiting(4)
	os.Exit(exampleservice.RunTests(m, &exampled))
}

// freeAddr returns a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startArm starts s and stops it when the test ends.
func startArm(t *testing.T, s Spec) *Process {
	t.Helper()
	if s.LogPath == "" {
		s.LogPath = filepath.Join(t.TempDir(), s.Name+".log")
	}
	a, err := Start(context.Background(), s)
	if err != nil {
		t.Fatalf("starting arm %s: %v", s.Name, err)
	}
	t.Cleanup(func() {
		if err := a.Stop(); err != nil {
			t.Errorf("stopping arm %s: %v", s.Name, err)
		}
	})
	return a
}

// startExample starts the example service with knobs; it returns the arm
// and the service's base URL.
func startExample(t *testing.T, knobs ...string) (*Process, string) {
	t.Helper()
	addr := freeAddr(t)
	a := startArm(t, Spec{
		Name:    "example",
		Command: append([]string{exampled, "--addr", addr}, knobs...),
		Ready:   "http://" + addr + "/healthz",
	})
	return a, "http://" + addr
}

func get(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
}

// running reports whether pid is a live process (a zombie is not: it runs
// nothing and waits only for its parent to reap it).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	p, err := parseStat(b)
	return err == nil && p.alive()
}

// waitLog waits until the log holds a line starting with prefix and returns
// the rest of that line. The minute bounds a hang, and claims nothing
// about speed: on a machine's crowded first run a script burning 300 ms of
// CPU twice took over 10 s to print its last line.
func waitLog(t *testing.T, a *Process, prefix string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(a.LogTail(50), "\n") {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				return strings.TrimSpace(rest)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the log of arm %s never printed %q; it holds:\n%s", a.spec.Name, prefix, a.LogTail(50))
	return ""
}

func pidFromLog(t *testing.T, a *Process, prefix string) int {
	t.Helper()
	s := waitLog(t, a, prefix)
	pid, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q after %q in the log is not a pid", s, prefix)
	}
	return pid
}

// burnHelper is this test binary run as an arm's descendant: it burns a
// fixed amount of its own CPU time (however long a busy machine makes that
// take), says so, and exits or sleeps. Fixed CPU makes the descendant tests
// exact on a shared machine.
func burnHelper(d string) {
	want, err := time.ParseDuration(d)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ARMS_TEST_BURN:", err)
		os.Exit(2)
	}
	x := uint64(1)
	for selfCPU() < want {
		for range 10000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	fmt.Printf("burned %s (%d)\n", selfCPU().Round(time.Millisecond), x%2)
	if os.Getenv("ARMS_TEST_THEN_SLEEP") != "" {
		time.Sleep(5 * time.Minute)
	}
	os.Exit(0)
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
