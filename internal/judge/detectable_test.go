package judge

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestDetectableBoundaries(t *testing.T) {
	tests := []struct {
		name           string
		tol            float64
		sd             float64
		n              int
		higherIsBetter bool
		want           float64 // exact, or 0 to check only the bounds below
		atLeast        float64
	}{
		{name: "no scatter: the tolerance itself", tol: 0.05, sd: 0, n: 8, want: 0.05},
		{name: "one pair: nothing to estimate from", tol: 0.05, sd: 0.1, n: 1, want: 0},
		{name: "a higher-is-better tolerance of 100 %: nothing is worse", tol: 1, sd: 0.1, n: 8, higherIsBetter: true, want: 0},
		// 8 pairs scattering 12 % (the exponential target's p50 at 300
		// answers a phase): most pairs over 5 % needs each pair over it
		// with a chance near 0.9, 1.3 standard deviations, about 21 %.
		{name: "a wide scatter over 8 pairs", tol: 0.05, sd: 0.12, n: 8, atLeast: 0.18},
		{name: "higher is better reads as a fall", tol: 0.05, sd: 0.02, n: 8, higherIsBetter: true, atLeast: 0.05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := detectable(tt.tol, tt.sd, tt.n, tt.higherIsBetter)
			if tt.atLeast == 0 {
				if math.Abs(got-tt.want) > 1e-12 {
					t.Errorf("detectable = %v, want %v", got, tt.want)
				}
				return
			}
			if got < tt.atLeast || got >= 1 && tt.higherIsBetter {
				t.Errorf("detectable = %v, want at least %v (and under 100 %% when higher is better)", got, tt.atLeast)
			}
		})
	}
	// More pairs, or less scatter, can only lower it.
	if a, b := detectable(0.05, 0.1, 8, false), detectable(0.05, 0.1, 16, false); !(b < a) {
		t.Errorf("16 pairs detect %v, 8 pairs %v: more pairs must detect less", b, a)
	}
	if a, b := detectable(0.05, 0.1, 8, false), detectable(0.05, 0.05, 8, false); !(b < a) {
		t.Errorf("half the scatter detects %v against %v: it must detect less", b, a)
	}
}

// A change as large as Detectable says is caught in at least DetectPower
// of simulated gates whose pairs scatter as the figure assumed, and a
// change of half that much in clearly fewer: the figure is what it claims,
// and not a loose bound that says nothing. The gates go through Judge, so
// the sign-flip bound and the "most pairs" count are the real ones.
func TestDetectableIsCaught(t *testing.T) {
	t.Parallel()
	const n, sd, gates = 8, 0.08, 2000
	rng := rand.New(rand.NewPCG(13, 14))
	// The figure a gate with exactly this scatter and no change reports.
	ref := Judge(simulated(rng, n, sd, 0, true))
	d := ref.Metrics[0].Detectable
	if !(d > 0.05) {
		t.Fatalf("an A/A gate scattering %v per pair reports Detectable %v", sd, d)
	}
	caught := func(change float64) float64 {
		fails := 0
		for i := 0; i < gates; i++ {
			if Judge(simulated(rng, n, sd, math.Log1p(change), false)).Metrics[0].Fail {
				fails++
			}
		}
		return float64(fails) / gates
	}
	got := caught(d)
	t.Logf("8 pairs scattering %.0f %%: Detectable %.1f %%, caught in %.1f %% of %d gates; half of it in %.1f %%", 100*sd, 100*d, 100*got, gates, 100*caught(d/2))
	if got < DetectPower-0.02 {
		t.Errorf("a change of %.1f %% (Detectable) was caught in %.1f %% of gates, want at least %.0f %%", 100*d, 100*got, 100*DetectPower)
	}
	if got := caught(d / 2); got > 0.8 {
		t.Errorf("a change of %.1f %% (half of Detectable) was caught in %.1f %% of gates: the figure is too loose to say anything", 50*d, 100*got)
	}
}

// simulated is a gate of one latency metric over n pairs whose log ratios
// are normal with sd around shift; exact makes the ratios' sample sd
// exactly sd (a reference gate), else they are drawn.
func simulated(rng *rand.Rand, n int, sd, shift float64, exact bool) Input {
	ls := make([]float64, n)
	for i := range ls {
		ls[i] = rng.NormFloat64()
	}
	if exact {
		m, s := meanSD(ls)
		for i := range ls {
			ls[i] = (ls[i] - m) / s
		}
	}
	base, head := make([]float64, n), make([]float64, n)
	for i := range ls {
		base[i] = 100
		head[i] = 100 * math.Exp(shift+sd*ls[i])
	}
	return pairs(latencyMetric, base, head)
}

