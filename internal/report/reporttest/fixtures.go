// Package reporttest builds realistic gate reports for tests of the report
// and of the commands that read one. The figures are fixed (no clock, no
// randomness), so golden files made from them never move.
package reporttest

import (
	"math"
	"time"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/report"
)

// A slowdown of the head: factors applied to the head's figures.
type slowdown struct {
	latency map[string]float64 // by group
	cpu     float64
	tx      float64
}

var groups = []struct {
	name string
	p50  float64 // ms
}{{"search", 4}, {"patient", 2.5}, {"metadata", 0.8}}

// noise is a fixed wobble per pair and arm, a few per cent, like the
// phases of a quiet runner.
func noise(pair, arm, k int) float64 {
	return 1 + 0.03*math.Sin(float64(pair*7+arm*3+k))
}

// Pass is an A/A-like gate: the head's CPU per request 2 % up, under the
// 5 % default tolerance, and nothing else moved.
func Pass() *report.Report {
	return build(slowdown{cpu: 1.02, tx: 1}, nil)
}

// Regression is a gate whose head is 30 % slower on every search.
func Regression() *report.Report {
	return build(slowdown{latency: map[string]float64{"search": 1.3}, cpu: 1, tx: 1}, nil)
}

// CannotJudge is Regression with the head stalled in pair 2.
func CannotJudge() *report.Report {
	return build(slowdown{latency: map[string]float64{"search": 1.3}, cpu: 1, tx: 1}, func(in *judge.Input) {
		for i := range in.Head[1].Groups {
			g := &in.Head[1].Groups[i]
			g.P99 = 40 * g.P50
		}
	})
}

func build(s slowdown, change func(*judge.Input)) *report.Report {
	in := judge.Input{Rule: judge.RulePaired}
	in.Metrics = append(in.Metrics, judge.WholeMetrics[0])
	for _, q := range judge.Percentiles {
		for _, g := range groups {
			in.Metrics = append(in.Metrics, judge.LatencyMetric(q, g.name))
		}
	}
	in.Metrics = append(in.Metrics, judge.WholeMetrics[1:]...)
	for pair := 1; pair <= 4; pair++ {
		lead := "base"
		if pair%2 == 0 {
			lead = "head"
		}
		for arm := 0; arm < 2; arm++ {
			f := func(k int) float64 { return noise(pair, arm, k) }
			slow := func(g string) float64 {
				if arm == 1 && s.latency[g] != 0 {
					return s.latency[g]
				}
				return 1
			}
			cpu, tx := 1.0, 1.0
			if arm == 1 {
				cpu, tx = s.cpu, s.tx
			}
			ph := judge.Phase{Pair: pair, Lead: lead, Values: map[string]float64{
				"throughput":      20 * (1 + 0.001*f(1)),
				"peak_memory":     float64(48<<20) * f(2),
				"cpu_per_request": 1.6 * cpu * f(3),
				"tx_per_request":  2 * tx,
			}, Schedule: judge.Schedule{Offered: 20, Achieved: 19.99, Intended: 1200, Sent: 1200, Late: 1, Answered: 1200, LatenessP99: 0.4}}
			for k, g := range groups {
				p50 := g.p50 * slow(g.name) * f(10+k)
				ph.Values["p50."+g.name] = p50
				ph.Values["p95."+g.name] = 2.5 * p50 * f(20+k)
				ph.Values["p99."+g.name] = 4 * p50 * f(30+k)
				ph.Groups = append(ph.Groups, judge.GroupFigures{
					Name: g.name, Requests: 400, P50: p50, P99: 4 * p50 * f(30+k),
					Halves: [2]judge.Half{{P50: p50 * f(40+k), P90: 2 * p50, Count: 200}, {P50: p50 * f(50+k), P90: 2 * p50, Count: 200}},
				})
			}
			if arm == 0 {
				in.Base = append(in.Base, ph)
			} else {
				in.Head = append(in.Head, ph)
			}
		}
	}
	in.Idle = &judge.Idle{Seconds: 60, CPU: 0.004, TxPerSec: 0.05, StoreMeasured: true}
	if change != nil {
		change(&in)
	}
	return &report.Report{
		Version:  report.Version,
		Tool:     "perfgate test",
		Created:  time.Date(2026, 11, 3, 14, 5, 0, 0, time.UTC),
		Base:     report.Build{Name: "base", Commit: "4f1c2a9e8d7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a", Ref: "main", Why: "the merge base of the pull request's head with main"},
		Head:     report.Build{Name: "head", Commit: "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b", Ref: "refs/pull/42/merge"},
		BaseNote: "The base is `4f1c2a9e8d7b`, the merge base with main.",
		Settings: report.Settings{Plan: "perf/plan.toml", Pairs: 4, Rate: 20,
			Warmup: report.Duration(10 * time.Second), Measure: report.Duration(60 * time.Second), Idle: report.Duration(60 * time.Second)},
		Attempt:  1,
		CPUModel: "AMD EPYC 7763 64-Core Processor",
		Input:    in,
		Verdict:  judge.Judge(in),
	}
}
