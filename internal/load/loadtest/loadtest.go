// Package loadtest holds the load engine's test helpers, shared by the
// engine's own tests (internal/load) and its tests against hostile targets
// (internal/load/hostiletest): two test binaries, so that go test runs
// them side by side. It is a test helper: no command imports it.
package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

// FixedSource hands out its requests in turn, counting draws per stage.
type FixedSource struct {
	Reqs  []load.Request
	n     int
	Drawn [2]int
}

// Next implements load.Source.
func (s *FixedSource) Next(stage load.Stage) load.Request {
	s.Drawn[stage]++
	r := s.Reqs[s.n%len(s.Reqs)]
	s.n++
	return r
}

// Source is a FixedSource with one GET request per group, and the groups,
// each expecting 200.
func Source(groups ...string) (*FixedSource, []load.Group) {
	s := &FixedSource{}
	var gs []load.Group
	for i, g := range groups {
		s.Reqs = append(s.Reqs, load.Request{Group: i, Method: "GET", Path: "/" + g + "?i=1"})
		gs = append(gs, load.Group{Name: g, Expect: []int{200}})
	}
	return s, gs
}

// Serve starts a loopback HTTP server for the test's lifetime.
func Serve(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// Run runs an attack on t's engine (EngineOf), bounded by a deadline well
// past its window.
func Run(t testing.TB, a load.Attack) *load.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), a.Warmup+a.Duration+20*time.Second)
	defer cancel()
	a.Engine = EngineOf(t)
	r, err := load.Run(ctx, a)
	if err != nil {
		t.Fatalf("load.Run: %v", err)
	}
	return r
}

// EngineOf is the engine t runs on: the worker engine under BothEngines's
// "workers" case, the default elsewhere. It reads t's name, not a package
// variable, so tests that run both engines may run in parallel.
func EngineOf(t testing.TB) load.Engine {
	for _, part := range strings.Split(t.Name(), "/") {
		if part == "workers" {
			return load.EngineWorkers
		}
	}
	return load.EngineAuto
}

// BothEngines runs a test on the event loop and on the worker engine, one
// after the other; Run picks the case's engine (EngineOf), and tests that
// call load.Run themselves write Engine: EngineOf(t).
func BothEngines(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, name := range []string{"loop", "workers"} {
		t.Run(name, f)
	}
}

// BothEnginesAtOnce is BothEngines with the two runs side by side, for a
// parallel test that waits (on a stalling or failing target, a cancel)
// rather than timing the CPU: one after the other, four such tests were
// a third of the load package's short tier.
func BothEnginesAtOnce(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, name := range []string{"loop", "workers"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t)
		})
	}
}

// Labelled counts the goroutines carrying the pprof label test=name: run
// an attack inside pprof.Do(ctx, pprof.Labels("test", t.Name()), ...) and
// its goroutines carry it (a goroutine inherits the labels of the one that
// starts it), so a leak check counts that run's alone, beside parallel
// tests.
func Labelled(t testing.TB, name string) int {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(name)
	if err != nil {
		t.Fatal(err)
	}
	label := `"test":` + string(want)
	n := 0
	// After the header "goroutine profile: total N", records are
	// "N @ pc..." then "# labels: {...}" and the stack, apart by a blank
	// line.
	_, body, _ := strings.Cut(b.String(), "\n")
	for _, rec := range strings.Split(body, "\n\n") {
		first, rest, _ := strings.Cut(rec, "\n")
		count, _, ok := strings.Cut(first, " @ ")
		if !ok || !strings.Contains(rest, "# labels: {") || !strings.Contains(rest, label) {
			continue
		}
		c, err := strconv.Atoi(strings.TrimSpace(count))
		if err != nil {
			t.Fatalf("reading the goroutine profile: %q: %v", first, err)
		}
		n += c
	}
	return n
}

// HostileServer answers every connection with behave, run on its own
// goroutine; the test ends them by closing the listener and the conns.
func HostileServer(t testing.TB, behave func(c *net.TCPConn, br *bufio.Reader)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				behave(c.(*net.TCPConn), bufio.NewReader(c))
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

// ReadHead reads a request head, false at EOF.
func ReadHead(br *bufio.Reader) bool {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return false
		}
		if len(line) <= 2 {
			return true
		}
	}
}

// WatchStalls probes the process's timers every millisecond until the
// returned function is called, and that function gives the worst
// oversleep seen: how late the host let this process's goroutines wake.
func WatchStalls(t testing.TB) func() time.Duration {
	t.Helper()
	done := make(chan struct{})
	worst := make(chan time.Duration, 1)
	go func() {
		var w time.Duration
		for {
			select {
			case <-done:
				worst <- w
				return
			default:
			}
			before := time.Now()
			time.Sleep(time.Millisecond)
			w = max(w, time.Since(before)-time.Millisecond)
		}
	}()
	var once sync.Once
	var got time.Duration
	stop := func() time.Duration {
		once.Do(func() { close(done); got = <-worst })
		return got
	}
	t.Cleanup(func() { stop() })
	return stop
}
