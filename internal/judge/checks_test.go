package judge

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestCannotJudge(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Input)
		code   Code
		reason string // in CannotJudge, or in Notes when code is not 2
	}{
		{name: "steady", change: func(*Input) {}, code: Pass},
		{name: "generator short of its rate", change: func(in *Input) { in.Head[2].Schedule.Achieved = 19.7 }, code: CannotJudge,
			reason: "pair 3: the generator could not hold its rate to the head: 19.70 of 20.00 arrivals/s (under 99 %)"},
		{name: "generator exactly at 99 %", change: func(in *Input) { in.Base[2].Schedule.Achieved = 19.8 }, code: Pass},
		{name: "dropped over 1 %", change: func(in *Input) { in.Base[0].Schedule.Dropped = 13 }, code: CannotJudge,
			reason: "pair 1: the generator dropped 13 of 1200 arrivals due to the base"},
		{name: "dropped exactly 1 %", change: func(in *Input) { in.Base[0].Schedule.Dropped = 12 }, code: Pass},
		{name: "base late", change: func(in *Input) { in.Base[1].Schedule.Late = 40; in.Base[1].Schedule.LatenessP99 = 80 }, code: CannotJudge,
			reason: "pair 2: the base fell behind the schedule: its arrivals' p99 lateness 80.0 ms is over half an arrival interval (25.0 ms); 40 of 1200 arrivals late"},
		{name: "base late exactly half an interval", change: func(in *Input) { in.Base[1].Schedule.LatenessP99 = 25 }, code: Pass},
		{name: "many arrivals a little late is no matter", change: func(in *Input) { in.Base[1].Schedule.Late = 600; in.Base[1].Schedule.LatenessP99 = 3 }, code: Pass},
		{name: "both late is the generator", change: func(in *Input) { in.Base[1].Schedule.LatenessP99 = 30; in.Head[1].Schedule.LatenessP99 = 40 }, code: CannotJudge,
			reason: "pair 2: the generator fell behind the schedule for both arms: arrivals' p99 lateness 30.0 ms (base) and 40.0 ms (head)"},
		{name: "base over the bound with the head close behind is the generator", change: func(in *Input) { in.Base[1].Schedule.LatenessP99 = 28; in.Head[1].Schedule.LatenessP99 = 20 }, code: CannotJudge,
			reason: "pair 2: the generator fell behind the schedule for both arms: arrivals' p99 lateness 28.0 ms (base) and 20.0 ms (head)"},
		{name: "head late alone is a note", change: func(in *Input) { in.Head[1].Schedule.LatenessP99 = 60 }, code: Pass,
			reason: "pair 2: the head's arrivals went out late (p99 60.0 ms"},
		{name: "base answers owed at the end", change: func(in *Input) { in.Base[3].Schedule.Answered = 1150 }, code: CannotJudge,
			reason: "pair 4: the base fell behind the schedule: 50 of 1200 arrivals still unanswered when the phase ended"},
		{name: "a few answers in flight at the end", change: func(in *Input) { in.Base[3].Schedule.Answered = 1197 }, code: Pass},
		{name: "head stalls", change: func(in *Input) {
			for i := range in.Head[1].Groups {
				in.Head[1].Groups[i].P99 = 11 * in.Head[1].Groups[i].P50
			}
		}, code: CannotJudge, reason: "pair 2: the head stalled: every group's p99 was over 10 times its p50 (and over 2 times its usual tail) at once (up to 11x)"},
		{name: "a service whose own tail is long is no stall", change: func(in *Input) { setTails(in, 11) }, code: Pass},
		{name: "a phase within twice its own tail is no stall", change: func(in *Input) {
			setTails(in, 7)
			for i := range in.Head[1].Groups {
				in.Head[1].Groups[i].P99 = 13.9 * in.Head[1].Groups[i].P50
			}
		}, code: Pass},
		{name: "a phase past twice its own tail stalls", change: func(in *Input) {
			setTails(in, 7)
			for i := range in.Head[1].Groups {
				in.Head[1].Groups[i].P99 = 15 * in.Head[1].Groups[i].P50
			}
		}, code: CannotJudge, reason: "pair 2: the head stalled"},
		{name: "a head stalled in every phase does not raise its own bound", change: func(in *Input) {
			for _, p := range in.Head {
				for i := range p.Groups {
					p.Groups[i].P99 = 11 * p.Groups[i].P50
				}
			}
		}, code: CannotJudge, reason: "pair 4: the head stalled"},
		{name: "base stalls", change: func(in *Input) {
			for i := range in.Base[0].Groups {
				in.Base[0].Groups[i].P99 = 20 * in.Base[0].Groups[i].P50
			}
		}, code: CannotJudge, reason: "pair 1: the base stalled"},
		{name: "exactly 10x is no stall", change: func(in *Input) {
			for i := range in.Head[1].Groups {
				in.Head[1].Groups[i].P99 = 10 * in.Head[1].Groups[i].P50
			}
		}, code: Pass},
		{name: "one group's tail is no stall", change: func(in *Input) { in.Head[1].Groups[0].P99 = 100 * in.Head[1].Groups[0].P50 }, code: Pass},
		{name: "an empty group does not hide a stall", change: func(in *Input) {
			in.Head[1].Groups[0].P99 = 11 * in.Head[1].Groups[0].P50
			in.Head[1].Groups[1] = GroupFigures{Name: "item"}
		}, code: CannotJudge, reason: "pair 2: the head stalled"},
		{name: "head's second half 40 % slower", change: func(in *Input) { in.Head[2].Groups[0].Halves[1].P50 *= 1.4 }, code: CannotJudge,
			reason: "pair 3: group search's second half differs from its first: the head/base p50 ratio moved by +40 %"},
		{name: "base's second half faster", change: func(in *Input) { in.Base[0].Groups[1].Halves[1].P50 *= 0.6 }, code: CannotJudge,
			reason: "pair 1: group item's second half differs from its first: the head/base p50 ratio moved by +67 %"},
		{name: "machine drift in both arms is shared", change: func(in *Input) {
			in.Head[2].Groups[0].Halves[1].P50 *= 1.4
			in.Base[2].Groups[0].Halves[1].P50 *= 1.4
		}, code: Pass},
		{name: "a shift under 10 % is ignored", change: func(in *Input) {
			for _, g := range []*GroupFigures{&in.Head[2].Groups[0]} {
				g.Halves[0].Count, g.Halves[1].Count = 1e6, 1e6
				g.Halves[1].P50 *= 1.09
			}
		}, code: Pass},
		{name: "too few requests in a half to test", change: func(in *Input) {
			in.Head[2].Groups[0].Halves[1].P50 *= 3
			in.Head[2].Groups[0].Halves[1].Count = 19
		}, code: Pass},
		{name: "a 40 % shift within noise is no alarm", change: func(in *Input) {
			g := &in.Head[2].Groups[0]
			g.Halves[0].Count, g.Halves[1].Count = 25, 25
			g.Halves[0].P90, g.Halves[1].P90 = 20*g.Halves[0].P50, 20*g.Halves[1].P50
			g.Halves[1].P50 *= 1.4
		}, code: Pass},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := full()
			tc.change(&in)
			v := Judge(in)
			if v.Code != tc.code {
				t.Fatalf("code %d, want %d; cannot judge %q; notes %q", v.Code, tc.code, v.CannotJudge, v.Notes)
			}
			lines := v.Notes
			if tc.code == CannotJudge {
				lines = v.CannotJudge
			}
			if tc.reason != "" && !containsAll(lines, tc.reason) {
				t.Errorf("reasons %q, want one holding %q", lines, tc.reason)
			}
			if tc.code == Pass && len(v.CannotJudge) > 0 {
				t.Errorf("cannot judge %q on a pass", v.CannotJudge)
			}
		})
	}
}

