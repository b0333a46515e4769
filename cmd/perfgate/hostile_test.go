package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/load/hostiletest"
	"github.com/perfgate/perfgate/internal/testslot"
)

// hostileArmEnv makes this test binary an arm for `perfgate ab`: the index
// of a hostiletest.Endless target it serves on the address in its first
// argument, with /healthz answered so the arm passes its ready probe.
const hostileArmEnv = "PERFGATE_HOSTILE_ARM"

func hostileArm(target string, args []string) int {
	i, err := strconv.Atoi(target)
	if err != nil || i < 0 || i >= len(hostiletest.Endless) || len(args) < 1 {
		fmt.Fprintf(os.Stderr, "hostile arm: want %s=0..%d and an address argument\n", hostileArmEnv, len(hostiletest.Endless)-1)
		return 3
	}
	l, err := net.Listen("tcp", args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "hostile arm: %v\n", err)
		return 3
	}
	if os.Getenv(hostileArmEnv+"_IGNORE_TERM") != "" {
		signal.Ignore(syscall.SIGTERM)
	}
	s := hostiletest.Serve(l, hostiletest.Endless[i], "/healthz")
	fmt.Fprintf(os.Stderr, "hostile arm %q listening on %s\n", hostiletest.Endless[i].Name, l.Addr())
	// Until the run stops the arm (SIGTERM ends a Go program), say in the
	// arm's log that the load reached it.
	for seen := int64(0); ; time.Sleep(50 * time.Millisecond) {
		if n := s.Requests(); n != seen {
			fmt.Fprintf(os.Stderr, "hostile requests: %d\n", n)
			seen = n
		}
	}
}

const hostilePlan = `[[group]]
name = "x"
path = "/x"
expect = 200
`

