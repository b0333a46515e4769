// Package target is the bundled capacity target: an HTTP service with a
// fixed pool of W workers that each take S to serve a request, so its
// capacity is exactly W/S requests a second. Requests beyond the pool wait
// in a queue; past the queue limit it sheds with 503. Its /metrics page
// (served by prometheus/client_golang) carries the pool's gauges (workers
// in use, the queue, the wait for a worker) beside the requests in flight,
// which follow the load without running out: the experiments' tests check
// that the pool or its queue is named as what ran out first.
package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Config is the target's shape.
type Config struct {
	Workers int           // W: requests served at once
	Service time.Duration // S: how long a worker takes per request
	// Queue is how many requests may wait for a worker; one more is
	// answered 503 at once (shedding). 0 means 1,000.
	Queue int
	// FailAbove, when positive, answers 503 to any request that arrives
	// while more than FailAbove are already in the target (waiting or
	// served): a target that fails past FailAbove concurrent clients.
	FailAbove int
	// HitEvery, when positive, answers every request with a JSON body
	// {"cache":{"hit":...}} and an X-Cache header: HIT and true for every
	// HitEvery-th request served, MISS and false for the others (a hit
	// ratio of 1/HitEvery). Pad puts that many bytes of a "pad" field
	// before "cache", to move the field past a reader's bound.
	HitEvery, Pad int
}

// Capacity is W/S, the most requests a second the pool can serve.
func (c Config) Capacity() float64 { return float64(c.Workers) / c.Service.Seconds() }

// Server is a running capacity target's handler and its gauges.
type Server struct {
	cfg     Config
	workers chan struct{}
	inside  atomic.Int64 // requests in the target: waiting or served
	waiting atomic.Int64

	mu              sync.Mutex
	waitSum         time.Duration // pool waits since the last scrape
	waitN           int64
	served, shedCnt atomic.Uint64
	busy            atomic.Int64  // nanoseconds workers held requests (delivered.go)
	answered        atomic.Uint64 // for HitEvery
	// duration is each served request's time in the target, wait and
	// service: a histogram for the experiments to read as a quantile.
	duration prometheus.Histogram
}

// New builds a target; it refuses a pool without workers or service time.
func New(cfg Config) (*Server, error) {
	if cfg.Workers < 1 || cfg.Service <= 0 {
		return nil, fmt.Errorf("capacity target with %d workers of %s each: write --workers 4 --service 20ms (both above zero)", cfg.Workers, cfg.Service)
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 1000
	}
	return &Server{cfg: cfg, workers: make(chan struct{}, cfg.Workers),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "capacity_request_duration_seconds",
			Help:    "Time served requests spent in the target: waiting for a worker and served.",
			Buckets: prometheus.ExponentialBuckets(0.001, 1.25, 48)})}, nil
}

func (s *Server) meanWait() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var m float64
	if s.waitN > 0 {
		m = (s.waitSum / time.Duration(s.waitN)).Seconds()
	}
	s.waitSum, s.waitN = 0, 0
	return m
}

// Handler serves /metrics and every other path as one request for a worker.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.metricsHandler())
	mux.HandleFunc("/", s.serve)
	return mux
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	n := s.inside.Add(1)
	defer s.inside.Add(-1)
	if s.cfg.FailAbove > 0 && n > int64(s.cfg.FailAbove) {
		s.shed(w, "more than "+strconv.Itoa(s.cfg.FailAbove)+" requests at once")
		return
	}
	select {
	case s.workers <- struct{}{}:
	default:
		if s.waiting.Add(1) > int64(s.cfg.Queue) {
			s.waiting.Add(-1)
			s.shed(w, "queue full")
			return
		}
		select {
		case s.workers <- struct{}{}:
			s.waiting.Add(-1)
		case <-r.Context().Done():
			s.waiting.Add(-1)
			return
		}
	}
	wait := time.Since(began)
	s.mu.Lock()
	s.waitSum += wait
	s.waitN++
	s.mu.Unlock()
	held := time.Now()
	time.Sleep(s.cfg.Service)
	s.busy.Add(int64(time.Since(held)))
	<-s.workers
	s.served.Add(1)
	s.duration.Observe(time.Since(began).Seconds())
	w.Header().Set("Server-Timing", fmt.Sprintf("total;dur=%.3f", float64(time.Since(began))/1e6))
	if s.cfg.HitEvery > 0 {
		hit := s.answered.Add(1)%uint64(s.cfg.HitEvery) == 0
		w.Header().Set("X-Cache", map[bool]string{true: "HIT", false: "MISS"}[hit])
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"pad\":%q,\"cache\":{\"hit\":%t}}\n", strings.Repeat("x", s.cfg.Pad), hit)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintln(w, "ok")
}

func (s *Server) shed(w http.ResponseWriter, why string) {
	s.shedCnt.Add(1)
	http.Error(w, "shedding: "+why, http.StatusServiceUnavailable)
}

// Serve runs the target on l until ctx ends, then shuts it down.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return fmt.Errorf("serving the capacity target: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if e := <-done; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("stopping the capacity target: %w", err)
	}
	return nil
}
