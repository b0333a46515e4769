package judge

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfgate/perfgate/internal/load"
)

// tailService is a simulated service whose answers take CPU work (CPUms,
// scaled by the runner's speed) plus an exponential wait of mean ExpMS,
// the shape of a service that computes and then waits on a store. The
// head makes a share Slow of its answers SlowMS slower.
type tailService struct {
	CPUms, ExpMS   float64
	Slow, SlowMS   float64
	Answers, Pairs int
	// Drift is the sd of the runner's speed from pair to pair, which both
	// arms of a pair share; Jitter the sd of one phase's own speed.
	Drift, Jitter float64
}

// tailGate simulates one gate of the service and returns the judge's
// input with each phase's histograms, as internal/pairs builds it.
func tailGate(rng *rand.Rand, s tailService, changed bool) Input {
	in := Input{Metrics: []Metric{LatencyMetric(Percentiles[0], "g"), LatencyMetric(Percentiles[1], "g"), LatencyMetric(Percentiles[2], "g")}}
	// The halves are read into figures before the next phase records, so
	// one pair of them serves every phase (thousands of gates allocate
	// nothing else per phase but the histogram the phase keeps).
	halves := [2]*hdrhistogram.Histogram{load.NewHistogram(), load.NewHistogram()}
	for i := range s.Pairs {
		drift := math.Exp(s.Drift * rng.NormFloat64())
		lead := [2]string{"base", "head"}[i%2]
		for _, arm := range []string{"base", "head"} {
			speed := drift * math.Exp(s.Jitter*rng.NormFloat64())
			whole := load.NewHistogram()
			halves[0].Reset()
			halves[1].Reset()
			for j := range s.Answers {
				ms := s.CPUms*speed + rng.ExpFloat64()*s.ExpMS
				if arm == "head" && changed && rng.Float64() < s.Slow {
					ms += s.SlowMS
				}
				us := int64(ms * 1000)
				whole.RecordValue(us)
				halves[2*j/s.Answers].RecordValue(us)
			}
			// Read as the load engine reads a phase (load.NearestRank;
			// TestTailGateReadsAsTheEngine holds the two equal), from
			// buckets read once rather than once a percentile.
			ph := Phase{Pair: i + 1, Lead: lead, Values: map[string]float64{}, Schedule: Schedule{
				Offered: 60, Achieved: 60, Intended: uint64(s.Answers), Sent: uint64(s.Answers), Answered: uint64(s.Answers), LatenessP99: 0.2}}
			kept := NewHistogram(whole)
			for _, q := range Percentiles {
				ph.Values[LatencyMetric(q, "g").ID] = kept.Percentile(q.Percent)
			}
			g := GroupFigures{Name: "g", Requests: uint64(s.Answers), P50: kept.Percentile(50), P99: kept.Percentile(99), Latency: kept}
			for h := range 2 {
				read := NewHistogram(halves[h])
				g.Halves[h] = Half{P50: read.Percentile(50), P90: read.Percentile(90), Count: uint64(halves[h].TotalCount())}
			}
			ph.Groups = []GroupFigures{g}
			if arm == "base" {
				in.Base = append(in.Base, ph)
			} else {
				in.Head = append(in.Head, ph)
			}
		}
	}
	return in
}

// perPhase is in without its histograms: a report from before version 2,
// which the judge reads phase by phase.
func perPhase(in Input) Input {
	out := in
	for _, arm := range []*[]Phase{&out.Base, &out.Head} {
		phases := make([]Phase, len(*arm))
		for i, ph := range *arm {
			ph.Groups = append([]GroupFigures(nil), ph.Groups...)
			for j := range ph.Groups {
				ph.Groups[j].Latency = nil
			}
			phases[i] = ph
		}
		*arm = phases
	}
	return out
}

func metricByID(v Verdict, id string) MetricResult {
	for _, r := range v.Metrics {
		if r.ID == id {
			return r
		}
	}
	return MetricResult{}
}

