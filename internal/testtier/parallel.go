package testtier

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// Waiting raises this test binary's -test.parallel to n in the short tier,
// unless the command line set it: call it from TestMain before m.Run.
// The full suite keeps go test's default, since there the same packages'
// measured gates and docker runs share the cores with three other test
// binaries (a run of two gated checkouts at once, four cli tests at a
// time beside the race detector, was starved into cannot judge). go test runs
// at most GOMAXPROCS parallel tests at once (2 on a 2-core runner), which
// suits tests that compute; a package whose parallel tests wait (on
// timeouts, cancels, sleeping targets, child processes) then waits for
// them two at a time, and the short tier's 90 s goes to sleeping. A test
// in such a package that measures time against the CPU must stay serial
// (no t.Parallel): serial tests never run beside the parallel ones.
//
// Under the race detector (go test -race -short) it raises it to half of
// n, at least 2: the detector makes waiting tests compute, and at eight at
// once internal/load's stalling target read its p90 43 % over the truth,
// where at four it reads within its bound.
func Waiting(n int) {
	n = waitingParallel(n, raceDetector)
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if set || !testing.Short() {
		return
	}
	if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
		fmt.Fprintf(os.Stderr, "testtier: setting -test.parallel %d: %v\n", n, err)
	}
}

// waitingParallel is the -test.parallel Waiting sets for n, in a binary
// built with the race detector or not.
func waitingParallel(n int, race bool) int {
	if race {
		return max(2, n/2)
	}
	return n
}
