package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
)

// aaInput is an A/A gate of n pairs whose runner drifts by drift a pair
// (the base's p50 is 10, 10+drift, ...), the head 0.5 ms off its base.
func aaInput(n int) judge.Input { return driftInput(n, 1, 0.5) }

func driftInput(n int, drift, off float64) judge.Input {
	in := judge.Input{Metrics: []judge.Metric{judge.LatencyMetric(judge.Percentiles[0], "g"), judge.LatencyMetric(judge.Percentiles[2], "g")}}
	for i := range n {
		for _, arm := range []*[]judge.Phase{&in.Base, &in.Head} {
			v := 10 + drift*float64(i)
			if arm == &in.Head {
				v += off
			}
			*arm = append(*arm, judge.Phase{Pair: i + 1, Values: map[string]float64{"p50.g": v, "p99.g": 3 * v},
				Schedule: judge.Schedule{Offered: 30, Achieved: 30, Intended: 150, Sent: 150, Answered: 150, LatenessP99: 1},
				Groups:   []judge.GroupFigures{{Name: "g", P50: v, P99: 3 * v, Halves: [2]judge.Half{{P50: v, P90: 2 * v, Count: 50}, {P50: v, P90: 2 * v, Count: 50}}}}})
		}
	}
	return in
}

// A resample keeps each drawn pair's two phases together (swapped or not),
// draws without replacement, and slows only the head's chosen figures.
func TestResampleGate(t *testing.T) {
	in := aaInput(8)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, inj := range injections {
		out := resampleGate(rng, in, 6, inj)
		seen := map[float64]bool{}
		for i := range out.Base {
			b, h := out.Base[i], out.Head[i]
			if b.Pair != i+1 || h.Pair != i+1 {
				t.Fatalf("%s: pair numbers %d %d at %d", inj.Name, b.Pair, h.Pair, i)
			}
			want50 := inj.Factor
			if inj.Tail {
				want50 = 1
			}
			lo := math.Min(b.Values["p50.g"], h.Values["p50.g"]/want50)
			if seen[lo] {
				t.Errorf("%s: pair with base %v drawn twice", inj.Name, lo)
			}
			seen[lo] = true
			p50 := h.Values["p50.g"] / b.Values["p50.g"]
			p99 := h.Values["p99.g"] / b.Values["p99.g"]
			// Unswapped the head is base+0.5; swapped it is base-0.5.
			natural := []float64{(lo + 0.5) / lo, lo / (lo + 0.5)}
			if !near(p50/want50, natural) || !near(p99/inj.Factor, natural) {
				t.Errorf("%s: head/base p50 %v p99 %v in pair %d", inj.Name, p50, p99, i+1)
			}
		}
	}
	if in.Head[0].Values["p50.g"] != 10.5 {
		t.Error("resampling changed the recorded input")
	}
}

func near(x float64, options []float64) bool {
	for _, o := range options {
		if math.Abs(x-o) < 1e-9 {
			return true
		}
	}
	return false
}