// setTails gives every group of every phase a p99 of k times its p50.
func setTails(in *Input, k float64) {
	for _, phases := range [][]Phase{in.Base, in.Head} {
		for _, p := range phases {
			for i := range p.Groups {
				p.Groups[i].P99 = k * p.Groups[i].P50
			}
		}
	}
}

func TestCannotJudgeWinsButKeepsFailures(t *testing.T) {
	in := full()
	for i := range in.Head {
		in.Head[i].Values["p50.search"] = 10
	}
	in.Head[0].Schedule.Achieved = 10
	v := Judge(in)
	if v.Code != CannotJudge || len(v.Failures) != 1 || len(v.CannotJudge) != 1 {
		t.Errorf("code %d failures %q cannot %q, want 2 keeping the one failure", v.Code, v.Failures, v.CannotJudge)
	}
}

// TestHalvesFalseAlarms runs the halves test over simulated gates whose
// phases are steady (log-normal latencies, a machine that drifts by up to
// a third between the halves in both arms alike) and over gates whose head
// slows by 30 % in the second half of one phase, and checks the rates the
// documentation claims.
func TestHalvesFalseAlarms(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	const gates = 300
	flagged := map[float64]int{}
	for g := 0; g < gates; g++ {
		for _, f := range []float64{1, 1.2, 1.3, 1.5} {
			if len(checkHalves(simulatedGate(rng, f))) > 0 {
				flagged[f]++
			}
		}
	}
	t.Logf("halves test over %d simulated gates each: flagged %d steady, %d with a 20 %%, %d with a 30 %%, %d with a 50 %% slowdown of the head in one phase's second half",
		gates, flagged[1], flagged[1.2], flagged[1.3], flagged[1.5])
	if flagged[1] > 1 {
		t.Errorf("%d false alarms in %d steady gates, want at most 1", flagged[1], gates)
	}
	if flagged[1.3] < gates*3/4 || flagged[1.5] < gates*99/100 {
		t.Errorf("caught %d (30 %%) and %d (50 %%) of %d in-phase slowdowns, want 75 %% and 99 %% or more", flagged[1.3], flagged[1.5], gates)
	}
}

