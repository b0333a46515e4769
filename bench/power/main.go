// Command power measures the A/B gate's power on this machine: the example
// service as base and head, the head carrying no change (A/A) or a p50
// slowdown of 10 % or 25 % (a longer --latency; see README), each gate
// run again and again with one profile. It prints, per profile and scenario, the verdict
// counts, the detection rate (slowed heads) or false-alarm rate (A/A) with
// their exact one-sided 95 % bounds, the cannot-judge share and the wall
// time per gate, then one line saying whether the profile reaches the goal:
// a 10 % slowdown caught in at least 95 % of runs, at most 1 % false
// alarms, each gate in at most 6 minutes.
//
//	go run ./bench/power --quick                        # smoke check, under 3 minutes
//	go run ./bench/power --profile short --runs 12      # the short profile
//	go run ./bench/power --profile ferrofed --runs 1    # FerroFED's gate's defaults, ~5 min a gate
//	go run ./bench/power --ceiling 1000 --profile default     # what no noise but the answers' own allows
//	go run ./bench/power --from target/power/results.jsonl --tolerances "latency=5;latency=7.5" --pairs-variants 4,6,8
//
// Every gate's verdict and figures (with the judge's whole input) go to
// --out as a JSON line the moment it ends, so an interrupted run keeps what
// it measured, and --from re-judges them offline with other tolerances or
// fewer pairs. Before each gate it waits for the 1-minute load average to
// fall under --max-load. It is not part of go test: it takes minutes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/internal/exampleservice"

	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
)

