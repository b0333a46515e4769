package judge

import (
	"fmt"
	"math"
)

// The bounds of the judgeability checks; docs/judge.md says why each is
// what it is.
const (
	// HoldRate: the generator must send at least this share of the
	// offered rate in every phase.
	HoldRate = 0.99
	// ScheduleSlack: at most this share of a phase's due arrivals may be
	// dropped, or (for the base) left unanswered at its end.
	ScheduleSlack = 0.01
	// StallFactor: a phase stalled when every group's p99 is over this
	// many times its p50 at once, and over StallOwnTail times the group's
	// own usual p99/p50 in the gate.
	StallFactor = 10
	// StallOwnTail: how far past its own usual tail a group's p99/p50
	// must go to count as stalled. A service whose answers are spread
	// exponentially has p99 near 7 x p50 in every phase, and a phase of
	// 150 answers often reads 11 x; with one group that alone passed 10 x
	// and made every gate over it unjudgeable. A machine pause moves the
	// tail far more than twofold.
	StallOwnTail = 2
	// HalvesMinCount: a group enters the halves test only with at least
	// this many requests in each half of both arms' phase.
	HalvesMinCount = 20
	// HalvesMinShift: the halves test ignores a change of the head/base
	// p50 ratio between the halves smaller than this, however sure.
	HalvesMinShift = 0.10
	// HalvesFamilyAlpha: the chance that the halves test cries wolf on a
	// whole gate whose phases were steady.
	HalvesFamilyAlpha = 0.001
)

// checkSchedule finds phases whose arrivals did not keep to the plan.
// Dropped arrivals and a short achieved rate are the generator's. An arm
// whose arrivals' p99 lateness passed half an arrival interval had them
// drift into the other arm's slots, which breaks the pairing; an arm with
// answers still owed at the end of the phase was not keeping up. Those
// belong to the base when the base alone has them (it was too slow, so its
// figures are a saturated system's) and to the generator when both arms
// have them. A head alone late is a note: its latency counts from the
// intended send time, so the delay already shows there.
func checkSchedule(in Input) (cannot, notes []string) {
	for i := range in.Base {
		b, h := in.Base[i].Schedule, in.Head[i].Schedule
		pair := in.Base[i].Pair
		for _, a := range []struct {
			name string
			s    Schedule
		}{{"base", b}, {"head", h}} {
			if a.s.Achieved < HoldRate*a.s.Offered {
				cannot = append(cannot, fmt.Sprintf("pair %d: the generator could not hold its rate to the %s: %.2f of %.2f arrivals/s (under %.0f %%)", pair, a.name, a.s.Achieved, a.s.Offered, HoldRate*100))
			}
			if over(a.s.Dropped, a.s.Intended) {
				cannot = append(cannot, fmt.Sprintf("pair %d: the generator dropped %d of %d arrivals due to the %s (over %.0f %%)", pair, a.s.Dropped, a.s.Intended, a.name, ScheduleSlack*100))
			}
		}
		bLate, hLate := b.LatenessP99 > lateBound(b), h.LatenessP99 > lateBound(h)
		// One generator sends to both arms: lateness the head shares (over
		// half the base's) is the generator's even when only the base's
		// crossed the bound, so noise at the bound never blames the base.
		shared := bLate && h.LatenessP99 > b.LatenessP99/2
		switch {
		case bLate && hLate, shared:
			cannot = append(cannot, fmt.Sprintf("pair %d: the generator fell behind the schedule for both arms: arrivals' p99 lateness %.1f ms (base) and %.1f ms (head), over half an arrival interval (%.1f ms)", pair, b.LatenessP99, h.LatenessP99, lateBound(b)))
		case bLate:
			cannot = append(cannot, fmt.Sprintf("pair %d: the base fell behind the schedule: its arrivals' p99 lateness %.1f ms is over half an arrival interval (%.1f ms); %d of %d arrivals late", pair, b.LatenessP99, lateBound(b), b.Late, b.Intended))
		case hLate:
			notes = append(notes, fmt.Sprintf("pair %d: the head's arrivals went out late (p99 %.1f ms, over half an arrival interval, %.1f ms); its latency counts from the intended send time, so the delay shows there", pair, h.LatenessP99, lateBound(h)))
		}
		if b.Sent > b.Answered && over(b.Sent-b.Answered, b.Intended) {
			cannot = append(cannot, fmt.Sprintf("pair %d: the base fell behind the schedule: %d of %d arrivals still unanswered when the phase ended", pair, b.Sent-b.Answered, b.Sent))
		}
	}
	return cannot, notes
}

// lateBound is half an arrival interval in ms: later than that, an arm's
// arrival lands in the other arm's half of the interval.
func lateBound(s Schedule) float64 {
	if !(s.Offered > 0) {
		return 0
	}
	return 500 / s.Offered
}

// over reports n above ScheduleSlack of total.
func over(n, total uint64) bool {
	return float64(n) > ScheduleSlack*float64(total)+eps
}

