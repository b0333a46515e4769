package judge

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// The simulation behind Detectable. Every condition of the paired rule
// scales with the pairs' scatter, so in units of one pair's standard
// deviation the smallest caught change depends only on the number of pairs
// and the tolerance in those units (tau); it is simulated once per grid
// point of tau and kept for the process.
const (
	detectSims    = 1000 // simulated gates per figure
	detectStep    = 0.02 // tau's grid, in standard deviations
	detectMaxTau  = 6.0  // past it the figure grows with tau one for one
	detectSeed    = 13   // fixed: a gate's figure is repeatable
	detectMaxUnit = 1e4  // a change no gate of these pairs catches
)

type detectKey struct{ n, k int }

var detectMemo struct {
	sync.Mutex
	units  map[detectKey]float64
	normal map[int][][]float64 // detectSims draws of n standard normals, by n
	gates  int                 // simulated gates judged so far: the figures' cost
}

// detectUnits is, in standard deviations of one pair's log ratio, the
// smallest change the paired rule catches in DetectPower of simulated
// gates of n pairs with a tolerance of tau standard deviations; +Inf when
// none below detectMaxUnit is.
func detectUnits(n int, tau float64) float64 {
	maxK := int(math.Round(detectMaxTau / detectStep))
	if tau >= detectMaxTau {
		return unitsAt(n, maxK) + tau - float64(maxK)*detectStep
	}
	x := tau / detectStep
	k := int(x)
	f := x - float64(k)
	return (1-f)*unitsAt(n, k) + f*unitsAt(n, k+1)
}

func unitsAt(n, k int) float64 {
	detectMemo.Lock()
	defer detectMemo.Unlock()
	if detectMemo.units == nil {
		detectMemo.units = map[detectKey]float64{}
		detectMemo.normal = map[int][][]float64{}
	}
	if u, ok := detectMemo.units[detectKey{n, k}]; ok {
		return u
	}
	zs, ok := detectMemo.normal[n]
	if !ok {
		rng := rand.New(rand.NewPCG(detectSeed, uint64(n)))
		zs = make([][]float64, detectSims)
		for j := range zs {
			zs[j] = make([]float64, n)
			for i := range zs[j] {
				zs[j][i] = rng.NormFloat64()
			}
		}
		detectMemo.normal[n] = zs
	}
	tau := float64(k) * detectStep
	caught := func(u float64) bool {
		ls := make([]float64, n)
		need := int(math.Ceil(DetectPower * detectSims))
		fails := 0
		for j, z := range zs {
			if fails >= need || fails+len(zs)-j < need {
				break // decided either way
			}
			for i := range z {
				ls[i] = u + z[i]
			}
			detectMemo.gates++
			if simulatedFail(ls, tau) {
				fails++
			}
		}
		return fails >= need
	}
	lo, hi := 0.0, tau+1
	for !caught(hi) {
		lo, hi = hi, 2*hi
		if hi > detectMaxUnit {
			detectMemo.units[detectKey{n, k}] = math.Inf(1)
			return math.Inf(1)
		}
	}
	for hi-lo > 0.01 {
		if mid := (lo + hi) / 2; caught(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	detectMemo.units[detectKey{n, k}] = hi
	return hi
}

// simulatedFail is judgePaired's decision on log ratios ls with a
// tolerance of tau (on the log scale), without rounding: the mean over the
// tolerance and over both noise bounds, and most pairs over the tolerance.
// The sign-flip condition is decided by counting (signFlipExceeds) instead
// of by enumerating every pattern as signFlipBound does, which would make
// a figure for 16 pairs take minutes; a test holds the two to the same
// answers.
func simulatedFail(ls []float64, tau float64) bool {
	over := 0
	for _, l := range ls {
		if l > tau {
			over++
		}
	}
	if 2*over <= len(ls) {
		return false
	}
	mean, sd := meanSD(ls)
	if !(mean > tau) || !(mean > studentBound(len(ls), sd)) {
		return false
	}
	return signFlipExceeds(ls, PairedAlpha)
}

// signFlipExceeds reports whether the mean of ls is over signFlipBound(ls,
// alpha): whether at most floor(alpha x 2^n) of the 2^n patterns of signs
// over |ls| reach a sum at least ls's own (the observed pattern among
// them). It counts by meeting in the middle: the sums of the first half's
// patterns sorted, each of the second half's looked up in them, 2 x 2^(n/2)
// sums instead of 2^n.
func signFlipExceeds(ls []float64, alpha float64) bool {
	n := len(ls)
	mean, _ := meanSD(ls)
	if n > signFlipMaxPairs || float64(int(1)<<n)*alpha < 1 {
		return mean > 0 // signFlipBound is 0 there
	}
	k := int(math.Floor(alpha * float64(int(1)<<n)))
	h := n / 2
	var bufA, bufB [1 << (signFlipMaxPairs / 2)]float64
	a, b := patternSums(ls[:h], bufA[:]), patternSums(ls[h:], bufB[:])
	slices.Sort(a)
	total := mean * float64(n)
	// A pattern's sum equal to the observed one, computed in another order,
	// may differ from it in the last bits; the tolerance counts it as equal.
	tiny := 1e-12 * (1 + math.Abs(total))
	count := 0
	for _, y := range b {
		need := total - y - tiny
		i, _ := slices.BinarySearch(a, need)
		count += len(a) - i
		if count > k {
			return false
		}
	}
	return true
}

// patternSums fills buf with the sums of every pattern of signs over |xs|:
// pattern p flips the values whose bit is set. Each sum is a smaller
// pattern's with one more value flipped.
func patternSums(xs, buf []float64) []float64 {
	out := buf[:1<<len(xs)]
	out[0] = 0
	for _, x := range xs {
		out[0] += math.Abs(x)
	}
	for i, x := range xs {
		bit := 1 << i
		for p := 0; p < bit; p++ {
			out[p|bit] = out[p] - 2*math.Abs(x)
		}
	}
	return out
}
