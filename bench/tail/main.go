// Command tail runs issue 22's held-out tail gate again and again: a
// service of CPU work plus exponential waits (about 0.5 ms of SHA-256 and
// a 0.3 ms mean wait), gated at 8 x (1 s + 6 s) at 60 arrivals a second,
// as an A/A gate and against a head that makes 3 % of its requests 2 ms
// slower. It prints each gate's verdict and p99 figure as it ends, then
// how often the A/A passed and how often the slower head failed on p99
// judged pooled over the pairs, each with its 95 % Wilson interval; gates
// the machine made unjudgeable are counted apart.
//
// It needs the machine to itself: at 60 arrivals a second to a service
// whose median answer takes a millisecond, a 10 ms pause reads as a
// stall and the generator's lateness is bounded by 8.3 ms, so beside the
// test suite on 2 cores every gate said "cannot judge". That is why this
// is a bench and not a test (internal/pairs's TestMeasuredTailJudgedPooled
// holds the rule's wiring in the suite at a rate two cores carry).
//
//	go run ./bench/tail --runs 5
//	go run ./bench/tail --first 6 --runs 5   # five more, other seeds
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/internal/exampleservice"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
)

// tailPlan is issue 22's held-out shape: 8 x (1 s + 6 s) at 60/s.
const tailPlan = `
[ab]
pairs = 8
warmup = "1s"
measure = "6s"
rate = 60
idle = "0s"

[[group]]
name = "hello"
path = "/hello"
expect = 200
`

func main() {
	runs := flag.Int("runs", 5, "gates of each kind (A/A, slower head), taking turns")
	first := flag.Int("first", 1, "the first run's number, its gates' seed: a later batch starting past an earlier one's last draws other schedules")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *first, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench/tail:", err)
		os.Exit(1)
	}
}

// tally counts one kind of gate's outcomes.
type tally struct{ hit, judged, unjudged int }

func run(ctx context.Context, first, runs int) error {
	tmp, err := os.MkdirTemp("", "perfgate-bench-tail-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := exampleservice.Build(ctx, tmp)
	if err != nil {
		return err
	}
	p, err := plan.Parse("tail-plan.toml", []byte(tailPlan))
	if err != nil {
		return err
	}
	vars, err := plan.ResolveVars(p, nil, func(string) string { return "" })
	if err != nil {
		return err
	}
	service := []string{bin, "--addr", "127.0.0.1:@PORT@", "--cpu-work", "4000", "--wait-mean", "300us"}
	slower := append(append([]string(nil), service...), "--slow-share", "0.03", "--slow-by", "2ms")
	var aa, slow tally
	for i := first; i < first+runs; i++ {
		for _, kind := range []struct {
			name string
			head []string
			t    *tally
		}{{"A/A", service, &aa}, {"slower head", slower, &slow}} {
			dir := filepath.Join(tmp, fmt.Sprintf("%s-%d", kind.name[:1], i))
			start := time.Now()
			rep, err := gate.Run(ctx, gate.Options{Plan: p, Vars: vars, Arms: gate.Pair(gate.ArmSpec{Command: service, Ready: "/healthz"},
				gate.ArmSpec{Command: kind.head, Ready: "/healthz"}), OutDir: dir, Seed: int64(i)})
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				return fmt.Errorf("gate %d (%s): %w", i, kind.name, err)
			}
			v := rep.Verdict
			var p99 judge.MetricResult
			for _, m := range v.Metrics {
				if m.ID == "p99.hello" {
					p99 = m
				}
			}
			switch {
			case v.Code == judge.CannotJudge:
				kind.t.unjudged++
			case kind.t == &aa:
				kind.t.judged++
				if v.Code == judge.Pass {
					kind.t.hit++
				}
			default:
				kind.t.judged++
				if p99.Fail && p99.Tail != nil {
					kind.t.hit++
				}
			}
			fmt.Printf("%-11s %d: %-13s p99 %.3f vs %.3f ms (%+.1f %%, threshold %.1f %%, pooled %v, failed %v) in %s\n",
				kind.name, i, v.Word(), p99.Head, p99.Base, 100*p99.Worse, 100*p99.Threshold, p99.Tail != nil, p99.Fail, time.Since(start).Round(time.Second))
			for _, c := range v.CannotJudge {
				fmt.Printf("    cannot judge: %s\n", c)
			}
			os.RemoveAll(dir)
		}
	}
	report := func(what string, t tally) {
		lo, hi := wilson(t.hit, t.judged)
		fmt.Printf("%s: %d of %d judged gates (%.0f %%, 95 %% interval %.0f-%.0f %%); %d could not be judged\n",
			what, t.hit, t.judged, 100*float64(t.hit)/math.Max(1, float64(t.judged)), 100*lo, 100*hi, t.unjudged)
	}
	report("A/A passed", aa)
	report("slower head failed on p99, pooled", slow)
	return nil
}

// wilson is the 95 % Wilson score interval of k successes in n.
func wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	const z = 1.959964
	p, nf := float64(k)/float64(n), float64(n)
	mid := (p + z*z/(2*nf)) / (1 + z*z/nf)
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / (1 + z*z/nf)
	return math.Max(0, mid-half), math.Min(1, mid+half)
}
