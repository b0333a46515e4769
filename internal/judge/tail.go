package judge

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// The pooled tail rule. A phase's p99 of 180 answers is its second
// slowest answer: one slow answer a phase moves it, and the per-phase
// rule, which needs most pairs over the tolerance, missed a head that made
// 3 % of its requests 2 ms slower. Pooled over 8 pairs each arm holds
// 1,440 answers and its p99 rests on 15 of them. The pairs still matter:
// both arms of a pair share the runner's state, which drifts from pair to
// pair, so the interval comes from swapping the arms' labels within pairs
// (a permutation test), never from treating the answers as independent.

// TailRule holds the pooled tail rule's settings.
type TailRule struct {
	// MinPercent is the lowest percentile judged pooled: p95 and p99 are,
	// p50 keeps the per-phase paired rule: a median rests on half a
	// phase's answers, not a handful.
	MinPercent float64
	// Alpha is the one-sided false-alarm chance of the permutation bound:
	// in an A/A gate the head's pooled percentile exceeds the base's by
	// more than the bound in at most this share of gates.
	Alpha float64
	// Confidence is what the two-sided interval of the ratio aims for.
	Confidence float64
	// MaxExact is the most pairs whose 2^n patterns of labels are all
	// enumerated (4,096 at 12); past it Patterns patterns are drawn with
	// Seed, so a gate's figures are repeatable.
	MaxExact int
	Patterns int
	Seed     uint64
}

// DefaultTailRule is the rule the judge applies: p95 and above, at the
// paired rule's alpha and the interval's confidence.
var DefaultTailRule = TailRule{MinPercent: 95, Alpha: PairedAlpha, Confidence: WantConfidence, MaxExact: 12, Patterns: 4096, Seed: 22}

// Tail is a tail percentile judged from each arm's pooled histogram. Base
// and Head are the pooled percentiles (ms) over BaseCount and HeadCount
// answers; Beyond is how many answers lay beyond the percentile in the
// arm with fewer. Worse is Head/Base - 1; Bound the permutation bound on
// it, read the same way: the Worse that at most Alpha of the patterns of
// swapped labels reach. Patterns counts the patterns, Exact says they were
// all of them. CI is the interval of Head/Base from the same patterns;
// Detectable the smallest change that fails in DetectPower of gates
// whose pairs scatter as this gate's patterns do. Fail is Worse over both
// the tolerance and the bound. Warnings say why the rule could not judge
// (too few pairs, an empty arm); the judge then keeps the per-phase rule.
type Tail struct {
	Percent    float64  `json:"percent"`
	Base       float64  `json:"base_ms"`
	Head       float64  `json:"head_ms"`
	BaseCount  uint64   `json:"base_count"`
	HeadCount  uint64   `json:"head_count"`
	Beyond     uint64   `json:"beyond"`
	Worse      float64  `json:"worse"`
	Bound      float64  `json:"bound"`
	Patterns   int      `json:"patterns"`
	Exact      bool     `json:"exact,omitempty"`
	CI         Interval `json:"interval"`
	Detectable float64  `json:"detectable,omitempty"`
	Fail       bool     `json:"fail"`
	Warnings   []error  `json:"-"`
}

// maxExactPairs caps TailRule.MaxExact: 2^20 patterns is already a
// second or more a metric.
const maxExactPairs = 20

// minTailMS keeps a pooled percentile of 0 (an answer under 1 µs) off the
// log scale: the histograms' resolution is 1 µs anyway.
const minTailMS = 0.001