// The must-show: a head that makes 3 % of its requests 2 ms
// slower, on a service of CPU work plus exponential waits at 180 answers
// a group a phase over 8 pairs (8 x (1 s + 6 s) at 60/s...), fails on p99
// pooled, where the per-phase rule, whose p99 is each phase's second
// slowest answer, mostly passes it; the same service A/A stays at about
// 1 % false alarms or under.
func TestPooledTailCatchesWhatPerPhaseMisses(t *testing.T) {
	t.Parallel()
	svc := tailService{CPUms: 1, ExpMS: 0.4, Slow: 0.03, SlowMS: 2, Answers: 180, Pairs: 8, Drift: 0.05, Jitter: 0.02}
	const gates = 200
	tests := []struct {
		name    string
		changed bool
		// The share of gates failing p99 pooled must lie within these
		// bounds; per phase, at most phaseMax, and when the head changed,
		// at least gap fewer than pooled.
		pooledMin, pooledMax, phaseMax, gap float64
	}{
		{name: "3 % of requests 2 ms slower", changed: true, pooledMin: 0.88, pooledMax: 1, phaseMax: 1, gap: 0.15},
		{name: "A/A", changed: false, pooledMin: 0, pooledMax: 0.02, phaseMax: 0.02},
	}
	for ti, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(22, uint64(ti)))
			var pooled, phase, p95, shown, onlyPhase, gatesFailed int
			var detect, worse []float64
			for range gates {
				in := tailGate(rng, svc, tt.changed)
				v := Judge(in)
				r := metricByID(v, "p99.g")
				if r.Tail == nil {
					t.Fatalf("p99 was not judged pooled: %+v; notes %q", r, v.Notes)
				}
				old := metricByID(Judge(perPhase(in)), "p99.g")
				if old.Tail != nil {
					t.Fatalf("p99 judged pooled without histograms")
				}
				if r.Fail {
					pooled++
				}
				if old.Fail {
					phase++
				}
				if metricByID(v, "p95.g").Fail {
					p95++
				}
				if len(v.Failures) > 0 {
					gatesFailed++
				}
				if old.Fail && !r.Fail {
					onlyPhase++
				}
				worse = append(worse, r.Worse)
				if r.Fail && !old.Fail && shown == 0 {
					shown++
					t.Logf("one such gate: pooled p99 %.3f vs %.3f ms (%+.1f %%, bound %.1f %%, interval %.3f-%.3f at %.1f %%) fails; per phase %+.1f %% breaching in %d of 8 pairs passes",
						r.Head, r.Base, 100*r.Worse, 100*r.Tail.Bound, r.CI.Lo, r.CI.Hi, 100*r.CI.Confidence, 100*old.Worse, old.PairsBreached)
				}
				detect = append(detect, r.Detectable)
			}
			fp, fo := float64(pooled)/gates, float64(phase)/gates
			t.Logf("%s over %d gates: pooled p99 worse by %.1f %% (median); p99 fails pooled in %.1f %%, per phase in %.1f %% (%d of them passed pooled); p95 pooled in %.1f %%; pooled p99's catches figure (median) %.1f %%; the gate (p50, p95, p99) failed in %.1f %%",
				tt.name, gates, 100*median(worse), 100*fp, 100*fo, onlyPhase, 100*float64(p95)/gates, 100*median(detect), 100*float64(gatesFailed)/gates)
			if fp < tt.pooledMin || fp > tt.pooledMax {
				t.Errorf("pooled p99 failed %.1f %% of gates, want %.0f-%.0f %%", 100*fp, 100*tt.pooledMin, 100*tt.pooledMax)
			}
			if fo > tt.phaseMax || tt.changed && fo > fp-tt.gap {
				t.Errorf("per-phase p99 failed %.1f %% of gates against %.1f %% pooled, want at most %.0f %% and %.0f points under pooled", 100*fo, 100*fp, 100*tt.phaseMax, 100*tt.gap)
			}
			if tt.changed && shown == 0 {
				t.Errorf("no gate failed pooled and passed per phase")
			}
		})
	}
}

// The simulated phases read their percentiles as internal/pairs does,
// through load.NearestRank.
func TestTailGateReadsAsTheEngine(t *testing.T) {
	h := load.NewHistogram()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 180 {
		h.RecordValue(int64(1000 + rng.ExpFloat64()*400))
	}
	for _, p := range []float64{0, 50, 90, 95, 99, 99.9, 100} {
		want := float64(load.NearestRank(h, p)) / float64(time.Millisecond)
		if got := NewHistogram(h).Percentile(p); got != want {
			t.Errorf("p%v = %v ms, load.NearestRank says %v", p, got, want)
		}
	}
}
