package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// runFloor is the machine's floor for a paced generator: a bare loop that
// only sleeps until each arrival time, as the engine does, and sends nothing. Its lateness and CPU time, taken pinned to
// the generator's core in the same run, say how much of the engine's figures
// belong to the runner: on a shared VM an idle-to-busy wake costs tens of µs
// and other tenants delay it by milliseconds.
func runFloor(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	rate := fs.Float64("rate", 2000, "")
	dur := fs.Duration("duration", 10*time.Second, "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// The engine's own way to sleep (internal/load/loop_linux.go): a raw
	// nanosleep on a thread with the least timer slack.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	defer unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0)
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
	}
	sort.Slice(late, func(a, b int) bool { return late[a] < late[b] })
	ms := func(p float64) float64 { return float64(late[int(p/100*float64(len(late)-1))]) / 1e6 }
	return json.NewEncoder(os.Stdout).Encode(map[string]float64{"wakes": float64(len(late)), "p50": ms(50), "p99": ms(99)})
}

type floorResult struct {
	Wakes, P50, P99 float64
	CPU             time.Duration
}

func floor(ctx context.Context, rate float64, d time.Duration) (floorResult, error) {
	self, err := os.Executable()
	if err != nil {
		return floorResult{}, err
	}
	m, err := pinned(ctx, "", self, "floor", "-rate", fmt.Sprint(rate), "-duration", d.String())
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
