package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The bundled targets the bench gates besides the example service, whose
// latency is one steady sleep. Each is this binary re-run as
// `power target --kind K --factor F --addr A`, so the arms need no build
// of their own. Factor is the head's slowdown; 1 is the base.
//
//	exp      service time exponential with mean --mean: every answer's
//	         time scales by the factor, so p50, p95 and p99 all move by it
//	cpu      CPU-bound: --work SHA-256 rounds, times the factor, on the
//	         request's goroutine; 10 % slower is 10 % more work
//	bimodal  a cache: 90 % hits (--mean/2), 10 % misses (--mean x 3), each
//	         uniform within +-20 %; both scale by the factor (p99 about 7 x
//	         p50, under the judge's stall bound of 10 x)
//	tail     97 % of answers uniform around --mean, untouched by the
//	         factor; 3 % slow ones (4 to 6 x --mean) scale by it, so p99
//	         moves by the factor and p50 does not (p99 stays under 10 x
//	         p50, the judge's stall bound)
var targetKinds = []string{"exp", "cpu", "bimodal", "tail"}

// runTarget serves one bundled target until SIGTERM or SIGINT.
func runTarget(args []string) error {
	fs := flag.NewFlagSet("power target", flag.ContinueOnError)
	kind := fs.String("kind", "exp", "exp, cpu, bimodal or tail")
	addr := fs.String("addr", "127.0.0.1:0", "host:port to listen on")
	mean := fs.Duration("mean", 10*time.Millisecond, "the kind's time scale (see the package comment)")
	work := fs.Int("work", 20000, "cpu: SHA-256 rounds per request")
	factor := fs.Float64("factor", 1, "the head's slowdown factor; 1 is the base")
	seed := fs.Uint64("seed", 1, "seed of the service times")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *factor <= 0 || math.IsNaN(*factor) {
		return fmt.Errorf("--factor %v: give a positive factor", *factor)
	}
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15))
	draw := func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return rng.Float64()
	}
	m := float64(*mean)
	var serve func()
	switch *kind {
	case "exp":
		serve = func() { nap(time.Duration(-math.Log(1-draw()) * m * *factor)) }
	case "cpu":
		n := int(math.Round(float64(*work) * *factor))
		serve = func() { burn(n) }
	case "bimodal":
		serve = func() {
			base := m / 2
			if draw() < 0.1 {
				base = 3 * m
			}
			nap(time.Duration(base * (0.8 + 0.4*draw()) * *factor))
		}
	case "tail":
		serve = func() {
			if draw() < 0.03 {
				nap(time.Duration(m * (4 + 2*draw()) * *factor))
				return
			}
			nap(time.Duration(m * (0.8 + 0.4*draw())))
		}
	default:
		return fmt.Errorf("--kind %q: write one of %v", *kind, targetKinds)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		serve()
		fmt.Fprintln(w, "ok")
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("power target: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("power target: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("power target: stopping: %w", err)
	}
	return nil
}

// nap sleeps d with nanosleep on the goroutine's thread: Go's timers wake
// on epoll's millisecond steps, which would turn a 10 % slowdown of a few
// ms into 20 % (README: "How the slowdown is injected").
func nap(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// burn does n SHA-256 rounds, each over the previous digest.
func burn(n int) {
	var sum [32]byte
	for i := 0; i < n; i++ {
		sum = sha256.Sum256(sum[:])
	}
	if sum[0] == 0 && sum[1] == 0 && sum[2] == 0 && sum[3] == 0 {
		// Keeps the loop from being optimised away; practically never true.
		fmt.Fprint(os.Stderr, strconv.Itoa(int(sum[4])))
	}
}