// simulatedGate makes 4 pairs of 7 groups sharing 20 arrivals/s for 60 s
// (about 85 requests a group a half), with the head's second half of pair
// 2 slowed by factor.
func simulatedGate(rng *rand.Rand, factor float64) Input {
	var in Input
	for p := 1; p <= 4; p++ {
		drift := math.Exp((rng.Float64()*2 - 1) * math.Log(4.0/3))
		var bg, hg []GroupFigures
		for g := 0; g < 7; g++ {
			m := 1 + float64(g)
			name := string(rune('a' + g))
			slow := 1.0
			if p == 2 {
				slow = factor
			}
			bg = append(bg, GroupFigures{Name: name, Halves: [2]Half{half(rng, m, 85), half(rng, m*drift, 85)}})
			hg = append(hg, GroupFigures{Name: name, Halves: [2]Half{half(rng, m, 85), half(rng, m*drift*slow, 85)}})
		}
		in.Base = append(in.Base, Phase{Pair: p, Groups: bg})
		in.Head = append(in.Head, Phase{Pair: p, Groups: hg})
	}
	return in
}

// half draws n log-normal latencies (sigma 0.5) around median m and keeps
// the nearest-rank p50 and p90.
func half(rng *rand.Rand, m float64, n int) Half {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = m * math.Exp(0.5*rng.NormFloat64())
	}
	sort.Float64s(xs)
	rank := func(q float64) float64 { return xs[int(math.Ceil(q*float64(n)))-1] }
	return Half{P50: rank(0.5), P90: rank(0.9), Count: uint64(n)}
}
