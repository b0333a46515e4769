// Command verdictd benchmarks perfgate-verdictd with perfgate's own load
// engine (`perfgate load`): for each store (SQLite under --data, and a real
// PostgreSQL started from the machine's binaries) it steps the arrival rate
// of two workloads, ingesting 100 kB reports (POST /v1/attempts, each a new
// run) and reading verdicts (GET /v1/verdicts by SHA), and prints the
// highest rate each sustained with a p99 under 50 ms.
//
//	go run ./bench/verdictd [-stores sqlite,postgres] [-duration 10s]
//
// It is not part of go test: it takes minutes and wants a quiet machine.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/load"
)

// limit is the p99 the claim holds rates to.
const limit = 50 * time.Millisecond

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stores := flag.String("stores", "sqlite,postgres", "the stores to bench, comma-separated")
	ingest := flag.String("ingest-rates", "10,25,50,100,200,400", "the ingest arrival rates to step through (/s)")
	reads := flag.String("read-rates", "50,100,200,400,800,1600", "the read arrival rates to step through (/s)")
	duration := flag.Duration("duration", 10*time.Second, "each step's measured window")
	warmup := flag.Duration("warmup", 2*time.Second, "each step's warm-up")
	flag.Parse()
	// A p99 over fewer than 100 answers is the slowest one or two: the
	// steps start where a step measures at least 100.
	for _, r := range append(rates(*ingest), rates(*reads)...) {
		if r*duration.Seconds() < 100 {
			fmt.Fprintf(os.Stderr, "bench/verdictd: a step at %g/s for %s measures fewer than 100 answers, too few for a p99: raise the rate or -duration\n", r, *duration)
			os.Exit(2)
		}
	}
	if err := run(ctx, strings.Split(*stores, ","), rates(*ingest), rates(*reads), *duration, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "bench/verdictd:", err)
		os.Exit(1)
	}
}

func rates(s string) []float64 {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v <= 0 {
			fmt.Fprintf(os.Stderr, "bench/verdictd: rate %q is not a positive number\n", f)
			os.Exit(2)
		}
		out = append(out, v)
	}
	return out
}

// step is one perfgate load run's figures.
type step struct {
	offered, achieved float64
	p50, p99          time.Duration
	success           float64
	requests          uint64
}

func (s step) holds() bool {
	return s.p99 < limit && s.success >= 0.99 && s.achieved >= 0.95*s.offered
}

