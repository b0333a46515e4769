// Package testslot limits how many real gates the test suite measures at
// once across all of a machine's test processes. `go test -p 4 ./...` runs
// four test binaries side by side, and each runs its parallel tests two at
// a time: on a 2-core machine that was up to eight gates at once, whose
// generators fell 100-200 ms behind their schedules, so the gates rightly
// said "cannot judge" four times running and the tests failed. A test
// takes a slot only around a measured run (Acquire ... release); the rest
// of every package's tests goes on beside it.
//
// It is a test helper: no command imports it.
package testslot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testtier"
)

// DefaultSlots is how many measured gates may run at once on the machine:
// on 2 cores each then has most of a core, beside the builds, docker and
// PostgreSQL work of the other tests. PERFGATE_TEST_GATE_SLOTS overrides
// it (a larger machine, or 1 to rule contention out).
const DefaultSlots = 3

// Acquire waits until one of the machine's slots is free, takes it and
// returns its release. The slots are flock(2) locks on files in the temp
// folder, so a test process that dies frees its slot with it. It fails
// only when ctx ends first or no lock file can be made.
func Acquire(ctx context.Context) (release func(), err error) {
	return acquire(ctx, false)
}

// AcquireLong is Acquire for a long hold, or one link of a chain of holds
// that one test makes in turn: while it waits, a free slot goes to it
// before any Acquire. Slots went to whichever waiter polled first, so in a
// rehearsal's measured phase the whole-pipeline demo (a 96 s hold) waited
// 2m10s behind gates of 20 s and ended the phase last, at 3m50s, with the
// cores two-thirds idle: the longest jobs first is what ends a batch
// soonest.
//
// name is what the slot log (LogEnv) records for the hold at its release,
// as Hold records a test's name: a chain's holds, taken outside Hold, were
// missing from it, so a run's list of holds did not add up to its phase.
// An empty name records nothing.
func AcquireLong(ctx context.Context, name string) (release func(), err error) {
	asked := time.Now()
	free, err := acquire(ctx, true)
	if err != nil || name == "" {
		return free, err
	}
	return recorded(name, asked, free, nil), nil
}

// recorded wraps free, a hold's release taken after waiting since asked:
// its first call frees the slots, records the hold as name (LogEnv) and
// hands its length to then (when not nil); later calls do nothing.
func recorded(name string, asked time.Time, free func(), then func(held time.Duration)) func() {
	got := time.Now()
	var once sync.Once
	return func() {
		once.Do(func() {
			free()
			held := time.Since(got)
			if then != nil {
				then(held)
			}
			record(name, got.Sub(asked), held)
		})
	}
}

func acquire(ctx context.Context, long bool) (release func(), err error) {
	n := slots()
	what := fmt.Sprintf("one of %d test gate slots", n)
	if long {
		done, err := waitLong()
		if err != nil {
			return nil, err
		}
		defer done()
		what += " (a long hold, served first)"
	}
	return poll(ctx, what, func() (func(), error) {
		if !long && longWaiting() {
			return nil, nil
		}
		for i := 0; i < n; i++ {
			if free, err := tryLock(i); err != nil || free != nil {
				return free, err
			}
		}
		return nil, nil
	})
}

// longWaits counts this process's long waits, for their files' names.
var longWaits atomic.Int64

// waitLong marks a long hold as waiting until done is called: a file in
// the temp folder that the waiter holds an exclusive flock(2) on. A
// waiter that dies frees its lock with it, and its file then counts for
// nothing.
func waitLong() (done func(), err error) {
	// A name no earlier process had: one killed before done left its file,
	// and a later process with its pid once took that name, while another
	// process's longWaiting held its momentary shared lock on it, so a
	// non-blocking exclusive lock failed ("resource temporarily
	// unavailable"). The file is new, so only such a momentary shared lock
	// can be in the way, and the exclusive lock waits it out.
	path := filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-%d-%d.lock", longPrefix, os.Getpid(), longWaits.Add(1), time.Now().UnixNano()))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("marking a long test gate hold as waiting: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("marking a long test gate hold as waiting: locking %s: %w", path, err)
	}
	return func() { os.Remove(path); f.Close() }, nil
}

