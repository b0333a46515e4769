package load_test

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/testtier"
)

// TestMain runs the test binary as the holding target when
// holdingTarget starts it so (a child, not a skipped test, so that no
// test reads as skipped in CI), and runs the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv("PERFGATE_HOLDING_TARGET") == "1" {
		serveHolding()
		return
	}
	// The parallel tests wait on their in-process targets (delays,
	// stalls, timeouts); the ones that time the CPU are serial.
	testtier.Waiting(8)
	os.Exit(m.Run())
}

// serveHolding listens on loopback, prints its address and holds every
// connection open unanswered until its stdin closes. A separate process,
// so the generator's lowered open-file limit is not the target's.
func serveHolding() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(3)
	}
	os.Stdout.WriteString(l.Addr().String() + "\n")
	// Held in a channel: a connection nothing refers to is closed by its
	// finalizer.
	held := make(chan net.Conn, 4096)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held <- c
		}
	}()
	var b [1]byte
	os.Stdin.Read(b[:])
	os.Exit(0)
}

// holdingTarget starts the test binary as the holding target (TestMain).
func holdingTarget(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PERFGATE_HOLDING_TARGET=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the holding target printed no address: %v", err)
	}
	return "http://" + strings.TrimSpace(addr)
}

// TestGeneratorOutOfSockets: with its open-file limit a few descriptors
// above what it holds, the generator cannot open a connection for most
// arrivals. Those arrivals were never sent and the fault is the
// generator's: they count as dropped (out of sockets), not as the target's
// errors. The limit is the process's: the test runs in one of its own.
func TestGeneratorOutOfSockets(t *testing.T) {
	if !testtier.OwnProcess(t) {
		return
	}
	bothEngines(t, func(t *testing.T) {
		target := holdingTarget(t)
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		var saved syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
			t.Fatal(err)
		}
		low := saved
		low.Cur = uint64(len(fds) + 12)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved) })
		src := &fixedSource{Reqs: []load.Request{{Method: "GET", Path: "/"}}}
		r := run(t, load.Attack{Target: target, Source: src, Groups: []load.Group{{Name: "g"}},
			Pacer: load.ConstantPacer{Freq: 200}, Duration: time.Second, Timeout: 300 * time.Millisecond})
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved)
		s, g := r.Schedule, r.Groups[0]
		t.Logf("intended %d sent %d dropped %d out of sockets %d; requests %d errors %v", s.Intended, s.Sent, s.Dropped, s.OutOfSockets, g.Requests, g.Errors)
		if s.OutOfSockets < 100 || s.Dropped < s.OutOfSockets {
			t.Errorf("%d arrivals out of sockets, %d dropped; want most of 200 out of sockets, each dropped", s.OutOfSockets, s.Dropped)
		}
		if g.Errors[load.KindOutOfSockets] != 0 {
			t.Errorf("the generator's own failures were counted as the target's errors: %v", g.Errors)
		}
		if s.Sent+s.Dropped != s.Intended || g.Requests+s.Canceled != s.Sent {
			t.Errorf("intended %d sent %d dropped %d requests %d canceled %d: arrivals went missing", s.Intended, s.Sent, s.Dropped, g.Requests, s.Canceled)
		}
		if g.Requests == 0 || g.Errors[load.KindTimeout] != g.Requests {
			t.Errorf("requests %d errors %v: the connections that did open should each time out", g.Requests, g.Errors)
		}
	})
}