func TestDetectableNote(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	wide := Judge(simulated(rng, 8, 0.12, 0, true))
	if !strings.Contains(strings.Join(wide.Notes, "\n"), "these catch a change only from about this size on (in 95 % of runs, at their pairs' scatter): p50.search ") {
		t.Errorf("a pass over pairs scattering 12 %% carries no note on what it could catch: %q", wide.Notes)
	}
	narrow := Judge(simulated(rng, 8, 0.005, 0, true))
	for _, n := range narrow.Notes {
		if strings.Contains(n, "scatter") {
			t.Errorf("a pass over pairs scattering 0.5 %% is noted: %q", n)
		}
	}
	in := simulated(rng, 8, 0.12, 0, true)
	in.Rule = RuleMedians
	if v := Judge(in); v.Metrics[0].Detectable != 0 || strings.Contains(strings.Join(v.Notes, "\n"), "scatter") {
		t.Errorf("the medians rule reports Detectable %v and notes %q: it is the paired rule's figure", v.Metrics[0].Detectable, v.Notes)
	}
}

// The simulation decides the sign-flip condition by counting; the judge by
// the bound it reports. On the same ratios they must agree.
func TestSignFlipExceedsAgreesWithTheBound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 2; n <= signFlipMaxPairs; n++ {
		draws := 300
		if n >= 13 {
			draws = 20 // signFlipBound enumerates 2^n patterns
		}
		for i := 0; i < draws; i++ {
			ls := make([]float64, n)
			shift := rng.Float64() * 2
			for j := range ls {
				ls[j] = shift + rng.NormFloat64()
			}
			mean, _ := meanSD(ls)
			// As judgePaired compares: a mean equal to the bound (the
			// observed pattern is the bound's) is no breach, eps absorbing
			// the last bits the two sums' orders differ in.
			want := mean > signFlipBound(ls, PairedAlpha)+eps
			if got := signFlipExceeds(ls, PairedAlpha); got != want {
				t.Fatalf("%d pairs %v: signFlipExceeds says %v, the bound %v (mean %v)", n, ls, got, signFlipBound(ls, PairedAlpha), mean)
			}
		}
	}
}

// A figure costs a bounded number of simulated gates: the search doubles
// then halves, and each step stops once its count is decided. The time
// this takes is BenchmarkDetectable's.
func TestDetectableCostIsBounded(t *testing.T) {
	for _, n := range []int{8, 16} {
		detectMemo.Lock()
		before := detectMemo.gates
		detectMemo.Unlock()
		// A tolerance of 5.9 deviations, near the grid's end, which no
		// other test asks for: not yet simulated.
		d := detectable(math.Expm1(0.059), 0.01, n, false)
		detectMemo.Lock()
		used := detectMemo.gates - before
		detectMemo.Unlock()
		if !(d > math.Expm1(0.059) && d < 0.2) {
			t.Errorf("Detectable for %d pairs scattering 1 %% at a 6.1 %% tolerance = %v", n, d)
		}
		// Two grid points, each at most 20 steps of detectSims gates.
		if max := 2 * 20 * detectSims; used > max || used == 0 {
			t.Errorf("Detectable for %d pairs simulated %d gates, want 1 to %d", n, used, max)
		}
	}
}

// go test -bench Detectable ./internal/judge: the cost of a figure not yet
// simulated (a fresh grid point each time).
func BenchmarkDetectable(b *testing.B) {
	for _, n := range []int{8, 16} {
		b.Run(strconv.Itoa(n)+" pairs", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				detectUnits(n, 0.013+float64(i%290)*detectStep) // a grid point per i, up to the grid's end
			}
		})
	}
}

// A catches figure past ten times the base reads "over 1,000 %", not the
// 22-digit percentages a 2-pair gate's Student factor made of it.
func TestCatchesText(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0.072, "7.2 %"},
		{CatchesCap, "1000 %"},
		{CatchesCap * 1.001, "over 1,000 %"},
		{3.1e19, "over 1,000 %"},
		{math.Inf(1), "over 1,000 %"},
	} {
		if got := CatchesText(tc.f); got != tc.want {
			t.Errorf("CatchesText(%g) = %q, want %q", tc.f, got, tc.want)
		}
	}
}