// longPrefix starts the name of a long hold's waiting file.
const longPrefix = "perfgate-test-gate-long-wait-"

// longWaiting reports whether a long hold is waiting on the machine: a
// waiting file that another holds locked (a shared lock on it fails).
func longWaiting() bool {
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), longPrefix+"*.lock"))
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			continue // its waiter got its slot meanwhile
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		f.Close() // closing drops our lock, if we took one
		if err != nil {
			return true
		}
	}
	return false
}

// acquireSlot waits for slot i alone.
func acquireSlot(ctx context.Context, i int) (release func(), err error) {
	return poll(ctx, fmt.Sprintf("test gate slot %d", i), func() (func(), error) { return tryLock(i) })
}

// poll calls try every 100 ms until it returns a release or an error, or
// ctx ends; what names the slots waited for.
func poll(ctx context.Context, what string, try func() (func(), error)) (func(), error) {
	for {
		free, err := try()
		if err != nil || free != nil {
			return free, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tryLock takes slot i if it is free: its release, or nil when another
// holds it.
func tryLock(i int) (release func(), err error) {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("perfgate-test-gate-slot-%d.lock", i))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the test gate slot %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, nil
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// slots is how many gates the machine measures at once.
func slots() int {
	if v, err := strconv.Atoi(os.Getenv("PERFGATE_TEST_GATE_SLOTS")); err == nil && v > 0 {
		return v
	}
	return DefaultSlots
}

// Rate is the arrival rate, per arm, of a measured gate whose subject is
// not the rate itself: 10 a second, whose half interval (50 ms) is what a
// generator may lag before the gate rightly says "cannot judge". Beside
// the rest of the suite on 2 cores the generators of gates at 40 a second
// (a 12.5 ms half interval) lagged 45-75 ms, and every attempt said so.
const Rate = 10

// SlowRate is Rate for the measured gates that must reach a verdict in
// the crowded middle of the measured phase on the slower 2-core machines
// (system calls of 1.2-1.6 us): 5 a second, whose half interval lets a
// generator lag 100 ms. Such a gate measures twice as long as at Rate, so
// that its phases keep their answers. At Rate, the demo without an engine
// (run 222 in docs/testing.md) and the pooled tail gate's A/A (run 230)
// fell 53.7-135 ms behind in all their attempts.
const SlowRate = 5

// HoldAll is Hold for a gate that must run with no other measured gate
// on its share of the machine: it takes every slot its process counts
// (PERFGATE_TEST_GATE_SLOTS), in order (so two of them cannot each hold
// half), and returns their release. A process given fewer slots than the
// others count takes the first of theirs: .ci/test so runs the
// whole-pipeline demo on half of a 4-slot machine beside the other
// gates. It waits as a long hold does (HoldLong), served before any
// Hold: a slot it waits for would otherwise go to whichever short gate
// polled first, while the slots it already took sit idle.
func HoldAll(t testing.TB) (release func()) {
	t.Helper()
	testtier.Heavy(t, testtier.Gate)
	checkName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	asked := time.Now()
	done, err := waitLong()
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer done()
	var frees []func()
	for i := 0; i < slots(); i++ {
		free, err := acquireSlot(ctx, i)
		if err != nil {
			for _, f := range frees {
				f()
			}
			t.Fatalf("%v", err)
		}
		frees = append(frees, free)
	}
	t.Logf("testslot: waited %s for all %d slots", time.Since(asked).Round(time.Millisecond), len(frees))
	freeAll := func() {
		for _, f := range frees {
			f()
		}
	}
	return recorded(fmt.Sprintf("%s (all %d slots)", t.Name(), len(frees)), asked, freeAll, func(held time.Duration) {
		t.Logf("testslot: held all slots %s", held.Round(time.Millisecond))
	})
}

// checkName fails t unless its name is a measured test's.
func checkName(t testing.TB) {
	t.Helper()
	if !strings.HasPrefix(t.Name(), Prefix) {
		t.Fatalf("testslot: %s measures a gate but its name does not start with %s: .ci/test runs the measured tests apart from the rest, by that name (go test -run '^%s'), so rename it", t.Name(), Prefix, Prefix)
	}
}

// Prefix starts the name of every test that measures a gate (Hold
// refuses any other) or a knee against a pool of its own. .ci/test runs
// those tests by that name, at the machine's full priority, beside the
// rest of the suite run at a lower one: a measured gate's generator must
// keep its schedule, and a knee test's clients their turns, while the
// other tests check what the code does and only wait a little longer.
const Prefix = "TestMeasured"

// Hold is Acquire for a test: it waits at most 15 minutes (the suite's
// go test timeout is 20) and fails the test when no slot came free. It
// logs how long the test waited for its slot and, at release, how long it
// held it: a package's elapsed time counts both, and only the second is
// the gate's own.
func Hold(t testing.TB) (release func()) {
	t.Helper()
	return hold(t, false)
}

// HoldLong is Hold for a long hold (a minute or more) or for one of a
// chain of holds a test makes in turn: it is served before any Hold
// (AcquireLong).
func HoldLong(t testing.TB) (release func()) {
	t.Helper()
	return hold(t, true)
}

func hold(t testing.TB, long bool) (release func()) {
	t.Helper()
	testtier.Heavy(t, testtier.Gate)
	checkName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	asked := time.Now()
	free, err := acquire(ctx, long)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Logf("testslot: waited %s for a slot", time.Since(asked).Round(time.Millisecond))
	return recorded(t.Name(), asked, free, func(held time.Duration) {
		t.Logf("testslot: held the slot %s", held.Round(time.Millisecond))
	})
}

// LogEnv names a file that every hold, at its release, appends a line to:
// the test's name, how long it waited and how long it held its slot, in
// seconds, and when it released it (Unix seconds), tab-separated; and
// every Retry a line of its own.
// .ci/test sets it and prints the longest holds after the measured phase:
// that phase's wall time is its slot-seconds over its slots where the
// slots never sat free, and the release times say when they did.
const LogEnv = "PERFGATE_TEST_SLOT_LOG"

// record appends one hold to LogEnv's file, if it is set.
func record(name string, waited, held time.Duration) {
	appendLog(fmt.Sprintf("%s\t%.2f\t%.2f\t%.2f\n", name, waited.Seconds(), held.Seconds(), float64(time.Now().UnixMilli())/1000))
}

// Retry notes in LogEnv's file that t runs its gate again and why (the
// first line of why, at most 300 bytes): a line "name<TAB>again<TAB>why".
// A passing test's own log is not printed by a run without -v, so
// without it a green run's repeated holds said whose they were but not
// why, and an A/A alarm at two pairs that came back now and then left no
// trace of which metric alarmed.
func Retry(t testing.TB, why string) {
	t.Helper()
	why, _, _ = strings.Cut(why, "\n")
	if len(why) > 300 {
		why = strings.ToValidUTF8(why[:300], "") // not half a character
	}
	t.Logf("testslot: running again: %s", why)
	appendLog(fmt.Sprintf("%s\tagain\t%s\n", t.Name(), strings.ReplaceAll(why, "\t", " ")))
}

// appendLog appends line to LogEnv's file, if it is set. A line under
// PIPE_BUF written with O_APPEND lands whole beside other processes'.
func appendLog(line string) {
	path := os.Getenv(LogEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return // a record of timings is not worth failing a test over
	}
	defer f.Close()
	f.WriteString(line)
}
