package judge

import (
	"math"
	"testing"
)

func TestSignFlipBound(t *testing.T) {
	eight := func(v float64) []float64 { return []float64{v, v, v, v, v, v, v, v} }
	tests := []struct {
		name string
		ls   []float64
		want float64
	}{
		// 2^6 = 64 patterns cannot put 1 % in a tail: no bound.
		{"6 pairs are too few for 1 %", []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 0},
		// Equal magnitudes a: the largest mean is a (1 pattern), then 0.75a
		// (8 patterns); 1 % of 256 is 2.56, so the bound is the third largest.
		{"8 equal magnitudes", eight(0.1), 0.075},
		{"signs do not matter, only magnitudes", []float64{0.1, -0.1, 0.1, -0.1, 0.1, -0.1, 0.1, -0.1}, 0.075},
		{"no scatter at all", eight(0), 0},
		{"17 pairs: the Student bound alone", make([]float64, 17), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := signFlipBound(tc.ls, PairedAlpha); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("bound %v, want %v", got, tc.want)
			}
		})
	}
}

// In an A/A gate every pattern of signs over the pairs' log ratios is as
// likely as another. Over all 256 patterns of 8 equal magnitudes of 10 %,
// Student's bound alone alarms on 9 (3.5 %): with 7 pairs up and one down
// the mean, 0.75 x 10 %, just passes t x sd / sqrt(n) = 0.749 x 10 %. With
// the sign-flip bound only the pattern with every pair up alarms (0.4 %).
func TestSignFlipKeepsAAFalseAlarmsUnderOnePercent(t *testing.T) {
	const n = 8
	alarms := 0
	for p := 0; p < 1<<n; p++ {
		base, head := make([]float64, n), make([]float64, n)
		for i := range base {
			l := 0.1
			if p&(1<<i) != 0 {
				l = -l
			}
			base[i], head[i] = 100, 100*math.Exp(l)
		}
		in := pairs(latencyMetric, base, head)
		in.Tolerance = map[string]float64{"latency": 0.05}
		if Judge(in).Code == Regression {
			alarms++
		}
	}
	if alarms != 1 {
		t.Errorf("%d of %d sign patterns alarm, want 1 (every pair up): at most 1 %%", alarms, 1<<n)
	}
}
