package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
)

// The ceiling: what the judge could catch at a profile's answers a phase
// on a machine that added no noise at all, so that a goal missed on the
// recordings can be told apart from a goal no rule can meet there.
//
// Each bundled target's service times are drawn as target.go draws them
// (the cpu target is left out: its time is the machine's, which this
// machine has none of), phase by phase, with no drift between pairs, no
// jitter between phases, no network and no generator: the answers'
// sampling noise and nothing else. Every simulated gate is judged by
// judge.Judge as a real one is (pooled tails, the sign-flip bound, the
// tolerance). Beside it, "knowing its noise": a test that fails a figure
// pooled over the pairs when its change is over the tolerance and over
// the 99th percentile of the same figure's change in the simulated A/A
// gates, the bound a rule would reach if it knew the noise exactly
// instead of estimating it from 8 pairs. For the exponential target one
// line more: the most any test of a whole-distribution slowdown can catch
// with these answers (the ratio of the arms' means, the exponential's
// sufficient statistic, at 1 % one-sided, with no tolerance).

// ceilingKinds are the targets simulated, in the order printed.
var ceilingKinds = []string{"exp", "bimodal", "tail"}

// ceilingScenario is one head of the simulation: Factor scales every
// answer, or with Tail only the tail target's slow ones (target.go's
// --factor on the tail kind).
type ceilingScenario struct {
	Name   string
	Factor float64
	Tail   bool
}

var ceilingScenarios = []ceilingScenario{
	{Name: "A/A", Factor: 1},
	{Name: "p50 +5 %", Factor: 1.05},
	{Name: "p50 +10 %", Factor: 1.10},
	{Name: "tail (p99) +10 %", Factor: 1.10, Tail: true},
}

// drawAnswer is one answer of the kind, in ms, with the scenario's factor
// (target.go's serve, without the sleep).
func drawAnswer(rng *rand.Rand, kind string, meanMS, factor float64, tailOnly bool) float64 {
	whole := factor
	if tailOnly {
		whole = 1
	}
	switch kind {
	case "exp":
		return rng.ExpFloat64() * meanMS * whole
	case "bimodal":
		base := meanMS / 2
		if rng.Float64() < 0.1 {
			base = meanMS * 3
		}
		return base * (0.8 + 0.4*rng.Float64()) * whole
	default: // tail
		if rng.Float64() < 0.03 {
			return meanMS * (4 + 2*rng.Float64()) * factor
		}
		return meanMS * (0.8 + 0.4*rng.Float64()) * whole
	}
}

// ceilingGate simulates one gate: pairs phases an arm of answers each.
func ceilingGate(rng *rand.Rand, kind string, meanMS float64, pairs, answers int, sc ceilingScenario) judge.Input {
	in := judge.Input{Tolerance: benchTol()}
	for _, q := range judge.Percentiles {
		in.Metrics = append(in.Metrics, judge.LatencyMetric(q, "g"))
	}
	halves := [2]*hdrhistogram.Histogram{load.NewHistogram(), load.NewHistogram()}
	for i := range pairs {
		lead := [2]string{"base", "head"}[i%2]
		for _, arm := range []string{"base", "head"} {
			factor := 1.0
			if arm == "head" {
				factor = sc.Factor
			}
			whole := load.NewHistogram()
			halves[0].Reset()
			halves[1].Reset()
			for j := range answers {
				us := int64(drawAnswer(rng, kind, meanMS, factor, sc.Tail) * 1000)
				whole.RecordValue(us)
				halves[2*j/answers].RecordValue(us)
			}
			n := uint64(answers)
			ph := judge.Phase{Pair: i + 1, Lead: lead, Values: map[string]float64{}, Schedule: judge.Schedule{
				Offered: 30, Achieved: 30, Intended: n, Sent: n, Answered: n, LatenessP99: 0.2}}
			kept := judge.NewHistogram(whole)
			for _, q := range judge.Percentiles {
				ph.Values[judge.LatencyMetric(q, "g").ID] = kept.Percentile(q.Percent)
			}
			g := judge.GroupFigures{Name: "g", Requests: n, P50: kept.Percentile(50), P99: kept.Percentile(99), Latency: kept}
			for h := range 2 {
				read := judge.NewHistogram(halves[h])
				g.Halves[h] = judge.Half{P50: read.Percentile(50), P90: read.Percentile(90), Count: uint64(halves[h].TotalCount())}
			}
			ph.Groups = []judge.GroupFigures{g}
			if arm == "base" {
				in.Base = append(in.Base, ph)
			} else {
				in.Head = append(in.Head, ph)
			}
		}
	}
	return in
}

