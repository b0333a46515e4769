package load_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

// fixedSource hands out its requests in turn, counting draws per stage.
type fixedSource struct {
	reqs  []load.Request
	n     int
	drawn [2]int
}

func (s *fixedSource) Next(stage load.Stage) load.Request {
	s.drawn[stage]++
	r := s.reqs[s.n%len(s.reqs)]
	s.n++
	return r
}

func getSource(groups ...string) (*fixedSource, []load.Group) {
	s := &fixedSource{}
	var gs []load.Group
	for i, g := range groups {
		s.reqs = append(s.reqs, load.Request{Group: i, Method: "GET", Path: "/" + g + "?i=1"})
		gs = append(gs, load.Group{Name: g, Expect: []int{200}})
	}
	return s, gs
}

// serve starts a loopback HTTP server for the test's lifetime.
func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// run runs an attack bounded by a deadline well past its window.
func run(t *testing.T, a load.Attack) *load.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), a.Warmup+a.Duration+20*time.Second)
	defer cancel()
	a.Engine = engine
	r, err := load.Run(ctx, a)
	if err != nil {
		t.Fatalf("load.Run: %v", err)
	}
	return r
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if got < want*(1-tol) || got > want*(1+tol) {
		t.Errorf("%s = %.4g, want %.4g within %.0f%%", what, got, want, tol*100)
	}
}

// engine is the engine bothEngines's current case runs on; run and
// runModel set it on the attacks they are given, and the tests that call
// load.Run themselves write Engine: engine. The tests in this package do
// not run in parallel, so one variable serves.
var engine load.Engine

// bothEngines runs a test on the event loop and on the worker engine.
func bothEngines(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, workers := range []bool{false, true} {
		name := "loop"
		if workers {
			name = "workers"
		}
		t.Run(name, func(t *testing.T) {
			saved := engine
			engine = load.EngineAuto
			if workers {
				engine = load.EngineWorkers
			}
			t.Cleanup(func() { engine = saved })
			f(t)
		})
	}
}