// PooledTail judges percentile p (95 for p95) of one request group from
// one histogram per pair and arm, base[i] and head[i] measured in pair i,
// against tolerance (a fraction). It does no I/O and is deterministic.
func PooledTail(rule TailRule, p, tolerance float64, base, head []*Histogram) Tail {
	t := Tail{Percent: p}
	n := len(base)
	if n != len(head) || n == 0 {
		t.Warnings = append(t.Warnings, fmt.Errorf("%d base phases and %d head phases: the pooled rule needs one of each per pair", len(base), len(head)))
		return t
	}
	// Every pattern gives each arm one phase of each pair, so no arm holds
	// more than the larger phase of every pair: the deepest rank from the
	// top any pattern reads (topRank grows with the count).
	var most uint64
	bs, hs := make([][]bin, n), make([][]bin, n)
	cb, ch := make([]uint64, n), make([]uint64, n)
	for i := range n {
		cb[i], ch[i] = base[i].Count(), head[i].Count()
		t.BaseCount += base[i].Count()
		t.HeadCount += head[i].Count()
		most += max(base[i].Count(), head[i].Count())
	}
	if t.BaseCount == 0 || t.HeadCount == 0 {
		t.Warnings = append(t.Warnings, errors.New("an arm has no answer as planned in any phase"))
		return t
	}
	deep := topRank(most, p)
	for i := range n {
		bs[i], hs[i] = truncate(base[i].bins(), deep), truncate(head[i].bins(), deep)
	}
	t.Base = kthLargest(bs, topRank(t.BaseCount, p))
	t.Head = kthLargest(hs, topRank(t.HeadCount, p))
	t.Beyond = min(topRank(t.BaseCount, p), topRank(t.HeadCount, p)) - 1
	if !(t.Base > 0) {
		t.Warnings = append(t.Warnings, errors.New("the base's pooled percentile is 0"))
		return t
	}
	t.Worse = t.Head/t.Base - 1

	stats := patternStats(rule, p, bs, hs, cb, ch, 0)
	t.Patterns = len(stats)
	t.Exact = n <= min(rule.MaxExact, maxExactPairs)
	if float64(len(stats))*rule.Alpha < 1 {
		t.Warnings = append(t.Warnings, fmt.Errorf("%d pairs give %d patterns of labels, too few for a bound at %s: the pooled rule needs %d pairs", n, len(stats), pct(rule.Alpha), minTailPairs(rule.Alpha)))
		return t
	}
	observed := stats[0]
	slices.Sort(stats)
	// As signFlipBound: the k patterns above the bound are at most Alpha.
	k := int(math.Floor(rule.Alpha * float64(len(stats))))
	bound := stats[len(stats)-1-k]
	t.Bound = math.Expm1(bound)
	threshold := math.Max(math.Log1p(tolerance), bound)
	t.Fail = observed > threshold+eps && t.Worse > tolerance+eps

	// The noise around the estimate: the same patterns with the head's
	// answers scaled by the estimated ratio, so that a real change, which
	// the swapped patterns also carry in part, does not widen it (the
	// interval by inverting the test at the estimate).
	noise := patternStats(rule, p, bs, hs, cb, ch, observed)
	slices.Sort(noise)
	// A change the size of c moves the observed statistic by about c; the
	// noise's DetectPower quantile over the threshold fails in DetectPower
	// of such gates.
	t.Detectable = math.Expm1(threshold + noise[quantileIndex(len(noise), DetectPower)])

	abs := make([]float64, len(noise))
	for i, s := range noise {
		abs[i] = math.Abs(s)
	}
	slices.Sort(abs)
	c := abs[quantileIndex(len(abs), rule.Confidence)]
	within := 0
	for _, a := range abs {
		if a <= c+eps {
			within++
		}
	}
	t.CI = Interval{Estimate: math.Exp(observed), Lo: math.Exp(observed - c), Hi: math.Exp(observed + c),
		Confidence: float64(within) / float64(len(abs)), N: n}
	return t
}

// minTailPairs is the fewest pairs whose 2^n patterns allow a bound at
// alpha: 7 at 1 %.
func minTailPairs(alpha float64) int {
	n := 1
	for float64(int(1)<<n)*alpha < 1 && n < 62 {
		n++
	}
	return n
}

// quantileIndex is the index of the q-quantile in n sorted values.
func quantileIndex(n int, q float64) int {
	i := int(math.Ceil(q*float64(n))) - 1
	return min(max(i, 0), n-1)
}

