package main

import (
	"math"
	"slices"
	"testing"
)

// The order-statistic interval for the median: known ranks and coverages
// from the binomial table (n=6: 1 and 6, 96.9 %; n=15: 4 and 12, 96.5 %).
func TestMedianInterval(t *testing.T) {
	tests := []struct {
		n        int
		k        int // lo = x(k), hi = x(n+1-k), 1-based
		conf     float64
		possible bool
	}{
		{5, 0, 0, false},
		{6, 1, 0.96875, true},
		{9, 2, 0.9609, true},
		{15, 4, 0.9648, true},
	}
	for _, tc := range tests {
		xs := make([]float64, tc.n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		slices.Reverse(xs)
		median(xs) // sorts
		lo, hi, conf, ok := medianInterval(xs)
		if ok != tc.possible {
			t.Fatalf("n=%d: ok %v, want %v", tc.n, ok, tc.possible)
		}
		if !ok {
			continue
		}
		if lo != float64(tc.k) || hi != float64(tc.n+1-tc.k) || math.Abs(conf-tc.conf) > 0.0005 {
			t.Errorf("n=%d: x(%v)-x(%v) at %.4f, want x(%d)-x(%d) at %.4f", tc.n, lo, hi, conf, tc.k, tc.n+1-tc.k, tc.conf)
		}
	}
}
