package exampleservice

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

type server struct {
	c       *config
	st      *pgStore
	started time.Time
	nextID  atomic.Int64

	// stallUntil is the end of the current stall, in nanoseconds since
	// started: on the monotonic clock, so a step of the wall clock neither
	// opens a stall nor stretches one.
	stallUntil atomic.Int64

	leakMu sync.Mutex
	leaked [][]byte

	// sink keeps the CPU work from being optimised away.
	sink atomic.Uint32

	// exchanges counts the token exchanges /onward made; cached is set
	// once the token is cached (--token-cache).
	exchanges atomic.Int64
	cached    atomic.Bool
}

func newServer(c *config, st *pgStore) *server {
	return &server{c: c, st: st, started: time.Now()}
}

// reply is what a handler answers before the knobs' costs are added.
type reply struct {
	status int
	body   any
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /hello", s.wrap(func(r *http.Request) reply {
		return reply{http.StatusOK, "hello"}
	}))
	mux.HandleFunc("GET /items/{id}", s.wrap(s.getItem))
	mux.HandleFunc("POST /items", s.wrap(s.postItem))
	mux.HandleFunc("GET /alloc", s.allocRoute)
	mux.HandleFunc("GET /debug/cpu", s.cpuRoute)
	mux.HandleFunc("GET /onward/{id}", s.wrap(s.onward))
	mux.HandleFunc("GET /calls", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"exchanges\":%d}\n", s.exchanges.Load())
	})
	return s.overriding(mux)
}

// overriding answers every request to a --status-override path with its
// status, body unchanged, whichever route serves the path (or none, or
// another method): /healthz=503 is an arm that never gets ready.
func (s *server) overriding(next http.Handler) http.Handler {
	if len(s.c.overrides) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code, ok := s.c.overrides[r.URL.Path]; ok {
			w = &statusWriter{ResponseWriter: w, code: code}
		}
		next.ServeHTTP(w, r)
	})
}

// statusWriter writes code whatever status the handler writes.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(int) {
	if !w.wrote {
		w.wrote = true
		w.ResponseWriter.WriteHeader(w.code)
	}
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.WriteHeader(w.code)
	return w.ResponseWriter.Write(b)
}

// onward stands for a read passed on to another service under a token
// exchanged for the caller's: with --token-cache the token is exchanged
// once, without it once per request, the broken cache a counter catches.
func (s *server) onward(r *http.Request) reply {
	if !s.c.tokenCache || !s.cached.Load() {
		s.exchanges.Add(1)
		s.cached.Store(s.c.tokenCache)
	}
	return reply{http.StatusOK, map[string]string{"id": r.PathValue("id")}}
}

// wrap adds the knobs' costs around a route's own work and times the whole
// for the Server-Timing header.
func (s *server) wrap(h func(*http.Request) reply) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if err := s.waitStall(r.Context()); err != nil {
			return
		}
		s.burn(s.c.cpuWork)
		var scratch []byte
		if s.c.alloc > 0 {
			scratch = touch(make([]byte, s.c.alloc))
		}
		if s.c.leak > 0 {
			s.leakMu.Lock()
			s.leaked = append(s.leaked, touch(make([]byte, s.c.leak)))
			s.leakMu.Unlock()
		}
		rep := h(r)
		// One sleep to one deadline: the work plus --latency, stretched by
		// --latency-factor. Two sleeps would each overshoot by the timer's
		// granularity (about 1 ms here), and a 10 % slowdown would read 19 %.
		extra := s.c.latency + s.c.wait() // --latency, --wait-mean, --slow-share
		if natural := time.Since(start) + extra; extra > 0 || s.c.latencyFactor > 1 {
			sleep(r.Context(), time.Until(start.Add(time.Duration(float64(natural)*s.c.latencyFactor))))
		}
		if len(scratch) > 0 {
			s.sink.Add(uint32(scratch[len(scratch)-1]))
		}
		write(w, rep, start)
	}
}

func write(w http.ResponseWriter, rep reply, start time.Time) {
	var body []byte
	switch b := rep.body.(type) {
	case string:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		body = []byte(b + "\n")
	default:
		w.Header().Set("Content-Type", "application/json")
		body, _ = json.Marshal(b)
		body = append(body, '\n')
	}
	dur := float64(time.Since(start).Microseconds()) / 1000
	w.Header().Set("Server-Timing", "app;dur="+strconv.FormatFloat(dur, 'f', 3, 64))
	w.WriteHeader(rep.status)
	_, _ = w.Write(body)
}

type item struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

