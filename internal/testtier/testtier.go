// Package testtier names the suite's two tiers. `go test -short ./...` is
// the inner loop: pure logic and in-process servers, no docker engine, no
// PostgreSQL server, no Chromium, no debootstrap, no measured gate and no
// measured knee, in at most 90 s on 2 cores. The full suite (.ci/test)
// runs everything, and there a test whose part is missing fails rather
// than skips.
//
// The few helpers that start one of those parts call Heavy first, so the
// skip is written once per part, not once per test. It is a test helper:
// no command imports it.
package testtier

import "testing"

// The parts a heavy test needs, as Heavy's skip message names them.
const (
	Docker      = "a docker engine and its compose tool"
	Postgres    = "a PostgreSQL server"
	Chromium    = "headless Chromium"
	Debootstrap = "a Debian base image made with debootstrap"
	Gate        = "a measured gate (real arms under timed load)"
	// Knee is a capacity experiment's knee measured against an in-process
	// pool: its clients must keep their turns, which beside the short
	// tier's other test binaries on 2 cores they did not (the knee tests
	// compare with what the pool delivered and run again when starved,
	// and took a quarter of the tier's 90 s doing so). The full suite runs
	// them in its measured phase, alone.
	Knee = "a measured knee (an in-process pool whose clients keep their turns only on a machine to themselves)"
)

// Heavy skips t in the short tier: t needs part (one of the constants
// above). Outside -short it does nothing: the full suite never skips.
func Heavy(t testing.TB, part string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s: not in the short tier (go test -short); the full suite, bash .ci/test, runs it", part)
	}
}
