package judge

import (
	"math"
	"sort"
)

// eps absorbs floating-point error in the breach comparison, so a head
// exactly at the threshold in decimal (125 over 100 at 25 %) never breaches
// because 1.25-1 came out a hair above 0.25.
const eps = 1e-9

// median of xs; with an even count, the mean of the two middle values.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// spread is how far the phase that strays furthest from the median (either
// way: a phase that ran unusually fast is as much noise as a slow one)
// lies from it, relative to the median. A median of 0 has no relative
// spread; it counts as 0, and the zero-base rule decides instead.
func spread(xs []float64, m float64) float64 {
	if m == 0 {
		return 0
	}
	worst := 0.0
	for _, x := range xs {
		if d := math.Abs(x-m) / math.Abs(m); d > worst {
			worst = d
		}
	}
	return worst
}

// worse is how much worse head is than base as a fraction of base:
// head/base-1 when lower is better, 1-head/base when higher is better.
// zero reports a base of 0, where no fraction exists.
func worse(base, head float64, higherIsBetter bool) (w float64, zero bool) {
	if base == 0 {
		return 0, true
	}
	if higherIsBetter {
		return 1 - head/base, false
	}
	return head/base - 1, false
}

// breaches reports whether head is worse than base by more than threshold.
// From a base of 0, any rise of a lower-is-better metric breaches (a
// service that did no store transaction per request and now does some has
// changed in kind); a higher-is-better metric cannot get worse than 0.
func breaches(base, head, threshold float64, higherIsBetter bool) bool {
	w, zero := worse(base, head, higherIsBetter)
	if zero {
		return !higherIsBetter && head > 0
	}
	return w > threshold+eps
}

// meanSD is the mean and the sample standard deviation (n-1) of xs; the
// deviation of fewer than two values is 0.
func meanSD(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// PairedAlpha is the paired rule's one-sided false-alarm chance per metric
// from the pairs' scatter alone, before the tolerance and "most pairs" cut
// it further; docs/judge.md has the measured whole-gate rate.
const PairedAlpha = 0.01

// tTable holds Student's t quantile for 1-PairedAlpha (0.99) by degrees of
// freedom 1..30, from the standard tables.
var tTable = [...]float64{31.821, 6.965, 4.541, 3.747, 3.365, 3.143, 2.998, 2.896, 2.821, 2.764,
	2.718, 2.681, 2.650, 2.624, 2.602, 2.583, 2.567, 2.552, 2.539, 2.528,
	2.518, 2.508, 2.500, 2.492, 2.485, 2.479, 2.473, 2.467, 2.462, 2.457}

// tQuantile is Student's t quantile for 1-PairedAlpha with df degrees of
// freedom: the table up to 30, then the Cornish-Fisher expansion around
// the normal quantile, within 0.001 of the exact value there.
func tQuantile(df int) float64 {
	if df < 1 {
		return math.Inf(1)
	}
	if df <= len(tTable) {
		return tTable[df-1]
	}
	z := zFor(2 * PairedAlpha)
	n := float64(df)
	return z + (z*z*z+z)/(4*n) + (5*math.Pow(z, 5)+16*z*z*z+3*z)/(96*n*n)
}
