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
