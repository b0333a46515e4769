package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"sort"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// runFloor is the machine's floor for a paced generator: a bare loop that
// only sleeps until each arrival time, as the engine does, and sends nothing.
// Its lateness and CPU time, taken pinned to the generator's core in the same
// run, say how much of the engine's figures belong to the runner: on a shared
// VM an idle-to-busy wake costs tens of µs and other tenants delay it by
// milliseconds. With -target it also writes one fixed request per arrival on
// one kept-alive connection and reads whatever answers have come, with no
// parsing, timing or bookkeeping: the least an open-loop generator that wakes
// once per request can cost, whatever its design.
func runFloor(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	rate := fs.Float64("rate", 2000, "")
	dur := fs.Duration("duration", 10*time.Second, "")
	target := fs.String("target", "", "host:port to send a bare GET to on each arrival")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// The engine's own way to sleep (internal/load/loop_linux.go): a raw
	// nanosleep on a thread with the least timer slack.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	defer unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0)
	send := func() {}
	if *target != "" {
		fd, err := bareConn(*target)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		req := []byte("GET / HTTP/1.1\r\nHost: " + *target + "\r\n\r\n")
		buf := make([]byte, 64<<10)
		send = func() {
			syscall.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
			syscall.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&req[0])), uintptr(len(req)), 0, 0, 0)
		}
	}
	n := int(*rate * dur.Seconds())
	late := make([]time.Duration, 0, n)
	start := time.Now()
	for i := 1; i <= n && ctx.Err() == nil; i++ {
		due := start.Add(time.Duration(float64(i) / *rate * 1e9))
		for w := time.Until(due); w > 0; w = time.Until(due) {
			ts := unix.NsecToTimespec(int64(w))
			syscall.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
		late = append(late, time.Since(due))
		send()
	}
	sort.Slice(late, func(a, b int) bool { return late[a] < late[b] })
	ms := func(p float64) float64 { return float64(late[int(p/100*float64(len(late)-1))]) / 1e6 }
	return json.NewEncoder(os.Stdout).Encode(map[string]float64{"wakes": float64(len(late)), "p50": ms(50), "p99": ms(99)})
}

type floorResult struct {
	Wakes, P50, P99 float64
	CPU             time.Duration
}

// bareConn is a non-blocking TCP socket connected to addr, Nagle off, as the
// engine's own connections are.
func bareConn(addr string) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return -1, fmt.Errorf("floor -target wants host:port: %w", err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	return fd, unix.SetNonblock(fd, true)
}

// floor runs the bare loop pinned; target is empty for the sleep-only loop.
func floor(ctx context.Context, rate float64, d time.Duration, target string) (floorResult, error) {
	self, err := os.Executable()
	if err != nil {
		return floorResult{}, err
	}
	m, err := pinned(ctx, "", self, "floor", "-rate", fmt.Sprint(rate), "-duration", d.String(), "-target", target)
	if err != nil {
		return floorResult{}, err
	}
	var r floorResult
	if err := json.Unmarshal(m.out, &r); err != nil {
		return r, fmt.Errorf("reading the floor loop's output %q: %w", m.out, err)
	}
	r.CPU = m.cpu
	return r, nil
}