type problem struct {
	Error string `json:"error"`
}

// getItem answers a synthetic item computed from the id, without the store:
// reads stay free of transactions, so transactions per request measure the
// writes alone.
func (s *server) getItem(r *http.Request) reply {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 0 {
		return reply{http.StatusBadRequest, problem{"the item id must be a non-negative integer"}}
	}
	return reply{http.StatusOK, item{ID: id, Name: "item-" + strconv.FormatInt(id, 10)}}
}

func (s *server) postItem(r *http.Request) reply {
	var in struct {
		Name string `json:"name"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		return reply{http.StatusBadRequest, problem{"reading the body: " + err.Error()}}
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return reply{http.StatusBadRequest, problem{`the body must be JSON like {"name":"x"}`}}
		}
	}
	if in.Name == "" {
		in.Name = "unnamed"
	}
	if s.st == nil {
		return reply{http.StatusCreated, item{ID: s.nextID.Add(1), Name: in.Name}}
	}
	id, err := s.st.createItem(r.Context(), in.Name, s.c.storeWrites)
	if err != nil {
		return reply{http.StatusServiceUnavailable, problem{"the store failed: " + err.Error()}}
	}
	return reply{http.StatusCreated, item{ID: id, Name: in.Name}}
}

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if time.Since(s.started) < s.c.readyDelay {
		write(w, reply{http.StatusServiceUnavailable, "starting"}, start)
		return
	}
	if s.st != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.st.ping(ctx); err != nil {
			write(w, reply{http.StatusServiceUnavailable, "store: " + err.Error()}, start)
			return
		}
	}
	write(w, reply{http.StatusOK, "ok"}, start)
}

// allocRoute holds ?mb= MiB (at most 1024) for ?hold= (at most 10s), then
// gives it back to the OS, so a test sees the resident memory rise and fall.
func (s *server) allocRoute(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	mb, err := strconv.Atoi(r.URL.Query().Get("mb"))
	if err != nil || mb < 1 || mb > 1024 {
		write(w, reply{http.StatusBadRequest, problem{"mb must be 1..1024"}}, start)
		return
	}
	hold := 100 * time.Millisecond
	if v := r.URL.Query().Get("hold"); v != "" {
		if hold, err = time.ParseDuration(v); err != nil || hold < 0 || hold > 10*time.Second {
			write(w, reply{http.StatusBadRequest, problem{"hold must be a duration up to 10s"}}, start)
			return
		}
	}
	buf := touch(make([]byte, mb<<20))
	sleep(r.Context(), hold)
	s.sink.Add(uint32(buf[len(buf)-1]))
	buf = nil
	debug.FreeOSMemory()
	write(w, reply{http.StatusOK, fmt.Sprintf("held %d MiB for %s", mb, hold)}, start)
}

// touch writes every page so the memory becomes resident.
func touch(b []byte) []byte {
	for i := 0; i < len(b); i += 4096 {
		b[i] = byte(i)
	}
	if len(b) > 0 {
		b[len(b)-1] = 1
	}
	return b
}

// burn does n SHA-256 iterations.
func (s *server) burn(n int) {
	if n <= 0 {
		return
	}
	var h [32]byte
	for range n {
		h = sha256.Sum256(h[:])
	}
	s.sink.Add(uint32(h[0]))
}

func (s *server) waitStall(ctx context.Context) error {
	if d := time.Duration(s.stallUntil.Load()) - time.Since(s.started); d > 0 {
		if !sleep(ctx, d) {
			return ctx.Err()
		}
	}
	return nil
}

// sleep waits d or until ctx ends; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	// Go's timers wake through epoll's millisecond timeout, so a 5.5 ms
	// sleep reads 6-7 ms and a 10 % slowdown reads 20 %. A short sleep is a
	// nanosleep on this goroutine's thread instead (about 0.1 ms late), the
	// same for every arm; long ones (stalls) stay cancelable.
	if d < 200*time.Millisecond {
		ts := unix.NsecToTimespec(d.Nanoseconds())
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// cpuRoute reports the process's own CPU time from getrusage, a source
// independent of /proc, so tests can check what perfgate reads.
func (s *server) cpuRoute(w http.ResponseWriter, r *http.Request) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		write(w, reply{http.StatusInternalServerError, problem{"getrusage: " + err.Error()}}, time.Now())
		return
	}
	write(w, reply{http.StatusOK, struct {
		CPUNanos int64 `json:"cpu_ns"`
	}{ru.Utime.Nano() + ru.Stime.Nano()}}, time.Now())
}
