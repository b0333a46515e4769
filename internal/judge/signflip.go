package judge

import (
	"math"
	"sort"
)

// signFlipMaxPairs bounds the exact sign-flip bound: 2^n sign patterns
// are enumerated, 65,536 at 16 pairs. Past it the Student bound alone
// stands, which the central limit theorem makes good for that many pairs.
const signFlipMaxPairs = 16

// signFlipBound is the smallest mean log ratio that at most a share alpha
// of the 2^n patterns of signs over |ls| reach, when 2^n is large enough
// for alpha (n >= 7 at 1 %), else 0. In an A/A gate the two arms of a pair
// are exchangeable (the same build, the same machine, the lead
// alternating), so every pattern of signs is as likely as the observed
// one; a mean over this bound is then one that at most alpha of the A/A
// gates with these pairs' magnitudes would show, whatever the shape of the
// noise. The Student bound assumes normal ratios; a loaded runner's are
// heavier-tailed, and there the Student bound alone cried wolf in 2-3 % of
// A/A gates at 8 pairs (docs/judge.md, "Power").
func signFlipBound(ls []float64, alpha float64) float64 {
	n := len(ls)
	if n > signFlipMaxPairs || float64(int(1)<<n)*alpha < 1 {
		return 0
	}
	means := patternSums(ls, make([]float64, 1<<n))
	for p := range means {
		means[p] /= float64(n)
	}
	sort.Float64s(means)
	// The k patterns above the bound are at most alpha of them: the bound
	// is the (k+1)-th largest mean.
	k := int(math.Floor(alpha * float64(len(means))))
	return means[len(means)-1-k]
}
