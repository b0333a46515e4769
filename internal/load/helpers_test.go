package load_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/load/loadtest"
)

// The tests that wait on windows and targets (most of them) run in
// parallel; the ones that count goroutines, set GOMAXPROCS, measure
// allocations, starve the generator or exhaust its sockets stay serial:
// go test runs every serial test of the package before its parallel ones.
// The tests against endless and hostile targets are
// internal/load/hostiletest's, a test binary of their own.

type fixedSource = loadtest.FixedSource

var (
	getSource   = loadtest.Source
	bothEngines = loadtest.BothEngines
	atOnce      = loadtest.BothEnginesAtOnce
)

func serve(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	t.Helper()
	return loadtest.Serve(t, h)
}

func run(t *testing.T, a load.Attack) *load.Result {
	t.Helper()
	return loadtest.Run(t, a)
}

func engineOf(t *testing.T) load.Engine { return loadtest.EngineOf(t) }

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if got < want*(1-tol) || got > want*(1+tol) {
		t.Errorf("%s = %.4g, want %.4g within %.0f%%", what, got, want, tol*100)
	}
}
