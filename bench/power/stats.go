package main

import (
	"math"
	"sort"
	"time"
)

// The bounds are one-sided exact (Clopper-Pearson) at this confidence: the
// question is "at most how many false alarms" and "at least how many
// catches", never both ways.
const confidence = 0.95

// binomCDF is P(X <= k) for X ~ Binomial(n, p).
func binomCDF(k, n int, p float64) float64 {
	if k < 0 {
		return 0
	}
	if k >= n {
		return 1
	}
	if p <= 0 {
		return 1
	}
	if p >= 1 {
		return 0
	}
	lgN, _ := math.Lgamma(float64(n + 1))
	var sum float64
	for i := 0; i <= k; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		b, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lgN - a - b + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return math.Min(sum, 1)
}

// upperBound is the largest rate that still gives k or fewer of n events
// with probability 1-confidence: with k = 0 it is 1 - 0.05^(1/n), about 3/n
// (the rule of three).
func upperBound(k, n int) float64 {
	if n == 0 || k >= n {
		return 1
	}
	return bisect(func(p float64) bool { return binomCDF(k, n, p) > 1-confidence })
}

// lowerBound is the smallest rate that still gives k or more of n events
// with probability 1-confidence.
func lowerBound(k, n int) float64 {
	if n == 0 || k <= 0 {
		return 0
	}
	// P(X >= k) = 1 - P(X <= k-1) grows with p.
	return bisect(func(p float64) bool { return 1-binomCDF(k-1, n, p) < 1-confidence })
}

// bisect finds where below turns false on [0, 1]; below is true at 0.
func bisect(below func(float64) bool) float64 {
	lo, hi := 0.0, 1.0
	for range 60 {
		mid := (lo + hi) / 2
		if below(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// runsToShow is how many runs without a single event bound the rate below
// p at the confidence: the smallest n with (1-p)^n <= 1-confidence.
func runsToShow(p float64) int {
	return int(math.Ceil(math.Log(1-confidence) / math.Log(1-p)))
}

func medianDur(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianF(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