func TestIntervals(t *testing.T) {
	// Exact Clopper-Pearson bounds from the standard tables.
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{{0, 34, 0, 0.1028}, {35, 35, 0.9000, 1}, {1, 34, 0.0007, 0.1533}, {5, 10, 0.1871, 0.8129}} {
		lo, hi := twoSided(tc.k, tc.n)
		if math.Abs(lo-tc.lo) > 5e-4 || math.Abs(hi-tc.hi) > 5e-4 {
			t.Errorf("%d of %d: [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	mean, lo, hi := clusterInterval([]float64{0, 0, 0, 0})
	if mean != 0 || lo != 0 || hi != 0 {
		t.Errorf("all-zero shares: %v [%v, %v]", mean, lo, hi)
	}
	mean, lo, hi = clusterInterval([]float64{0, 1, 0, 1, 0, 1, 0, 1})
	if mean != 0.5 || lo >= 0.5 || hi <= 0.5 || lo < 0 || hi > 1 {
		t.Errorf("half shares: %v [%v, %v]", mean, lo, hi)
	}
}

// The anchors on known inputs. A runner that drifts from pair to pair
// (10 ms, 11 ms, ... 17 ms) fools the methods that compare arms measured
// apart: the sequential one alarms on identical arms, and the medians
// rule's floor and Bencher's t-test take the drift for noise and miss a
// 20 % slowdown the paired rule sees in every pair.
func TestAnchors(t *testing.T) {
	slower := func(in judge.Input) judge.Input {
		for i := range in.Head {
			in.Head[i] = clonePhase(in.Base[i])
			inject(&in.Head[i], injection{Factor: 1.2})
		}
		return in
	}
	all := map[string]bool{}
	for _, m := range methods {
		all[m.Name] = true
	}
	tests := []struct {
		name   string
		in     judge.Input
		alarms map[string]bool
	}{
		{"steady runner, identical arms", driftInput(8, 0, 0), map[string]bool{}},
		{"steady runner, head 20 % slower", slower(driftInput(8, 0, 0)), map[string]bool{
			"paired rule, 5 %": true, "paired rule, tails per phase": true, "p50 alone, paired per phase": true, "medians rule, 5 %": true, "sequential, 5 %": true, "t-test over phases (Bencher)": true, "plain 10 % threshold": true}},
		{"drifting runner, identical arms", driftInput(8, 1, 0), map[string]bool{"sequential, 5 %": true}},
		{"drifting runner, head 20 % slower", slower(driftInput(8, 1, 0)), map[string]bool{
			"paired rule, 5 %": true, "paired rule, tails per phase": true, "p50 alone, paired per phase": true, "sequential, 5 %": true, "plain 10 % threshold": true}},
	}
	for _, tc := range tests {
		for _, m := range methods {
			if got := m.Alarm(tc.in); got != tc.alarms[m.Name] {
				t.Errorf("%s: %s alarm %v, want %v", tc.name, m.Name, got, tc.alarms[m.Name])
			}
		}
	}
}

// A slowed head's histograms move as its figures do, so the tails pooled
// over the pairs judge the same head; the recorded phase is left alone.
func TestInjectMovesTheHistograms(t *testing.T) {
	h := load.NewHistogram()
	for i := range 1000 {
		if err := h.RecordValue(int64(1000 + 40*i)); err != nil { // 1-41 ms, in µs
			t.Fatal(err)
		}
	}
	rec := judge.Phase{Values: map[string]float64{}, Groups: []judge.GroupFigures{{Name: "g", Latency: judge.NewHistogram(h)}}}
	orig := rec.Groups[0].Latency
	for _, inj := range injections[1:] {
		p := clonePhase(rec)
		inject(&p, inj)
		got := p.Groups[0].Latency
		for _, q := range []float64{50, 95, 99} {
			want := orig.Percentile(q) * inj.Factor
			if inj.Tail && q != 99 {
				want = orig.Percentile(q)
			}
			if math.Abs(got.Percentile(q)/want-1) > 0.002 {
				t.Errorf("%s: p%g %g, want %g", inj.Name, q, got.Percentile(q), want)
			}
		}
	}
	if rec.Groups[0].Latency != orig || orig.Percentile(99) != judge.NewHistogram(h).Percentile(99) {
		t.Error("injecting changed the recorded phase's histogram")
	}
}

// The pooled p50 reads the groups' histograms: a head 20 % slower in every
// answer alarms, an identical one does not, and a gate without histograms
// never does.
func TestPooledP50(t *testing.T) {
	in := driftInput(8, 1, 0)
	for i := range in.Base {
		h := load.NewHistogram()
		for v := range 300 {
			if err := h.RecordValue(int64(5000 + 37*v + 1000*i)); err != nil {
				t.Fatal(err)
			}
		}
		in.Base[i].Groups[0].Latency = judge.NewHistogram(h)
		in.Head[i] = clonePhase(in.Base[i])
	}
	if pooledP50(in) {
		t.Error("identical arms alarmed")
	}
	slow := in
	slow.Head = make([]judge.Phase, len(in.Head))
	for i := range in.Head {
		slow.Head[i] = clonePhase(in.Head[i])
		inject(&slow.Head[i], injection{Factor: 1.2})
	}
	if !pooledP50(slow) {
		t.Error("a head 20 % slower did not alarm")
	}
	if pooledP50(driftInput(8, 1, 0)) {
		t.Error("a gate without histograms alarmed")
	}
}
