package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/services"
	"github.com/perfgate/perfgate/internal/services/servicetest"
	"github.com/perfgate/perfgate/internal/testbin"
	"github.com/perfgate/perfgate/internal/testslot"
	"github.com/perfgate/perfgate/internal/testtier"
)

// perfgate is the binary under test, built once: these tests send it real
// signals and read its real exit codes.
var perfgate string

func TestMain(m *testing.M) {
	if target := os.Getenv(hostileArmEnv); target != "" {
		// Started by `perfgate ab` as an arm (hostile_test.go), not a test run.
		os.Exit(hostileArm(target, os.Args[1:]))
	}
	// Most of these tests wait: on a signal's effect, on a hostile
	// target's endless answer, on an arm's grace.
	testtier.Waiting(4)
	dir, err := os.MkdirTemp("", "perfgate-main-test")
	if err != nil {
		panic(err)
	}
	if perfgate, err = testbin.Build(context.Background(), "github.com/perfgate/perfgate/cmd/perfgate", dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("running perfgate: %v", err)
	}
	return ee.ExitCode()
}

// running lists the live processes whose command line mentions marker.
func running(t *testing.T, marker string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil || len(b) == 0 {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, marker) {
			if stat, err := os.ReadFile(strings.TrimSuffix(f, "cmdline") + "stat"); err == nil && strings.Contains(string(stat), ") Z ") {
				continue // a zombie holds nothing
			}
			found = append(found, cmd)
		}
	}
	return found
}

func TestBadPlanIsExit2NamingFileAndLine(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.toml")
	os.WriteFile(plan, []byte("[[group]]\nname = \"a\"\npath = \"/x/{nope}\"\nexpect = 200\n"), 0o644)
	cmd := exec.Command(perfgate, "ab", "--plan", plan, "--base-cmd", "sleep 60", "--head-cmd", "sleep 60", "--out", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	code := exitCode(t, cmd.Run())
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr.String())
	}
	msg := strings.TrimSpace(stderr.String())
	if !strings.Contains(msg, plan+":3:") || !strings.Contains(msg, "nope") {
		t.Errorf("the message does not name %s:3 and the placeholder: %q", plan, msg)
	}
	if strings.Count(msg, "\n") > 0 {
		t.Errorf("want one line, got:\n%s", msg)
	}
	if left := running(t, dir); len(left) > 0 {
		t.Errorf("a refused plan left processes running: %q", left)
	}
}

// SIGINT and SIGTERM stop a gate at once: exit 2 (a cut phase is not
// judged), and both arms and the store are gone. The two demos judge
// nothing, so they run side by side, each with the demo's shortest useful
// profile: no idle phase (with a store it first waits 11 s for
// PostgreSQL's counters to settle, which the signal's subject does not
// need), then pairs of 1 s warm-up and 3 s measured; the signal comes a
// second into the first.
// Each demo holds a gate slot and runs in the measured phase: its bound is
// in seconds, and in the middle phase of a rehearsal (the cores 1-8 %
// idle) the demo took 2m49s to reach its first pair and 25-37 s to stop
// (the suite's CI run of 2026-12-05).
func TestMeasuredSignalStopsEverything(t *testing.T) {
	testtier.Heavy(t, testtier.Postgres) // the demos run their store
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			defer testslot.HoldLong(t)()
			// A folder the postgres user can reach, so the store's data
			// dir lands inside it and a leftover server would show below.
			out, err := os.MkdirTemp("", "pg-sig-")
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(out, 0o755)
			t.Cleanup(func() { os.RemoveAll(out) })
			cmd := exec.Command(perfgate, "demo", "--out", out, "--pairs", "2", "--warmup", "1s", "--measure", "3s", "--idle", "0s")
			cmd.Dir = out
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			// Wait for the first pair: by then the store and both arms run.
			sc := bufio.NewScanner(stderr)
			var log strings.Builder
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), "pair 1/2") {
					break
				}
			}
			if n := len(running(t, out)); n < 3 {
				t.Fatalf("want both arms and the store running before the signal, found %d processes (%q); log:\n%s", n, running(t, out), log.String())
			}
			time.Sleep(time.Second)
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			// What the demo prints while it stops, its stage lines timed,
			// says which teardown took the time when it is too long.
			var mu sync.Mutex
			var after strings.Builder
			read := make(chan struct{})
			go func() {
				defer close(read)
				for sc.Scan() {
					mu.Lock()
					after.WriteString(sc.Text() + "\n")
					mu.Unlock()
				}
			}()
			code := exitCode(t, cmd.Wait())
			took := time.Since(sent)
			select {
			case <-read:
			case <-time.After(2 * time.Second):
			}
			mu.Lock()
			t.Logf("%s: exit %d after %s; what the demo printed meanwhile:\n%s", sig, code, took.Round(time.Millisecond), after.String())
			mu.Unlock()
			if code != 2 {
				t.Errorf("exit %d after %s, want 2", code, sig)
			}
			if took > 20*time.Second {
				mu.Lock()
				t.Errorf("took %s to stop; the demo's log from the first pair on:\n%s", took, after.String())
				mu.Unlock()
			}
			if left := running(t, out); len(left) > 0 {
				t.Errorf("left running after %s: %q", sig, left)
			}
		})
	}
}

// SIGTERM while `services up` waits for health: exit 2, and no container,
// network or volume with the run's label remains.
func TestSignalMidServicesStart(t *testing.T) {
	testtier.Heavy(t, testtier.Docker)
	img := servicetest.Image(t)
	t.Cleanup(servicetest.Cleanup)
	runID := fmt.Sprintf("sig%d", time.Now().UnixNano())
	t.Cleanup(func() { services.DownByLabel(context.Background(), runID) })
	// A health check that never passes keeps `up` waiting until the signal.
	compose := `services:
  api:
    image: ` + img + `
    ports: ["127.0.0.1:` + strconv.Itoa(freePort(t)) + `:80"]
    healthcheck: {test: ["CMD", "/no-such-check"], interval: 500ms, retries: 1000}
`
	trees := map[string]string{}
	for _, arm := range []string{"head", "base"} {
		dir := filepath.Join(t.TempDir(), arm)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte(compose), 0o644)
		trees[arm] = dir
	}
	cmd := exec.Command(perfgate, "services", "up", "--head", trees["head"], "--base", trees["base"],
		"--project", runID, "--run-id", runID, "--log-dir", t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, _ := exec.Command("docker", "ps", "-q", "--filter", "label=perfgate.run="+runID).Output()
		if len(bytes.TrimSpace(out)) > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("services up ended before any container started (%v); stderr:\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no container of the run started in 90 s; stderr:\n%s", stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, <-done); code != 2 {
		t.Errorf("exit %d after SIGTERM, want 2; stderr:\n%s", code, stderr.String())
	}
	left, err := services.Leftovers(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("left after SIGTERM mid-start: %q", left)
	}
}

// freePort is a port free on both 127.0.0.1 and 127.0.0.2.
func freePort(t *testing.T) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if l2, err := net.Listen("tcp", net.JoinHostPort("127.0.0.2", strconv.Itoa(port))); err == nil {
			l2.Close()
			return port
		}
	}
	t.Fatal("no port free on both 127.0.0.1 and 127.0.0.2")
	return 0
}
