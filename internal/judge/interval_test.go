package judge

import (
	"math"
	"testing"
)

func TestSignedRankCDF(t *testing.T) {
	// n = 3: the 8 sign patterns give T = 0,1,2,3,3,4,5,6.
	want := []float64{1, 2, 3, 5, 6, 7, 8}
	got := signedRankCDF(3)
	for i := range want {
		if math.Abs(got[i]-want[i]/8) > 1e-15 {
			t.Errorf("P(T<=%d) = %v, want %v", i, got[i], want[i]/8)
		}
	}
	// n = 10: P(T <= 8) = 25/1024 (standard tables, 0.0244).
	if got := signedRankCDF(10)[8]; math.Abs(got-25.0/1024) > 1e-15 {
		t.Errorf("n=10 P(T<=8) = %v, want %v", got, 25.0/1024)
	}
}

func TestPairedInterval(t *testing.T) {
	tests := []struct {
		name        string
		base, head  []float64
		est, lo, hi float64
		conf        float64
		n           int
	}{
		{name: "4 pairs give the whole range at 87.5 %", base: four(100), head: []float64{110, 120, 125, 130},
			lo: 1.10, hi: 1.30, conf: 0.875, n: 4},
		{name: "6 pairs reach 96.9 %", base: []float64{1, 1, 1, 1, 1, 1}, head: []float64{1, 2, 2, 2, 2, 4},
			est: 2, lo: 1, hi: 4, conf: 1 - 2.0/64, n: 6},
		{name: "one pair is a point with no confidence", base: []float64{10}, head: []float64{12}, est: 1.2, lo: 1.2, hi: 1.2, conf: 0, n: 1},
		{name: "zero phases are left out", base: []float64{0, 10, 10}, head: []float64{5, 10, 10}, est: 1, lo: 1, hi: 1, conf: 0.5, n: 2},
		{name: "all zero has no interval", base: four(0), head: four(0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ci := pairedInterval(tc.base, tc.head)
			if ci.N != tc.n || math.Abs(ci.Confidence-tc.conf) > 1e-12 {
				t.Fatalf("n %d confidence %v, want %d %v", ci.N, ci.Confidence, tc.n, tc.conf)
			}
			if math.Abs(ci.Lo-tc.lo) > 1e-9 || math.Abs(ci.Hi-tc.hi) > 1e-9 {
				t.Errorf("interval [%v, %v], want [%v, %v]", ci.Lo, ci.Hi, tc.lo, tc.hi)
			}
			if tc.est != 0 && math.Abs(ci.Estimate-tc.est) > 1e-9 {
				t.Errorf("estimate %v, want %v", ci.Estimate, tc.est)
			}
			if ci.N > 0 && (ci.Estimate < ci.Lo || ci.Estimate > ci.Hi) {
				t.Errorf("estimate %v outside [%v, %v]", ci.Estimate, ci.Lo, ci.Hi)
			}
		})
	}
}

func TestIntervalNarrowsWithPairs(t *testing.T) {
	// 20 pairs of a steady 30 % slowdown with ±5 % noise: the 95 % interval
	// sits well inside the spread of the pairs.
	var base, head []float64
	for i := 0; i < 20; i++ {
		base = append(base, 100)
		head = append(head, 130*(1+0.05*math.Sin(float64(i))))
	}
	ci := pairedInterval(base, head)
	if ci.Confidence < 0.95 || ci.Lo < 1.25 || ci.Hi > 1.35 || ci.Lo > 1.3 || ci.Hi < 1.3 {
		t.Errorf("interval %+v, want about [1.27, 1.33] at 95 %% or more", ci)
	}
	if got := PairsFor(0.95); got != 6 {
		t.Errorf("PairsFor(0.95) = %d, want 6", got)
	}
	if got := PairsFor(0.99); got != 8 {
		t.Errorf("PairsFor(0.99) = %d, want 8", got)
	}
}

// TestSignedRankCut holds docs/judge.md's table of how sure the interval
// can be at each number of pairs (8, the default, reaches 96.1 % between
// the 4th smallest and 4th largest Walsh averages).
func TestSignedRankCut(t *testing.T) {
	for _, tc := range []struct {
		pairs, k int
		conf     float64
	}{
		{2, 1, 0.5}, {3, 1, 0.75}, {4, 1, 0.875}, {5, 1, 0.9375}, {6, 1, 0.96875},
		{8, 4, 0.9609375}, {10, 9, 0.951171875},
	} {
		k, conf := signedRankCut(tc.pairs, 1-WantConfidence)
		if k != tc.k || math.Abs(conf-tc.conf) > 1e-12 {
			t.Errorf("%d pairs: cut %d at %v, want %d at %v", tc.pairs, k, conf, tc.k, tc.conf)
		}
	}
}
