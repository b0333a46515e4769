package main

import (
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// The simulated tail head moves the pooled p99 by its factor and leaves
// the median where it was; a whole-distribution head moves both.
func TestCeilingGateMovesWhatItsScenarioSays(t *testing.T) {
	pr := defaultProfile()
	answers := int(math.Round(pr.Rate * pr.Measure.Seconds()))
	rng := rand.New(rand.NewPCG(1, 2))
	mean := func(kind string, sc ceilingScenario, percent float64) float64 {
		sum := 0.0
		for range 20 {
			sum += pooledChange(ceilingGate(rng, kind, 5, pr.Pairs, answers, sc), percent)
		}
		return sum / 20
	}
	tail := ceilingScenario{Name: "tail", Factor: 1.1, Tail: true}
	whole := ceilingScenario{Name: "whole", Factor: 1.1}
	for _, tc := range []struct {
		kind    string
		sc      ceilingScenario
		percent float64
		want    float64
	}{
		{"tail", tail, 99, math.Log(1.1)},
		{"tail", tail, 50, 0},
		{"exp", whole, 50, math.Log(1.1)},
		{"bimodal", whole, 99, math.Log(1.1)},
	} {
		if got := mean(tc.kind, tc.sc, tc.percent); math.Abs(got-tc.want) > 0.03 {
			t.Errorf("%s, %s head: pooled p%g moved by %.3f on the log scale, want %.3f", tc.kind, tc.sc.Name, tc.percent, got, tc.want)
		}
	}
	if err := ceiling(io.Discard, pr, 10, 5); err == nil || !strings.Contains(err.Error(), "at least 100") {
		t.Errorf("10 gates: %v, want a refusal asking for at least 100", err)
	}
}
