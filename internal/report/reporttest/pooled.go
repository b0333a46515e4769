package reporttest

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/report"
)

// PooledTail is a version 2 gate of 8 x (1 s + 6 s) at 30/s (180 answers
// a phase) on a service of CPU work plus an exponential wait, whose head
// makes one answer in 30 2 ms slower: its phases keep their histograms,
// so p95 and p99 are judged pooled over the pairs, and p99 fails. The
// answers are the exponential's quantiles, not random draws, so golden
// files made from it never move.
func PooledTail() *report.Report {
	in := judge.Input{Rule: judge.RulePaired, Metrics: []judge.Metric{judge.WholeMetrics[0]}}
	for _, q := range judge.Percentiles {
		in.Metrics = append(in.Metrics, judge.LatencyMetric(q, "search"))
	}
	const answers = 180
	for pair := 1; pair <= 8; pair++ {
		lead := [2]string{"head", "base"}[pair%2]
		for arm := 0; arm < 2; arm++ {
			speed := noise(pair, 0, 1) * (1 + 0.01*math.Sin(float64(pair*5+arm*11)))
			whole := load.NewHistogram()
			halves := [2]*hdrhistogram.Histogram{load.NewHistogram(), load.NewHistogram()}
			for j := range answers {
				// The phases' answers are the same quantiles in a
				// different order of offsets, so no two phases are alike.
				u := math.Mod((float64(j)+0.5)/answers+0.013*float64(pair*2+arm), 1)
				ms := 1*speed + 0.4*-math.Log1p(-u)
				if arm == 1 && j%30 == pair%30 {
					ms += 2
				}
				us := int64(ms * 1000)
				whole.RecordValue(us)
				halves[j%2].RecordValue(us)
			}
			kept := judge.NewHistogram(whole)
			ph := judge.Phase{Pair: pair, Lead: lead, Values: map[string]float64{"throughput": 30 * (1 + 0.001*noise(pair, arm, 1))},
				Schedule: judge.Schedule{Offered: 30, Achieved: 30, Intended: answers, Sent: answers, Answered: answers, LatenessP99: 0.3}}
			for _, q := range judge.Percentiles {
				ph.Values[judge.LatencyMetric(q, "search").ID] = kept.Percentile(q.Percent)
			}
			g := judge.GroupFigures{Name: "search", Requests: answers, P50: kept.Percentile(50), P99: kept.Percentile(99), Latency: kept}
			for h := range 2 {
				hh := judge.NewHistogram(halves[h])
				g.Halves[h] = judge.Half{P50: hh.Percentile(50), P90: hh.Percentile(90), Count: hh.Count()}
			}
			ph.Groups = []judge.GroupFigures{g}
			if arm == 0 {
				in.Base = append(in.Base, ph)
			} else {
				in.Head = append(in.Head, ph)
			}
		}
	}
	return &report.Report{
		Version:  report.Version,
		Tool:     "perfgate test",
		Created:  time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC),
		Base:     report.Build{Name: "base", Commit: "4f1c2a9e8d7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a", Ref: "main"},
		Head:     report.Build{Name: "head", Commit: "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b", Ref: "refs/pull/43/merge"},
		Settings: report.Settings{Plan: "perf/plan.toml", Pairs: 8, Rate: 30, Warmup: report.Duration(time.Second), Measure: report.Duration(6 * time.Second)},
		Attempt:  1,
		Input:    in,
		Verdict:  judge.Judge(in),
	}
}
