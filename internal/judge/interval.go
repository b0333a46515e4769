package judge

import (
	"math"
	"sort"
)

// WantConfidence is the confidence the paired interval aims for; with few
// pairs it reaches less, and says so.
const WantConfidence = 0.95

// pairedInterval gives the Hodges-Lehmann estimate of the head/base ratio
// and its Wilcoxon signed-rank interval, computed on log ratios so a
// doubling and a halving weigh the same. Like benchstat's, it is exact and
// distribution-free, and deterministic (no bootstrap seed to carry).
// Pairs with a value of 0 or less in either arm have no log ratio and are
// left out.
func pairedInterval(base, head []float64) Interval {
	var r []float64
	for i := range base {
		if i < len(head) && base[i] > 0 && head[i] > 0 {
			r = append(r, math.Log(head[i]/base[i]))
		}
	}
	n := len(r)
	if n == 0 {
		return Interval{}
	}
	// Walsh averages: the means of every pair of log ratios, each with itself.
	w := make([]float64, 0, n*(n+1)/2)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			w = append(w, (r[i]+r[j])/2)
		}
	}
	sort.Float64s(w)
	k, conf := signedRankCut(n, 1-WantConfidence)
	return Interval{
		Estimate:   math.Exp(median(w)),
		Lo:         math.Exp(w[k-1]),
		Hi:         math.Exp(w[len(w)-k]),
		Confidence: conf,
		N:          n,
	}
}

// signedRankCut returns the largest k >= 1 such that the interval between
// the k-th smallest and k-th largest Walsh averages holds the true shift
// with probability at least 1-alpha, and the confidence it reaches. When
// even k = 1 (the whole range) falls short, k is 1 and the confidence says
// how far short: 1 - 2^(1-n).
func signedRankCut(n int, alpha float64) (k int, confidence float64) {
	cdf := signedRankCDF(n)
	k = 1
	for k+1 <= len(cdf) && 2*cdf[k] <= alpha+1e-12 {
		k++
	}
	return k, 1 - 2*cdf[k-1]
}

// signedRankCDF returns P(T <= t) for t = 0..n(n+1)/2, T the Wilcoxon
// signed-rank statistic of n pairs under no difference, by the exact
// recurrence (each rank joins the positive sum with probability 1/2).
func signedRankCDF(n int) []float64 {
	m := n * (n + 1) / 2
	p := make([]float64, m+1)
	p[0] = 1
	for rank := 1; rank <= n; rank++ {
		for t := m; t >= 0; t-- {
			q := p[t]
			if t >= rank {
				q += p[t-rank]
			}
			p[t] = q / 2
		}
	}
	for t := 1; t <= m; t++ {
		p[t] += p[t-1]
	}
	return p
}

// PairsFor is the fewest pairs whose signed-rank interval reaches the
// confidence c (6 for 95 %), so a report can say how many more pairs a
// sure answer needs.
func PairsFor(c float64) int {
	for n := 1; n < 64; n++ {
		if 1-math.Pow(2, float64(1-n)) >= c-1e-12 {
			return n
		}
	}
	return 64
}
