package judge

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

func TestTQuantileAtAgreesWithTheTable(t *testing.T) {
	for df := 1; df <= len(tTable); df++ {
		if got, want := tQuantileAt(df, PairedAlpha), tTable[df-1]; math.Abs(got-want) > 0.002*want {
			t.Errorf("df %d: tQuantileAt %.4f, the table %.3f", df, got, want)
		}
	}
	// Two more points of the standard tables, at other alphas.
	for _, tc := range []struct {
		df          int
		alpha, want float64
	}{{3, 0.005, 5.841}, {3, 0.001, 10.215}, {10, 0.05, 1.812}, {1, 0.25, 1.0}} {
		if got := tQuantileAt(tc.df, tc.alpha); math.Abs(got-tc.want) > 0.002*tc.want {
			t.Errorf("df %d alpha %v: %.4f, want %.3f", tc.df, tc.alpha, got, tc.want)
		}
	}
}

func TestSequentialLooksAndSpending(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     Sequential
		looks []int
	}{
		{"default", DefaultSequential(DefaultMinPairs, DefaultMaxPairs), []int{4, 6, 8, 10, 12, 14, 16}},
		{"uneven end", Sequential{MinPairs: 4, MaxPairs: 9, Every: 2, Alpha: 0.01, Beta: 0.05}, []int{4, 6, 8, 9}},
		{"one look", Sequential{MinPairs: 8, MaxPairs: 8, Every: 2, Alpha: 0.01, Beta: 0.05}, []int{8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if bad := tc.s.Validate(); bad != "" {
				t.Fatal(bad)
			}
			looks := tc.s.Looks()
			if len(looks) != len(tc.looks) {
				t.Fatalf("looks %v, want %v", looks, tc.looks)
			}
			var alpha, beta float64
			for i, n := range looks {
				if n != tc.looks[i] || tc.s.LookAt(n) != i+1 {
					t.Fatalf("looks %v, want %v", looks, tc.looks)
				}
				if a := tc.s.AlphaAt(i + 1); !(a > 0) {
					t.Fatalf("look %d spends %v", i+1, a)
				}
				alpha += tc.s.AlphaAt(i + 1)
				beta += tc.s.BetaAt(i + 1)
			}
			if last := len(looks); math.Abs(tc.s.AlphaLeft(last)-tc.s.AlphaAt(last)) > 1e-12 || tc.s.AlphaLeft(1) != tc.s.Alpha {
				t.Fatalf("alpha left at the last look %v, its share %v; at the first %v", tc.s.AlphaLeft(last), tc.s.AlphaAt(last), tc.s.AlphaLeft(1))
			}
			if math.Abs(alpha-tc.s.Alpha) > 1e-12 || math.Abs(beta-tc.s.Beta) > 1e-12 {
				t.Fatalf("spent alpha %v beta %v over the looks, want %v and %v", alpha, beta, tc.s.Alpha, tc.s.Beta)
			}
			if tc.s.LookAt(tc.looks[0]+1) != 0 && tc.s.Every > 1 && len(looks) > 2 {
				t.Fatalf("%d pairs make a look", tc.looks[0]+1)
			}
		})
	}
}

