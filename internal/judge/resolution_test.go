package judge

import "testing"

// A short phase counts CPU in a few clock ticks: 20 requests over 2 ticks
// (base) and 3 ticks (head) read 1.0 and 1.5 ms a request in both pairs.
// Equal ratios leave no scatter and so no floor; only the rounding tells
// that the two arms may have used the same CPU. An A/A gate once failed so.
func TestPairedRuleAllowsForRounding(t *testing.T) {
	cpu := Metric{ID: MetricCPUPerRequest, Class: CPU, Unit: "ms"}
	withResolution := func(in Input, res float64) Input {
		for i := range in.Base {
			in.Base[i].Resolution = map[string]float64{cpu.ID: res}
			in.Head[i].Resolution = map[string]float64{cpu.ID: res}
		}
		return in
	}
	tests := []struct {
		name     string
		in       Input
		code     Code
		breached int
	}{
		{"no resolution given: the ratios alone decide", pairs(cpu, []float64{1, 1}, []float64{1.5, 1.5}), Regression, 2},
		{"one tick over 20 requests: within the rounding", withResolution(pairs(cpu, []float64{1, 1}, []float64{1.5, 1.5}), 0.5), Pass, 0},
		{"1 tick against 2: within the rounding", withResolution(pairs(cpu, []float64{0.5, 0.5}, []float64{1, 1}), 0.5), Pass, 0},
		{"0 ticks against 1: within the rounding", withResolution(pairs(cpu, []float64{0, 0}, []float64{0.5, 0.5}), 0.5), Pass, 0},
		{"0 ticks against 3: beyond it", withResolution(pairs(cpu, []float64{0, 0}, []float64{1.5, 1.5}), 0.5), Regression, 2},
		{"a fine resolution leaves the breach", withResolution(pairs(cpu, []float64{1, 1}, []float64{1.5, 1.5}), 0.001), Regression, 2},
		{"beyond the rounding still fails", withResolution(pairs(cpu, []float64{1, 1}, []float64{2.5, 2.5}), 0.5), Regression, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(tc.in)
			if v.Code != tc.code || v.Metrics[0].PairsBreached != tc.breached {
				t.Fatalf("code %v, %d pairs breached; want %v, %d (%+v)", v.Code, v.Metrics[0].PairsBreached, tc.code, tc.breached, v.Metrics[0])
			}
		})
	}
}
