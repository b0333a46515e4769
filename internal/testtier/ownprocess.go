package testtier

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// aloneEnv names the test a child process of the test binary runs for
// OwnProcess.
const aloneEnv = "PERFGATE_TEST_OWN_PROCESS"

// OwnProcess runs the top-level test t in a process of its own, a child
// of the test binary running only t, and reports whether the caller is
// that child: the test's body goes on only where it returns true. In the
// short tier without the race detector the child runs in parallel with
// the binary's other tests; elsewhere t stays serial.
//
//	if !testtier.OwnProcess(t) {
//		return
//	}
//
// It is for a test that needs the process to itself but not the machine:
// it sets GOMAXPROCS or an open-file limit, or counts the process's
// allocations. Such a test was serial, and a binary's serial tests run
// one after another before any parallel one: internal/load's held one of
// `go test`'s two runs for their sum, mostly asleep on timers. A test
// that needs the cores themselves quiet (one that times a pool's pace)
// must stay serial: its child would share them with the parallel tests.
// Under the race detector a child's loop computes several times as much,
// and in the full suite (raced, beside two other raced binaries) a child
// counting a 5,000-a-second loop's allocations beside the parallel tests
// started a throttled client 73 ms late (run 141): there, as under
// go test -race -short, the child runs while nothing else in the binary
// does.
//
// The child's output is the parent's log (seen with -v or on failure); a
// child that fails fails t with it. One that skips skips t in the short
// tier, the only tier that may skip; in the full suite a skip there is a
// test that did not run, and fails t. The child's coverage is not merged
// into the parent's.
func OwnProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(aloneEnv) == t.Name() {
		return true
	}
	if strings.Contains(t.Name(), "/") {
		t.Fatalf("testtier.OwnProcess: %s is a subtest; only a top-level test can run alone in a child (go test -run splits its pattern at /)", t.Name())
	}
	if testing.Short() && !raceDetector {
		t.Parallel()
	}
	args := []string{"-test.run", "^" + regexp.QuoteMeta(t.Name()) + "$", "-test.count", "1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout", time.Until(d).Round(time.Second).String())
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), aloneEnv+"="+t.Name())
	// The child's own -test.timeout ends a hung child; this bounds the
	// wait for its output after it exits, which a process it started
	// and left running would otherwise hold open.
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("in a process of its own (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		t.Fatalf("%s failed in its own process (%v): its output is above", t.Name(), err)
	case err != nil:
		t.Fatalf("running %s in its own process: %v", t.Name(), err)
	case strings.Contains(string(out), "--- SKIP: "+t.Name()+" ") && testing.Short():
		t.Skip(skipReason(string(out), t.Name()))
	case strings.Contains(string(out), "--- SKIP: "+t.Name()+" "):
		t.Fatalf("%s skipped in its own process outside the short tier (%s): the full suite runs every test", t.Name(), skipReason(string(out), t.Name()))
	case !strings.Contains(string(out), "--- PASS: "+t.Name()+" "):
		// -test.run matched nothing (a test renamed under a stale name
		// is a test that silently does not run).
		t.Fatalf("the child ran for %s printed no PASS line for it: its output is above", t.Name())
	}
	return false
}

// skipReason is what the child's t.Skip said, the lines between its RUN
// and SKIP lines.
func skipReason(out, name string) string {
	_, after, _ := strings.Cut(out, "=== RUN   "+name+"\n")
	before, _, _ := strings.Cut(after, "--- SKIP: "+name)
	return fmt.Sprintf("in its own process: %s", strings.TrimSpace(before))
}