func TestSequentialValidate(t *testing.T) {
	for _, tc := range []struct {
		s    Sequential
		want string
	}{
		{Sequential{MinPairs: 1, MaxPairs: 8, Every: 2, Alpha: 0.01, Beta: 0.05}, "min_pairs is 1; the paired rule needs at least 2 pairs"},
		{Sequential{MinPairs: 8, MaxPairs: 4, Every: 2, Alpha: 0.01, Beta: 0.05}, "max_pairs (4) is under min_pairs (8)"},
		{Sequential{MinPairs: 4, MaxPairs: 8, Every: 0, Alpha: 0.01, Beta: 0.05}, "looks must be at least 1 pair apart"},
		{Sequential{MinPairs: 4, MaxPairs: 8, Every: 2, Alpha: 0, Beta: 0.05}, "the error rates must be between 0 and 1"},
	} {
		if got := tc.s.Validate(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestDecideLogs(t *testing.T) {
	s := DefaultSequential(DefaultMinPairs, DefaultMaxPairs)
	ln := math.Log
	for _, tc := range []struct {
		name       string
		ws         []float64
		detectable float64
		higher     bool
		look       int
		want       Decision
	}{
		{"a clear 2x at the first look", []float64{ln(2.1), ln(1.9), ln(2.0), ln(2.05)}, 0.3, false, 1, SettledRegression},
		{"2x in throughput (half the rate)", []float64{ln(2.1), ln(1.9), ln(2.0), ln(2.05)}, 0.3, true, 1, SettledRegression},
		{"2x with one pair the other way", []float64{ln(2.1), ln(1.9), ln(2.0), ln(0.7)}, 0.3, false, 1, Continue},
		{"6 % over 5 %, not yet beyond the look's bound", []float64{0.09, 0.03, 0.07, 0.055}, 0.08, false, 1, Continue},
		{"no change, tight, catches 8 %", []float64{0.004, -0.003, 0.001, -0.002}, 0.08, false, 1, SettledPass},
		{"no change, tight, but catches only 12 %", []float64{0.004, -0.003, 0.001, -0.002}, 0.12, false, 1, Continue},
		{"no change, scattered: a 10 % change not ruled out", []float64{0.06, -0.05, 0.04, -0.07}, 0.09, false, 1, Continue},
		{"4 % worse, within 5 %, tight", []float64{0.041, 0.038, 0.040, 0.039}, 0.06, false, 1, SettledPass},
		{"one pair", []float64{ln(2)}, 0.3, false, 1, Continue},
		{"no look", []float64{ln(2.1), ln(1.9), ln(2.0), ln(2.05)}, 0.3, false, 0, Continue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.DecideLogs(tc.ws, 0.05, tc.detectable, tc.higher, tc.look); got != tc.want {
				t.Fatalf("%v, want %v", got, tc.want)
			}
		})
	}
}

// TestDecideVerdict holds Decide to the verdicts Judge gives real inputs
// of the simulated gates behind Detectable.
func TestDecideVerdict(t *testing.T) {
	s := DefaultSequential(DefaultMinPairs, DefaultMaxPairs)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name      string
		n         int
		sd, shift float64
		want      Decision
	}{
		{"2x at 4 pairs", 4, 0.08, math.Log(2), SettledRegression},
		{"A/A, tight, at 8 pairs", 8, 0.01, 0, SettledPass},
		{"A/A, scattered, at 4 pairs", 4, 0.10, 0, Continue},
		{"7 % at 4 pairs, scattered", 4, 0.05, math.Log(1.07), Continue},
		{"a pair behind its schedule", 4, 0.01, 0, SettledCannotJudge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := simulated(rng, tc.n, tc.sd, tc.shift, true)
			if tc.want == SettledCannotJudge {
				in.Base[1].Schedule.LatenessP99 = 400 // ms, at 20 arrivals/s
			}
			v := Judge(in)
			got, why := s.Decide(v, s.LookAt(tc.n))
			if got != tc.want || why == "" {
				t.Fatalf("%v (%s), want %v; verdict %v", got, why, tc.want, v.Code)
			}
		})
	}
}

// seqGate runs one simulated adaptive gate: pairs drawn one at a time by
// draw (log ratios), a look at each of s.Looks; the last look's decision
// is the fixed rule's with the look's share (Input.Alpha). It never settles a pass early (detectable +Inf), which only adds
// looks where a false alarm could happen: the A/A rate it gives bounds the
// real gate's from above. It returns whether the gate failed and after
// how many pairs it stopped.
func seqGate(s Sequential, tol float64, draw func() float64) (fail bool, n int) {
	var ws []float64
	for look, m := range s.Looks() {
		for len(ws) < m {
			ws = append(ws, draw())
		}
		if s.DecideLogs(ws, tol, math.Inf(1), false, look+1) == SettledRegression {
			return true, m
		}
	}
	return false, len(ws)
}