// patternStats is ln(head/base) of the pooled percentiles under each
// pattern of labels swapped within pairs; the first is the observed
// pattern (nothing swapped). Under no change the two phases of a pair are
// exchangeable, so each pattern is as likely as the observed one.
// bs and hs are each phase's slowest bins, cb and ch its whole counts;
// the head's answers are divided by exp(shift) first (0: as measured).
func patternStats(rule TailRule, p float64, bs, hs [][]bin, cb, ch []uint64, shift float64) []float64 {
	n := len(bs)
	if shift != 0 {
		f := math.Exp(-shift)
		scaled := make([][]bin, n)
		for i, h := range hs {
			scaled[i] = make([]bin, len(h))
			for j, x := range h {
				scaled[i][j] = bin{ms: x.ms * f, count: x.count}
			}
		}
		hs = scaled
	}
	grid := newTailGrid(append(append([][]bin(nil), bs...), hs...))
	a, b := make([][]uint64, n), make([][]uint64, n)
	stat := func(swap func(i int) bool) float64 {
		var countA, countB uint64
		for i := range n {
			if swap(i) {
				a[i], b[i] = grid.cum[n+i], grid.cum[i]
				countA, countB = countA+ch[i], countB+cb[i]
			} else {
				a[i], b[i] = grid.cum[i], grid.cum[n+i]
				countA, countB = countA+cb[i], countB+ch[i]
			}
		}
		qa := math.Max(grid.kthLargest(a, topRank(countA, p)), minTailMS)
		qb := math.Max(grid.kthLargest(b, topRank(countB, p)), minTailMS)
		return math.Log(qb / qa)
	}
	if n <= min(rule.MaxExact, maxExactPairs) {
		out := make([]float64, 1<<n)
		for m := range out {
			out[m] = stat(func(i int) bool { return m>>i&1 == 1 })
		}
		return out
	}
	rng := rand.New(rand.NewPCG(rule.Seed, uint64(n)))
	out := make([]float64, max(rule.Patterns, 1))
	flip := make([]bool, n)
	out[0] = stat(func(int) bool { return false })
	for j := 1; j < len(out); j++ {
		for i := range flip {
			flip[i] = rng.IntN(2) == 1
		}
		out[j] = stat(func(i int) bool { return flip[i] })
	}
	return out
}

// tailGrid lays the phases' slowest bins on one grid of values, slowest
// first, each phase's answers counted cumulatively from the top, so that
// an arm's k-th slowest answer under any pattern is a binary search over
// the grid summing one count per pair: the pattern loop's cost no longer
// grows with how many answers lie in the tail.
type tailGrid struct {
	ms  []float64  // distinct values, slowest first
	cum [][]uint64 // cum[phase][g]: the phase's answers at ms[g] or slower
}

func newTailGrid(phases [][]bin) tailGrid {
	var all []float64
	for _, ph := range phases {
		for _, b := range ph {
			all = append(all, b.ms)
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	slices.Reverse(all)
	g := tailGrid{ms: all, cum: make([][]uint64, len(phases))}
	for i, ph := range phases {
		c := make([]uint64, len(all))
		var seen uint64
		j := 0
		for x := range all {
			for j < len(ph) && ph[j].ms >= all[x] {
				seen += ph[j].count
				j++
			}
			c[x] = seen
		}
		g.cum[i] = c
	}
	return g
}

// kthLargest is the k-th slowest answer over the phases whose cumulative
// counts are given; 0 when they hold fewer than k.
func (g tailGrid) kthLargest(phases [][]uint64, k uint64) float64 {
	if k == 0 || len(g.ms) == 0 {
		return 0
	}
	sum := func(x int) uint64 {
		var s uint64
		for _, c := range phases {
			s += c[x]
		}
		return s
	}
	lo, hi := 0, len(g.ms)-1
	if sum(hi) < k {
		return 0
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if sum(mid) >= k {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return g.ms[lo]
}