type options struct {
	profiles  []profile
	scenarios []scenario
	runs      int
	first     int
	out       string
	latency   time.Duration
	overhead  time.Duration
	inject    string
	maxLoad   float64
	maxWait   time.Duration
	keep      bool
	target    string // "example" or one of targetKinds
	mean      time.Duration
	work      int
	self      string // this binary, which serves the bundled targets
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "target" {
		// The bench re-runs itself as a bundled target (target.go).
		if err := runTarget(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench/power:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench/power:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("power", flag.ContinueOnError)
	profileFlag := fs.String("profile", "short", "profiles to run, comma-separated: "+profileNames())
	scenarioFlag := fs.String("scenarios", "aa,slow10,slow25", "scenarios, comma-separated: aa, slow10, slow25")
	runs := fs.Int("runs", 10, "gates per scenario (scenarios take turns, so a partial run stays balanced)")
	firstRun := fs.Int("first-run", 1, "number of the first run (it seeds the requests and a bundled target's service times), so separate invocations draw afresh")
	out := fs.String("out", "target/power/results.jsonl", "JSON lines file every gate's verdict and figures are appended to")
	quick := fs.Bool("quick", false, "smoke check: the quick profile, 1 run per scenario, at most 20 s waiting for the load")
	latency := fs.Duration("latency", 20*time.Millisecond, "--latency of the base (and of the head in A/A)")
	overhead := fs.Duration("overhead", 900*time.Microsecond, "with --inject latency: what the gate measures beyond --latency (base p50 - --latency in A/A runs here)")
	inject := fs.String("inject", "latency", `how the head is slowed: "latency" (a longer --latency, calibrated so its p50 as measured is the scenario's factor) or "factor" (--latency-factor, which overshoots: see README)`)
	maxLoad := fs.Float64("max-load", 1.5, "wait before each gate until the 1-minute load average is under this")
	maxWait := fs.Duration("max-wait", 30*time.Minute, "longest wait for the load; after it the gate runs and its row is marked")
	keep := fs.Bool("keep", false, "keep each gate's folder (report, summary, arms' logs)")
	pairs := fs.Int("pairs", 0, "override the profile's pairs")
	warmup := fs.Duration("warmup", 0, "override the profile's warm-up")
	measure := fs.Duration("measure", 0, "override the profile's measured window")
	rate := fs.Float64("rate", 0, "override the profile's arrivals/s per arm")
	tol := fs.String("tolerance", "", `override the profile's tolerances, percent: "latency=5" or "p50=5" (every group's p50); "default" for the judge's`)
	target := fs.String("target", "example", "the service gated: example (the example service), or a bundled target: exp, cpu, bimodal, tail (target.go)")
	mean := fs.Duration("mean", 5*time.Millisecond, "a bundled target's time scale")
	work := fs.Int("work", 20000, "the cpu target's SHA-256 rounds per request")
	resample := fs.String("resample", "", "run nothing: resample the recorded A/A gates of these results files (comma-separated) with injected slowdowns, and judge every resample with the paired rule, the medians rule and the anchors' methods")
	ceilingGates := fs.Int("ceiling", 0, "run nothing: simulate this many gates of each bundled target and head at --profile's answers a phase on a machine that adds no noise, judge them, and print what the judge (and a test knowing its noise) catches there (ceiling.go)")
	perGate := fs.Int("per-gate", 100, "with --resample: resamples drawn from each recorded A/A gate")
	from := fs.String("from", "", "run nothing: summarise this results file (and re-judge it with --tolerances / --pairs-variants)")
	tolVariants := fs.String("tolerances", "", `with --from: tolerance sets to re-judge with, separated by ";" ("latency=5;latency=7.5;p50=5")`)
	pairVariants := fs.String("pairs-variants", "", "with --from: re-judge with only the first K pairs of each gate, comma-separated K")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ceilingGates > 0 {
		pr, ok := profiles[currentProfileName(*profileFlag)]
		if !ok {
			return fmt.Errorf("--ceiling: unknown profile %q: write one of %s", *profileFlag, profileNames())
		}
		return ceiling(os.Stdout, pr, *ceilingGates, float64(*mean)/float64(time.Millisecond))
	}
	if *resample != "" {
		return resampleFiles(os.Stdout, strings.Split(*resample, ","), *perGate, *pairs)
	}
	if *from != "" {
		return summariseFile(*from, *tolVariants, *pairVariants)
	}
	if *quick {
		*profileFlag, *runs, *maxWait = "quick", 1, 20*time.Second
	}
	if *inject != "latency" && *inject != "factor" {
		return fmt.Errorf("--inject %q: write latency or factor", *inject)
	}
	o := options{runs: *runs, first: *firstRun, out: *out, latency: *latency, overhead: *overhead, inject: *inject, maxLoad: *maxLoad, maxWait: *maxWait, keep: *keep,
		target: *target, mean: *mean, work: *work}
	if o.target != "example" {
		known := false
		for _, k := range targetKinds {
			known = known || k == o.target
		}
		if !known {
			return fmt.Errorf("--target %q: write example or one of %v", o.target, targetKinds)
		}
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding this binary to serve the %s target: %w", o.target, err)
		}
		o.self = self
	}
	for _, name := range strings.Split(*profileFlag, ",") {
		pr, ok := profiles[currentProfileName(strings.TrimSpace(name))]
		if !ok {
			return fmt.Errorf("unknown profile %q: write one of %s", name, profileNames())
		}
		custom := false
		if *pairs > 0 {
			pr.Pairs, custom = *pairs, true
		}
		if *warmup > 0 {
			pr.Warmup, custom = *warmup, true
		}
		if *measure > 0 {
			pr.Measure, custom = *measure, true
		}
		if *rate > 0 {
			pr.Rate, custom = *rate, true
		}
		if *tol != "" {
			t, err := parseTol(*tol)
			if err != nil {
				return err
			}
			pr.Tol, custom = t, true
		}
		if custom {
			pr.Name += "*"
		}
		o.profiles = append(o.profiles, pr)
	}
	for _, name := range strings.Split(*scenarioFlag, ",") {
		sc, ok := scenarios[strings.TrimSpace(name)]
		if !ok {
			return fmt.Errorf("unknown scenario %q: write aa, slow5, slow10 or slow25", name)
		}
		o.scenarios = append(o.scenarios, sc)
	}
	if o.runs < 1 {
		return fmt.Errorf("--runs %d: at least 1", o.runs)
	}
	return measureAll(ctx, o)
}

func measureAll(ctx context.Context, o options) error {
	tmp, err := os.MkdirTemp("", "powerbench")
	if err != nil {
		return fmt.Errorf("making a temp folder for the example service: %w", err)
	}
	defer os.RemoveAll(tmp)
	bin := ""
	if o.target == "example" {
		if bin, err = exampleservice.Build(ctx, tmp); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return fmt.Errorf("making the results folder: %w", err)
	}
	if o.target != "example" {
		fmt.Printf("bench/power: the bundled %s target (target.go, time scale %s), the head's service times x the scenario's factor. Results: %s\n", o.target, o.mean, o.out)
	} else {
		fmt.Printf("bench/power: the base runs `exampled --latency %s`; the head %s. Results: %s\n", o.latency, map[string]string{
			"latency": fmt.Sprintf("a longer --latency, (%s + %s) x factor - %s in whole ms, so its p50 as measured is near the factor's", o.latency, o.overhead, o.overhead),
			"factor":  "adds --latency-factor",
		}[o.inject], o.out)
	}
	var all []record
	for _, pr := range o.profiles {
		p, err := pr.plan(o.target)
		if err != nil {
			return err
		}
		fmt.Printf("\nprofile %s\n", pr)
		for i := o.first; i < o.first+o.runs; i++ {
			for _, sc := range o.scenarios {
				rec, err := oneGate(ctx, o, p, pr, sc, bin, tmp, i)
				if err != nil {
					return err
				}
				if err := appendRecord(o.out, rec); err != nil {
					return err
				}
				fmt.Println(rec.line(o.runs))
				all = append(all, rec)
			}
		}
	}
	fmt.Println()
	printSummary(os.Stdout, all)
	return nil
}

// oneGate waits for a quiet machine and runs one gate. A gate that fails
// to run (an arm that would not start) is recorded as cannot judge with
// its error; only a canceled context stops the bench.
func oneGate(ctx context.Context, o options, p *plan.Plan, pr profile, sc scenario, bin, tmp string, i int) (record, error) {
	rec := record{Profile: pr, Scenario: sc.Name, Factor: sc.Factor, Run: i, Latency: o.latency.String(), Inject: o.inject, Target: o.target}
	waited, load, err := waitForLoad(ctx, o.maxLoad, o.maxWait)
	if err != nil {
		return rec, err
	}
	rec.Waited, rec.LoadBefore, rec.LoadHigh = waited.Seconds(), load, load >= o.maxLoad
	vars, err := plan.ResolveVars(p, nil, func(string) string { return "" })
	if err != nil {
		return rec, err
	}
	dir := filepath.Join(tmp, fmt.Sprintf("%s-%s-%d", strings.TrimSuffix(pr.Name, "*"), sc.Name, i))
	arm := func(factor float64, head bool) gate.ArmSpec {
		if o.target != "example" {
			// Base and head draw different service times: the same seed
			// would make an A/A gate's arms identical, not alike.
			seed := 2 * i
			if head {
				seed++
			}
			rec.Latency, rec.Inject = o.mean.String(), "factor"
			return gate.ArmSpec{Command: []string{o.self, "target", "--kind", o.target, "--addr", "127.0.0.1:@PORT@",
				"--mean", o.mean.String(), "--work", strconv.Itoa(o.work), "--factor", strconv.FormatFloat(factor, 'f', -1, 64),
				"--seed", strconv.Itoa(seed)}, Ready: "/healthz"}
		}
		lat := o.latency
		if factor != 1 && o.inject == "latency" {
			// One sleep in each arm, a whole number of ms: Go's timers
			// here wake on millisecond steps (the netpoller waits in ms),
			// so the knob's extra 0.5 ms sleep, or a 5.59 ms one, measured
			// a whole ms more: a "10 %" head measured 18 % slower.
			lat = (time.Duration(float64(o.latency+o.overhead)*factor) - o.overhead).Round(time.Millisecond)
			rec.HeadLatency = lat.String()
		}
		cmd := []string{bin, "--addr", "127.0.0.1:@PORT@", "--latency", lat.String()}
		if factor != 1 && o.inject == "factor" {
			cmd = append(cmd, "--latency-factor", strconv.FormatFloat(factor, 'f', -1, 64))
		}
		return gate.ArmSpec{Command: cmd, Ready: "/healthz"}
	}
	rec.Started = time.Now().UTC()
	start := time.Now()
	rep, err := gate.Run(ctx, gate.Options{Plan: p, Vars: vars, Arms: gate.Pair(arm(1, false), arm(sc.Factor, true)), OutDir: dir, Seed: int64(i)})
	rec.WallS = time.Since(start).Seconds()
	rec.LoadAfter, _ = loadAvg()
	if !o.keep {
		os.RemoveAll(dir)
	}
	if ctx.Err() != nil {
		return rec, ctx.Err()
	}
	if err != nil {
		rec.Error = err.Error()
		rec.Code = judge.CannotJudge
		rec.Verdict = judge.CannotJudge.String()
		return rec, nil
	}
	rec.Input = &rep.Input
	rec.setVerdict(rep.Verdict)
	return rec, nil
}

// waitForLoad blocks until the 1-minute load average is under max, or
// maxWait passed; it returns the wait and the load it started at.
func waitForLoad(ctx context.Context, max float64, maxWait time.Duration) (time.Duration, float64, error) {
	start := time.Now()
	said := false
	for {
		l, err := loadAvg()
		if err != nil {
			return 0, 0, err
		}
		if l < max || time.Since(start) >= maxWait {
			if said {
				fmt.Println()
			}
			return time.Since(start), l, nil
		}
		if !said {
			fmt.Printf("  waiting for the load average (%.2f) to fall under %.2f ...", l, max)
			said = true
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(5 * time.Second):
		}
	}
}

func loadAvg() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, fmt.Errorf("reading the load average: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("reading the load average: /proc/loadavg is empty")
	}
	return strconv.ParseFloat(f[0], 64)
}