// TestSequentialFalseAlarms proves the bound adaptive pairs promise: 2,000
// seeded A/A gates at each scatter, normal and heavy-tailed (Student's t
// with 3 degrees of freedom, as a loaded runner's ratios are), fail at
// most 1 % of the time over all their looks.
func TestSequentialFalseAlarms(t *testing.T) {
	t.Parallel()
	s := DefaultSequential(DefaultMinPairs, DefaultMaxPairs)
	const gates = 2000
	for _, tail := range []string{"normal", "t3"} {
		for _, sd := range []float64{0.01, 0.03, 0.06, 0.12, 0.25} {
			rng := rand.New(rand.NewPCG(22, uint64(sd*1000)))
			draw := func() float64 { return sd * rng.NormFloat64() }
			if tail == "t3" {
				draw = func() float64 {
					chi := 0.0
					for range 3 {
						z := rng.NormFloat64()
						chi += z * z
					}
					// t3 has variance 3: scaled to sd.
					return sd * rng.NormFloat64() / math.Sqrt(chi/3) / math.Sqrt(3)
				}
			}
			fails := 0
			for range gates {
				if f, _ := seqGate(s, 0.05, draw); f {
					fails++
				}
			}
			rate := float64(fails) / gates
			t.Logf("A/A %s, pairs scatter %.2f: %d of %d adaptive gates (4-16 pairs) failed, %.2f %%", tail, sd, fails, gates, 100*rate)
			if rate > 0.01 {
				t.Errorf("A/A %s at scatter %.2f: %.2f %% false alarms, over 1 %%", tail, sd, 100*rate)
			}
		}
	}
}

// TestSequentialDecidesAClearRegressionEarly: a 2x slowdown is settled in
// at most half the fixed gate's 8 pairs, in every one of 2,000 gates at a
// scatter of up to 8 %; at 15 % (as noisy as a loaded runner's pairs get)
// in 80 % of them, and in every one by the fixed gate's 8.
func TestSequentialDecidesAClearRegressionEarly(t *testing.T) {
	s := DefaultSequential(DefaultMinPairs, DefaultMaxPairs)
	fixed := 8
	for _, sd := range []float64{0.03, 0.08, 0.15} {
		rng := rand.New(rand.NewPCG(2, uint64(sd*1000)))
		worst, total, early := 0, 0, 0
		for range 2000 {
			fail, n := seqGate(s, 0.05, func() float64 { return math.Log(2) + sd*rng.NormFloat64() })
			if !fail {
				t.Fatalf("scatter %.2f: a 2x slowdown passed", sd)
			}
			worst, total = max(worst, n), total+n
			if n <= fixed/2 {
				early++
			}
		}
		t.Logf("2x slowdown, pairs scatter %.2f: decided in %.2f pairs on average, %d at most, %.1f %% by %d pairs (fixed gate: %d)",
			sd, float64(total)/2000, worst, float64(early)/20, fixed/2, fixed)
		if want := map[bool]int{true: 2000, false: 1600}[sd < 0.1]; early < want {
			t.Errorf("scatter %.2f: %d of 2000 gates decided a 2x slowdown within half the fixed %d pairs, want %d", sd, early, fixed, want)
		}
		if worst > fixed {
			t.Errorf("scatter %.2f: a gate took %d pairs to decide a 2x slowdown, over the fixed %d", sd, worst, fixed)
		}
	}
}

// TestInputAlpha: an adaptive gate's last look judges with its smaller
// share, which can turn a fixed gate's failure into a pass; a report
// asking for more than PairedAlpha cannot be judged.
func TestInputAlpha(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	in := simulated(rng, 8, 0.05, math.Log(1.11), true)
	for _, tc := range []struct {
		alpha float64
		want  Code
	}{{0, Regression}, {PairedAlpha, Regression}, {0.0001, Pass}, {0.05, CannotJudge}, {math.NaN(), CannotJudge}, {-0.01, CannotJudge}} {
		in.Alpha = tc.alpha
		if v := Judge(in); v.Code != tc.want {
			t.Errorf("alpha %v: %v (%q %q), want %v", tc.alpha, v.Code, v.Failures, v.CannotJudge, tc.want)
		}
		if math.IsNaN(tc.alpha) {
			continue // JSON has no NaN
		}
		// As compare reads it back from a report.
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var back Input
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if v := Judge(back); v.Code != tc.want {
			t.Errorf("alpha %v read back from JSON: %v, want %v", tc.alpha, v.Code, tc.want)
		}
	}
}