// checkStall finds phases in which every group's p99 was over its stall
// bound at once: the machine, not the code, paused everything. A group's
// bound is StallFactor times its p50, or StallOwnTail times the group's
// usual p99/p50 (the median over every phase of both arms) when that is
// higher, so a service whose own tail is long is not taken for a stall.
// Groups with no request say nothing and are left out.
func checkStall(in Input) []string {
	usual := usualTails(in)
	var cannot []string
	for _, a := range []struct {
		name   string
		phases []Phase
	}{{"base", in.Base}, {"head", in.Head}} {
		for _, p := range a.phases {
			n, stalled, worst := 0, 0, 0.0
			for _, g := range p.Groups {
				if g.Requests == 0 {
					continue
				}
				n++
				bound := math.Max(StallFactor, StallOwnTail*usual[g.Name])
				if g.P99 > bound*g.P50 {
					stalled++
					if g.P50 > 0 {
						worst = math.Max(worst, g.P99/g.P50)
					}
				}
			}
			if n > 0 && stalled == n {
				cannot = append(cannot, fmt.Sprintf("pair %d: the %s stalled: every group's p99 was over %d times its p50 (and over %d times its usual tail) at once (up to %.0fx)", p.Pair, a.name, StallFactor, StallOwnTail, worst))
			}
		}
	}
	return cannot
}

// usualTails is each group's usual p99/p50: the median over each arm's
// phases, the lower of the two arms. A stalled phase or two does not move a
// median of several, and taking the lower arm keeps an arm that stalled in
// most of its phases (or a gate of one pair) from raising its own bound.
func usualTails(in Input) map[string]float64 {
	usual := map[string]float64{}
	for _, phases := range [][]Phase{in.Base, in.Head} {
		ratios := map[string][]float64{}
		for _, p := range phases {
			for _, g := range p.Groups {
				if g.Requests > 0 && g.P50 > 0 {
					ratios[g.Name] = append(ratios[g.Name], g.P99/g.P50)
				}
			}
		}
		for name, r := range ratios {
			if m, ok := usual[name]; !ok || median(r) < m {
				usual[name] = median(r)
			}
		}
	}
	return usual
}

// halfTest is one shift entering the halves test: one group in one pair,
// or (group "") every usable group of a pair pooled.
type halfTest struct {
	pair  int
	group string
	shift float64 // ln of (head/base p50 in the second half) / (in the first)
	se    float64 // its standard error
}

// checkHalves finds phases whose second half differs from the first. Both
// arms share the machine, whose speed drifts by a third from minute to
// minute, so the test looks at what drift cannot explain: the head/base
// ratio of a group's p50 in the second half against the first. It flags a
// change over HalvesMinShift that is also beyond chance: the standard
// error of each half's log median comes from its p50, p90 and count
// (1.2533 sigma / sqrt(n), sigma = ln(p90/p50) / 1.2816, as for a log-normal
// latency; heavier tails overstate sigma, which errs towards not
// flagging). Each group is tested, and so is each pair with its groups
// pooled (the inverse-variance mean of their shifts), which sees a phase
// that moved as a whole long before any one group's few requests can; the
// z bound is Bonferroni's over every test of the gate, so the whole gate
// cries wolf with chance HalvesFamilyAlpha at most.
func checkHalves(in Input) []string {
	var tests []halfTest
	for i := range in.Base {
		heads := map[string]GroupFigures{}
		for _, g := range in.Head[i].Groups {
			heads[g.Name] = g
		}
		var sumW, sumWShift float64
		usable := 0
		for _, b := range in.Base[i].Groups {
			h, ok := heads[b.Name]
			if !ok || !halvesUsable(b) || !halvesUsable(h) {
				continue
			}
			shift := math.Log(h.Halves[1].P50/h.Halves[0].P50) - math.Log(b.Halves[1].P50/b.Halves[0].P50)
			v := 0.0
			for _, g := range []GroupFigures{b, h} {
				for _, hf := range g.Halves {
					s := halfSE(hf)
					v += s * s
				}
			}
			tests = append(tests, halfTest{pair: in.Base[i].Pair, group: b.Name, shift: shift, se: math.Sqrt(v)})
			sumW += 1 / v
			sumWShift += shift / v
			usable++
		}
		if usable > 1 {
			tests = append(tests, halfTest{pair: in.Base[i].Pair, shift: sumWShift / sumW, se: math.Sqrt(1 / sumW)})
		}
	}
	if len(tests) == 0 {
		return nil
	}
	z := zFor(HalvesFamilyAlpha / float64(len(tests)))
	var cannot []string
	for _, t := range tests {
		if math.Abs(t.shift) <= math.Log1p(HalvesMinShift) || math.Abs(t.shift) <= z*t.se {
			continue
		}
		what := "group " + t.group + "'s"
		if t.group == "" {
			what = "the phase's (all groups pooled)"
		}
		cannot = append(cannot, fmt.Sprintf("pair %d: %s second half differs from its first: the head/base p50 ratio moved by %+.0f %% between the halves (beyond %.0f %% and %.1f standard errors)", t.pair, what, (math.Exp(t.shift)-1)*100, HalvesMinShift*100, z))
	}
	return cannot
}

func halvesUsable(g GroupFigures) bool {
	for _, h := range g.Halves {
		if h.Count < HalvesMinCount || !(h.P50 > 0) {
			return false
		}
	}
	return true
}

// halfSE is the standard error of ln(p50) of one half. A half whose p90
// equals its p50 (too few distinct latencies) gets sigma 0.05 so one
// quantised median cannot look infinitely sure.
func halfSE(h Half) float64 {
	sigma := 0.05
	if h.P90 > h.P50 {
		sigma = math.Max(sigma, math.Log(h.P90/h.P50)/1.2816)
	}
	return 1.2533 * sigma / math.Sqrt(float64(h.Count))
}

// zFor is the two-sided normal bound for a false-alarm chance alpha.
func zFor(alpha float64) float64 {
	return math.Sqrt2 * math.Erfinv(1-alpha)
}
