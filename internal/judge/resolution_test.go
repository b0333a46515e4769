package judge

import (
	"math"
	"testing"
)

// A short phase counts CPU in a few clock ticks: 20 requests over 2 ticks
// (base) and 3 ticks (head) read 1.0 and 1.5 ms a request in both pairs.
// Equal ratios leave no scatter and so no floor; only the rounding tells
// that the two arms may have used the same CPU. An A/A gate once failed so.
// The floor's scatter is never below the rounding's (roundingVar), so few
// ticks need more pairs to fail, and a steady difference over many pairs
// still fails.
func TestPairedRuleAllowsForRounding(t *testing.T) {
	cpu := Metric{ID: MetricCPUPerRequest, Class: CPU, Unit: "ms"}
	n := func(k int, v float64) []float64 {
		vs := make([]float64, k)
		for i := range vs {
			vs[i] = v
		}
		return vs
	}
	withResolution := func(in Input, res float64) Input {
		for i := range in.Base {
			in.Base[i].Resolution = map[string]float64{cpu.ID: res}
			in.Head[i].Resolution = map[string]float64{cpu.ID: res}
		}
		return in
	}
	at5 := func(in Input) Input { in.Tolerance = map[string]float64{"cpu": 0.05}; return in }
	tests := []struct {
		name string
		in   Input
		code Code
	}{
		{"no resolution given: the ratios alone decide", pairs(cpu, n(2, 1), n(2, 1.5)), Regression},
		{"2 ticks against 3 over 20 requests, twice: within the rounding", withResolution(pairs(cpu, n(2, 1), n(2, 1.5)), 0.5), Pass},
		{"1 tick against 2, twice: within the rounding", withResolution(pairs(cpu, n(2, 0.5), n(2, 1)), 0.5), Pass},
		{"0 ticks against 1: within the rounding", withResolution(pairs(cpu, n(2, 0), n(2, 0.5)), 0.5), Pass},
		{"0 ticks against 3: beyond it", withResolution(pairs(cpu, n(2, 0), n(2, 1.5)), 0.5), Regression},
		{"a fine resolution leaves the breach", withResolution(pairs(cpu, n(2, 1), n(2, 1.5)), 0.001), Regression},
		{"2 ticks against 5, twice: two pairs cannot tell it from rounding", withResolution(pairs(cpu, n(2, 1), n(2, 2.5)), 0.5), Pass},
		{"2 ticks against 5, four times: beyond the rounding", withResolution(pairs(cpu, n(4, 1), n(4, 2.5)), 0.5), Regression},
		{"10 ticks against 11 in all 8 pairs: a steady 10 % at 5 %", at5(withResolution(pairs(cpu, n(8, 1), n(8, 1.1)), 0.1)), Regression},
		{"10 ticks against 10 or 11 by turns: within the rounding at 5 %", at5(withResolution(pairs(cpu, n(8, 1), []float64{1, 1.1, 1, 1.1, 1, 1.1, 1, 1.1}), 0.1)), Pass},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(tc.in)
			if v.Code != tc.code {
				t.Fatalf("code %v, want %v (%+v)", v.Code, tc.code, v.Metrics[0])
			}
		})
	}
}

// The rounding's variance is that of the difference of two readings each
// truncated to a step, for a value whose fraction of a step is unknown:
// f(1-f) for a fraction f, res²/6 on average. Checked against a
// simulation of such readings.
func TestRoundingVarMatchesTruncation(t *testing.T) {
	const res, v = 1.0, 10.0
	var sum, sum2 float64
	const k = 200000
	for i := 0; i < k; i++ {
		// Irrational steps spread the fractions evenly.
		start, used := float64(i)*0.6180339887, v+math.Mod(float64(i)*0.4142135623, 1)
		read := math.Floor(start+used) - math.Floor(start)
		d := read - used
		sum += d
		sum2 += d * d
	}
	got := sum2/k - (sum/k)*(sum/k)
	want := roundingVar(v, res) * v * v
	if math.Abs(got-want) > 0.01 {
		t.Fatalf("variance of a truncated reading %.4f, want %.4f (res²/6)", got, want)
	}
}