// pooledChange is ln(head/base) of the percentile of each arm's answers
// pooled over the pairs, as the judge reads it.
func pooledChange(in judge.Input, percent float64) float64 {
	t := judge.PooledTail(judge.DefaultTailRule, percent, benchTol()["latency"], groupHistograms(in.Base, "g"), groupHistograms(in.Head, "g"))
	return math.Log(t.Head / t.Base)
}

// ceilingRow is one target and scenario's figures over the simulated gates.
type ceilingRow struct {
	judged, gateFails, p50Fails, p99Fails int
	p50, p99                              []float64 // pooled changes, for the test knowing its noise
}

// ceiling simulates gates gates of every kind and scenario at the profile
// and prints the table.
func ceiling(w io.Writer, pr profile, gates int, meanMS float64) error {
	if gates < 100 {
		return fmt.Errorf("--ceiling %d: at least 100 gates, so a 1 %% bound rests on a gate or more", gates)
	}
	answers := int(math.Round(pr.Rate * pr.Measure.Seconds()))
	fmt.Fprintf(w, "# The ceiling at the %s profile: %d pairs of %d answers an arm (%d pooled), no machine noise, %d gates a row, mean %g ms, tolerance 5 %%\n\n",
		pr.Name, pr.Pairs, answers, pr.Pairs*answers, gates, meanMS)
	fmt.Fprintln(w, "| target | head | gate fails (the judge) | p50 fails | p99 fails | pooled p50 knowing its noise | pooled p99 knowing its noise |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	tol := math.Log1p(benchTol()["latency"])
	for ki, kind := range ceilingKinds {
		rows := make([]ceilingRow, len(ceilingScenarios))
		for si, sc := range ceilingScenarios {
			rng := rand.New(rand.NewPCG(uint64(ki+1), uint64(si+1)))
			r := &rows[si]
			for range gates {
				in := ceilingGate(rng, kind, meanMS, pr.Pairs, answers, sc)
				v := judge.Judge(in)
				if v.Code == judge.CannotJudge {
					continue
				}
				r.judged++
				if v.Code == judge.Regression {
					r.gateFails++
				}
				if fails(v, "p50.g") {
					r.p50Fails++
				}
				if fails(v, "p99.g") {
					r.p99Fails++
				}
				r.p50 = append(r.p50, pooledChange(in, 50))
				r.p99 = append(r.p99, pooledChange(in, 99))
			}
		}
		// The A/A row's 99th percentiles are the bounds a test knowing
		// its noise would use.
		b50, b99 := quantile(rows[0].p50, 0.99), quantile(rows[0].p99, 0.99)
		for si, sc := range ceilingScenarios {
			r := rows[si]
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", kind, sc.Name,
				share(r.gateFails, r.judged), share(r.p50Fails, r.judged), share(r.p99Fails, r.judged),
				share(over(r.p50, math.Max(b50, tol)), len(r.p50)), share(over(r.p99, math.Max(b99, tol)), len(r.p99)))
		}
	}
	n := float64(pr.Pairs * answers)
	fmt.Fprintf(w, "\nThe most any test catches of a whole-distribution slowdown of the exponential target with %d answers an arm (the arms' means, 1 %% one-sided, no tolerance): ", pr.Pairs*answers)
	for _, f := range []float64{1.05, 1.10} {
		fmt.Fprintf(w, "+%.0f %% in %.1f %%; ", (f-1)*100, 100*normalCDF(math.Log(f)/math.Sqrt(2/n)-normalQuantile99))
	}
	fmt.Fprintln(w, "")
	return nil
}

// normalQuantile99 is the standard normal's 99th percentile.
const normalQuantile99 = 2.3263478740408408

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func fails(v judge.Verdict, id string) bool {
	for _, m := range v.Metrics {
		if m.ID == id {
			return m.Fail
		}
	}
	return false
}

func quantile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[min(len(s)-1, int(math.Ceil(p*float64(len(s))))-1)]
}

func over(xs []float64, bound float64) int {
	k := 0
	for _, x := range xs {
		if x > bound {
			k++
		}
	}
	return k
}

func share(k, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(k)/float64(n))
}