// signalWithin starts cmd, waits until its stderr shows ready (when not
// empty), lets it run a second more against its hostile target, sends
// SIGTERM and returns how long the process took to exit, its exit code and
// its stderr.
func signalWithin(t *testing.T, cmd *exec.Cmd, ready string, until func() bool) (took time.Duration, code int, stderr string) {
	t.Helper()
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var log bytes.Buffer
	lines := make(chan bool, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pipe)
		seen := ready == ""
		if seen {
			lines <- true
		}
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if !seen && strings.Contains(sc.Text(), ready) {
				seen = true
				lines <- true
			}
		}
		if !seen {
			lines <- false
		}
	}()
	select {
	case ok := <-lines:
		if !ok {
			cmd.Wait()
			t.Fatalf("ended before %q; stderr:\n%s", ready, log.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("no %q in 60 s", ready)
	}
	if until == nil {
		time.Sleep(time.Second) // into the run, past its start
	} else {
		for deadline := time.Now().Add(30 * time.Second); !until(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the run did not get as far as the test waits for in 30 s; stderr:\n%s", log.String())
			}
		}
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select { // stderr's end: the process (and all it started) closed it
	case <-scanned:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Errorf("stderr still open 20 s after SIGTERM: the process or a child of it lives on")
		<-scanned
	}
	err = cmd.Wait()
	took = time.Since(sent)
	return took, exitCode(t, err), log.String()
}

// TestSIGTERMEndsLoadAgainstHostileTargets: `perfgate load` against each
// target that never ends an answer, with the request timeout (30 s) and the
// window (30 s) far off, ends within 2 s of SIGTERM with exit 2 and its
// partial report written.
func TestSIGTERMEndsLoadAgainstHostileTargets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.toml")
	if err := os.WriteFile(plan, []byte(hostilePlan), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tg := range hostiletest.Endless {
		t.Run(tg.Name, func(t *testing.T) {
			t.Parallel()
			srv := hostiletest.StartServer(t, tg)
			report := filepath.Join(t.TempDir(), "report.json")
			cmd := exec.Command(perfgate, "load", "--plan", plan, "--target", srv.URL(), "--rate", "20", "--warmup", "0s",
				"--duration", "30s", "--out", report)
			cmd.Stdout = io.Discard
			// Without a terminal it prints nothing before it ends; the
			// signal comes once the target has had 15 requests (at 20/s,
			// 0.75 s into the run), not after a sleep that a slow start
			// on a crowded machine ate into.
			took, code, stderr := signalWithin(t, cmd, "", func() bool { return srv.Requests() >= 15 })
			t.Logf("exit %d %v after SIGTERM", code, took.Round(time.Millisecond))
			if took > 2*time.Second {
				t.Errorf("took %v after SIGTERM, want 2 s at most", took)
			}
			if code != 2 || !strings.Contains(stderr, "canceled") {
				t.Errorf("exit %d, stderr %q; want exit 2 saying canceled", code, stderr)
			}
			f, err := os.Open(report)
			if err != nil {
				t.Fatalf("no partial report: %v", err)
			}
			defer f.Close()
			rep, err := load.ReadReport(f)
			if err != nil {
				t.Fatal(err)
			}
			if s := rep.Schedule; !rep.Canceled || s.Intended < 15 || s.Sent+s.Dropped != s.Intended {
				t.Errorf("report: canceled %v, intended %d sent %d dropped %d; want canceled with about 20 arrivals all accounted",
					rep.Canceled, s.Intended, s.Sent, s.Dropped)
			}
		})
	}
}

// TestMeasuredSIGTERMEndsABAgainstHostileArms: `perfgate ab` whose two
// arms turn hostile under load (each answers its ready probe, then streams
// an endless answer to every request) ends within 2 s of SIGTERM in its
// first pair, with exit 2 and both arms gone; also when the arms ignore
// the SIGTERM perfgate passes on (they took the arms' 10 s grace before).
// A bound in seconds is the subject, so each case holds a gate slot and
// runs in the measured phase: alone they stop in 50-80 ms (1.05 s for the
// arm that ignores SIGTERM), but in the middle phase of a rehearsal, the
// cores 8 % idle, an arm killed by SIGTERM took 3 s to be scheduled and
// die (run 84).
func TestMeasuredSIGTERMEndsABAgainstHostileArms(t *testing.T) {
	t.Parallel()
	type armCase struct {
		name       string
		target     int
		ignoreTerm bool // the arm ignores its own SIGTERM: killed after arms.CanceledGrace
	}
	var cases []armCase
	for i, tg := range hostiletest.Endless {
		cases = append(cases, armCase{tg.Name, i, false})
	}
	cases = append(cases, armCase{"endless 1xx from an arm that ignores SIGTERM", 0, true})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			plan := filepath.Join(dir, "plan.toml")
			if err := os.WriteFile(plan, []byte(hostilePlan), 0o644); err != nil {
				t.Fatal(err)
			}
			// The arm's command line carries dir, so running() finds it.
			arm := fmt.Sprintf("env %s=%d %s 127.0.0.1:@PORT@ %s", hostileArmEnv, tc.target, os.Args[0], dir)
			if tc.ignoreTerm {
				arm = "env " + hostileArmEnv + "_IGNORE_TERM=1 " + arm
			}
			if !testing.Short() { // the short tier takes no slots; it runs on a quiet machine
				defer testslot.Hold(t)()
			}
			cmd := exec.Command(perfgate, "ab", "--plan", plan, "--base-cmd", arm, "--head-cmd", arm, "--ready", "/healthz",
				"--out", filepath.Join(dir, "out"), "--idle", "0", "--pairs", "1", "--warmup", "0s", "--measure", "30s", "--rate", "20")
			cmd.Stdout = io.Discard
			if n := len(running(t, dir)); n != 0 {
				t.Fatalf("%d processes of this test before it started", n)
			}
			took, code, stderr := signalWithin(t, cmd, "pair 1/1", nil)
			t.Logf("exit %d %v after SIGTERM; stderr:\n%s", code, took.Round(time.Millisecond), stderr)
			if took > 2*time.Second {
				t.Errorf("took %v after SIGTERM, want 2 s at most; stderr:\n%s", took, stderr)
			}
			if code != 2 {
				t.Errorf("exit %d after SIGTERM, want 2; stderr:\n%s", code, stderr)
			}
			if left := running(t, dir); len(left) > 0 {
				t.Errorf("left running after SIGTERM: %q", left)
			}
			for _, arm := range []string{"base", "head"} {
				b, err := os.ReadFile(filepath.Join(dir, "out", arm+".log"))
				if err != nil || !bytes.Contains(b, []byte("hostile requests: ")) {
					t.Errorf("the %s arm's log shows no request reached it (%v):\n%s", arm, err, b)
				}
			}
		})
	}
}