func run(ctx context.Context, stores []string, ingestRates, readRates []float64, d, warmup time.Duration) error {
	work, err := os.MkdirTemp("", "bench-verdictd-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bins, err := build(ctx, work)
	if err != nil {
		return err
	}
	type result struct {
		store, workload string
		steps           []step
	}
	var results []result
	for _, kind := range stores {
		storeArgs, cleanup, err := storeFor(ctx, kind, filepath.Join(work, kind))
		if err != nil {
			return err
		}
		url, token, stopService, err := startService(ctx, bins, storeArgs)
		if err != nil {
			cleanup()
			return err
		}
		var ing, rd []step
		next := 1_000_000_000 // run ids: ten digits, so the head SHA can embed them
		for _, r := range ingestRates {
			s, n, err := ingestStep(ctx, bins, work, url, token, r, d, warmup, next)
			if err != nil {
				stopService()
				cleanup()
				return err
			}
			next += n
			ing = append(ing, s)
			fmt.Printf("%-8s ingest %6.0f/s: achieved %7.1f/s p50 %6.1f ms p99 %6.1f ms success %.3f\n", kind, r, s.achieved, ms(s.p50), ms(s.p99), s.success)
			if !s.holds() {
				break
			}
		}
		for _, r := range readRates {
			s, err := readStep(ctx, bins, work, url, r, d, warmup, 1_000_000_000, next)
			if err != nil {
				stopService()
				cleanup()
				return err
			}
			rd = append(rd, s)
			fmt.Printf("%-8s read   %6.0f/s: achieved %7.1f/s p50 %6.1f ms p99 %6.1f ms success %.3f\n", kind, r, s.achieved, ms(s.p50), ms(s.p99), s.success)
			if !s.holds() {
				break
			}
		}
		stopService()
		cleanup()
		results = append(results, result{kind, "ingest (100 kB report)", ing}, result{kind, "verdict reads", rd})
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("\nsustained rate with p99 under %s (success >= 99 %%, achieved >= 95 %% of offered); load average %s", limit, load)
	for _, r := range results {
		best := "none of the steps"
		for _, s := range r.steps {
			if s.holds() {
				best = fmt.Sprintf("%.0f/s (p99 %.1f ms)", s.offered, ms(s.p99))
			}
		}
		fmt.Printf("  %-8s %-24s %s\n", r.store, r.workload, best)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type binaries struct{ perfgate, verdictd string }

func build(ctx context.Context, dir string) (binaries, error) {
	b := binaries{perfgate: filepath.Join(dir, "perfgate"), verdictd: filepath.Join(dir, "perfgate-verdictd")}
	for bin, pkg := range map[string]string{b.perfgate: "github.com/perfgate/perfgate/cmd/perfgate", b.verdictd: "github.com/perfgate/perfgate/cmd/perfgate-verdictd"} {
		out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg).CombinedOutput()
		if err != nil {
			return b, fmt.Errorf("building %s: %v\n%s", pkg, err, out)
		}
	}
	return b, nil
}

// storeFor gives the service's store flags for kind, and its cleanup.
func storeFor(ctx context.Context, kind, dir string) ([]string, func(), error) {
	switch kind {
	case "sqlite":
		return []string{"--data", dir}, func() {}, nil
	case "postgres":
		// PostgreSQL's defaults (fsync on): the bench measures the store a
		// team would run.
		s, err := armdb.Start(ctx, armdb.Options{Databases: []string{"verdictd"}, TLS: true})
		if err != nil {
			return nil, nil, fmt.Errorf("starting PostgreSQL (apt-get install postgresql): %w", err)
		}
		return []string{"--database-url", s.DSN("verdictd")}, func() { s.Stop() }, nil
	}
	return nil, nil, fmt.Errorf("no store %q: write sqlite or postgres", kind)
}

// startService mints a token, starts perfgate-verdictd on a free loopback
// port and returns its URL and a stop func (SIGTERM, then wait).
func startService(ctx context.Context, b binaries, storeArgs []string) (string, string, func(), error) {
	out, err := exec.CommandContext(ctx, b.verdictd, append([]string{"token", "add", "acme/bench"}, storeArgs...)...).Output()
	if err != nil {
		return "", "", nil, fmt.Errorf("minting a token: %w", err)
	}
	token := strings.TrimSpace(string(out))
	// Logs at info, as a team runs it: one JSON line a request is part of
	// the cost measured.
	// Public reads, as the figures in results/ were measured: the read
	// workload sends no credential.
	cmd := exec.Command(b.verdictd, append([]string{"serve", "--listen", "127.0.0.1:0", "--reads", "public"}, storeArgs...)...)
	cmd.Env = append(os.Environ(), "PERFGATE_GITHUB_TOKEN=", "PERFGATE_GITHUB_APP_ID=", "PERFGATE_GITHUB_INSTALLATION_ID=", "PERFGATE_GITHUB_APP_KEY_FILE=") // never publish from the bench
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", "", nil, err
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if !sent && json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving" {
				addr <- line.Addr
				sent = true
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	select {
	case a := <-addr:
		return "http://" + a, token, stop, nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return "", "", nil, fmt.Errorf("perfgate-verdictd did not serve within 30 s")
	}
}

// loadRun runs `perfgate load` with the plan in dir and reads its report.
func loadRun(ctx context.Context, b binaries, dir, url string, rate float64, d, warmup time.Duration, vars ...string) (step, error) {
	out := filepath.Join(dir, "load.json")
	args := []string{"load", "--plan", filepath.Join(dir, "plan.toml"), "--target", url,
		"--rate", fmt.Sprint(rate), "--duration", d.String(), "--warmup", warmup.String(), "--out", out}
	for _, v := range vars {
		args = append(args, "--var", v)
	}
	cmd := exec.CommandContext(ctx, b.perfgate, args...)
	if msg, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState.ExitCode() != 1 {
		return step{}, fmt.Errorf("perfgate load at %.0f/s: %v\n%s", rate, err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		return step{}, fmt.Errorf("reading perfgate load's report: %w", err)
	}
	var r load.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		return step{}, fmt.Errorf("reading perfgate load's report: %w", err)
	}
	s := step{offered: rate, achieved: r.Schedule.Achieved, success: r.Total.SuccessRatio, requests: r.Total.Requests}
	if r.Total.Latency != nil {
		s.p50 = time.Duration(r.Total.Latency.P50) * time.Microsecond
		s.p99 = time.Duration(r.Total.Latency.P99) * time.Microsecond
	}
	return s, nil
}
