package judge

import (
	"fmt"
	"math"
)

// This file is the sequential decision behind adaptive pairs (`pairs =
// "auto"`): the gate runs pairs one at a time and, at each look, asks
// whether the verdict is already settled. A group-sequential design: the
// looks come after MinPairs pairs, then every Every pairs, up to MaxPairs;
// each look may fail the gate only at its own share of the false-alarm
// chance (alpha spending), so that looking many times does not multiply
// the false alarms of A/A gates.

// Decision is what one look says of the gate so far.
type Decision int

// The decisions of a look.
const (
	// Continue: not settled; run more pairs if the bounds allow.
	Continue Decision = iota
	// SettledRegression: a metric is worse than its tolerance beyond this
	// look's share of the false-alarm chance.
	SettledRegression
	// SettledPass: every metric is within its tolerance and the gate can
	// already catch a change of WeakPassFactor times its tolerance.
	SettledPass
	// SettledCannotJudge: a pair so far cannot be judged (its schedule
	// slipped, an arm stalled, a group went unanswered), which no later
	// pair undoes, so more pairs would only spend the runner's time.
	SettledCannotJudge
)

// String is the decision in the words the report's note uses.
func (d Decision) String() string {
	switch d {
	case SettledRegression:
		return "regression settled"
	case SettledPass:
		return "pass settled"
	case SettledCannotJudge:
		return "cannot judge settled"
	default:
		return "not settled"
	}
}

// WeakPassFactor is how many times its tolerance a metric's Detectable
// (the report's `catches` column) may be for its pass to say something:
// past it the summary notes the pass as weak (detectableNote), and an
// adaptive gate keeps adding pairs. Detectable is never under the
// tolerance itself (a change just at the tolerance is caught half the
// time), so the tolerance alone could never settle a pass.
const WeakPassFactor = 2

// Default bounds of adaptive pairs: 4 pairs is FerroFED's gate's fixed
// count and half the default 8, the least a clear regression should need;
// 16 is where the exact sign-flip bound stops (signFlipMaxPairs), and at
// the default profile (2 s + 10 s a phase) 16 pairs stay under the
// 6-minute wall budget.
const (
	DefaultMinPairs = 4
	DefaultMaxPairs = 16
	DefaultEvery    = 2
)

// Sequential is the thresholds of adaptive pairs' decision.
type Sequential struct {
	MinPairs, MaxPairs int
	// Every is how many pairs apart the looks after the first are.
	Every int
	// Alpha is the false-alarm chance spent over all the looks, one-sided,
	// per metric; Beta the chance spent over them of passing a metric
	// whose change is WeakPassFactor times its tolerance.
	Alpha, Beta float64
}

// DefaultSequential is the decision with the given bounds, PairedAlpha
// spent on false alarms and 1-DetectPower on misses, a look every
// DefaultEvery pairs.
func DefaultSequential(minPairs, maxPairs int) Sequential {
	return Sequential{MinPairs: minPairs, MaxPairs: maxPairs, Every: DefaultEvery, Alpha: PairedAlpha, Beta: 1 - DetectPower}
}

// Validate says what is wrong with the bounds ("" when nothing).
func (s Sequential) Validate() string {
	switch {
	case s.MinPairs < 2:
		return fmt.Sprintf("min_pairs is %d; the paired rule needs at least 2 pairs", s.MinPairs)
	case s.MaxPairs < s.MinPairs:
		return fmt.Sprintf("max_pairs (%d) is under min_pairs (%d)", s.MaxPairs, s.MinPairs)
	case s.Every < 1:
		return "looks must be at least 1 pair apart"
	case !(s.Alpha > 0 && s.Alpha < 1) || !(s.Beta > 0 && s.Beta < 1):
		return "the error rates must be between 0 and 1"
	}
	return ""
}

// Looks is the number of pairs at each look: MinPairs, every Every pairs
// after, and MaxPairs last.
func (s Sequential) Looks() []int {
	var ns []int
	for n := s.MinPairs; n < s.MaxPairs; n += s.Every {
		ns = append(ns, n)
	}
	return append(ns, s.MaxPairs)
}

// LookAt is the look (1 for the first) that n pairs make, 0 when n pairs
// are no look.
func (s Sequential) LookAt(n int) int {
	for i, m := range s.Looks() {
		if m == n {
			return i + 1
		}
	}
	return 0
}

// spent is the share of total spent by the look at n pairs: the
// Lan-DeMets Pocock-type function total x ln(1 + (e-1) t) of the
// information fraction t = n/MaxPairs. Pocock's shape spends evenly, so an
// early look has enough of the chance to settle a clear regression; the
// O'Brien-Fleming shape keeps nearly all of it for the last look, and at 4
// pairs asked a 2x slowdown to scatter under 1 % to settle.
func (s Sequential) spent(total float64, n int) float64 {
	if n <= 0 {
		return 0
	}
	t := math.Min(float64(n)/float64(s.MaxPairs), 1)
	return total * math.Log1p((math.E-1)*t)
}

// lookShare is the share of total the look at the k-th entry of Looks may
// use: what the spending function adds from the look before. The shares
// sum to total, so by the union bound a metric fails an A/A gate at some
// look in at most total of gates, however the looks' figures correlate.
func (s Sequential) lookShare(total float64, look int) float64 {
	ns := s.Looks()
	if look < 1 || look > len(ns) {
		return 0
	}
	prev := 0
	if look > 1 {
		prev = ns[look-2]
	}
	return s.spent(total, ns[look-1]) - s.spent(total, prev)
}

// AlphaAt is the false-alarm chance the look may use.
func (s Sequential) AlphaAt(look int) float64 { return s.lookShare(s.Alpha, look) }

// AlphaLeft is the false-alarm chance left at the look: all of Alpha the
// looks before it did not spend. A gate that stops unsettled at a look
// (the wall budget leaves no room for the next) judges its verdict with
// it, since no later look will spend any; at the last look it is AlphaAt.
func (s Sequential) AlphaLeft(look int) float64 {
	ns := s.Looks()
	if look < 1 || look > len(ns) {
		return 0
	}
	if look == 1 {
		return s.Alpha
	}
	return s.Alpha - s.spent(s.Alpha, ns[look-2])
}

// BetaAt is the miss chance the look may use.
func (s Sequential) BetaAt(look int) float64 { return s.lookShare(s.Beta, look) }

// DecideLogs is the look's decision on one metric's pairs: ws are the
// pairs' log ratios read as Worse reads them (ln(head/base) when lower is
// better, its negative when higher is better); tolerance and detectable
// are the metric's Tolerance and Detectable, as fractions.
//
// A regression is settled when the fixed rule's conditions hold with this
// look's share of alpha: the mean over the tolerance and over the Student
// and (where 2^n patterns allow it) the sign-flip bounds, and most pairs
// over the tolerance. A pass is settled when the mean is within the
// tolerance, the upper (1 - BetaAt) Student bound on the mean is under
// WeakPassFactor times the tolerance (a change that large is ruled out),
// and Detectable is within that too. Anything else continues.
func (s Sequential) DecideLogs(ws []float64, tolerance, detectable float64, higherIsBetter bool, look int) Decision {
	n := len(ws)
	tolLog := worseToLog(tolerance, higherIsBetter)
	if n < 2 || look < 1 {
		return Continue
	}
	if seqFail(ws, tolLog, s.AlphaAt(look)) {
		return SettledRegression
	}
	mean, sd := meanSD(ws)
	catch := WeakPassFactor * tolerance
	upper := mean + tQuantileAt(n-1, s.BetaAt(look))*sd/math.Sqrt(float64(n))
	if mean <= tolLog && upper < worseToLog(catch, higherIsBetter) && detectable <= catch {
		return SettledPass
	}
	return Continue
}

// seqFail is simulatedFail with alpha in place of PairedAlpha.
func seqFail(ws []float64, tau, alpha float64) bool {
	over := 0
	for _, w := range ws {
		if w > tau {
			over++
		}
	}
	if 2*over <= len(ws) {
		return false
	}
	mean, sd := meanSD(ws)
	if !(mean > tau) || !(mean > tQuantileAt(len(ws)-1, alpha)*sd/math.Sqrt(float64(len(ws)))) {
		return false
	}
	return signFlipExceeds(ws, alpha)
}

// Decide is the look's decision on a verdict judged over the pairs so far
// (Judge with the fixed rule), and the reason in words for the report.
// The gate's regression is settled when a metric's is (and the verdict
// fails it); its pass when the verdict passes and every metric's pass is
// settled. A metric the paired rule does not judge on its pairs' ratios
// (pooled tails, the medians rule, a base of 0, a slowest-answer figure)
// never settles a regression early: only the verdict at the last look
// fails it; it settles its pass when it does not breach and its
// Detectable is within WeakPassFactor times its tolerance.
func (s Sequential) Decide(v Verdict, look int) (Decision, string) {
	if look < 1 {
		return Continue, ""
	}
	if v.Code == CannotJudge {
		return SettledCannotJudge, "the pairs so far cannot be judged, and more pairs would not undo it"
	}
	allPass := v.Code == Pass
	var open string
	for _, r := range v.Metrics {
		d := s.decideMetric(r, look)
		if d == SettledRegression && r.Fail {
			return SettledRegression, fmt.Sprintf("%s is worse than its tolerance at look %d's false-alarm chance (%s)", r.ID, look, pctFine(s.AlphaAt(look)))
		}
		if d != SettledPass && allPass && open == "" {
			open = r.ID
		}
	}
	if !allPass {
		return Continue, "the verdict so far fails, but not beyond this look's false-alarm chance"
	}
	if open != "" {
		return Continue, open + " is not settled"
	}
	return SettledPass, fmt.Sprintf("every metric is within its tolerance and catches a change of %dx its tolerance", WeakPassFactor)
}

func (s Sequential) decideMetric(r MetricResult, look int) Decision {
	if r.Tail != nil || r.Rule == RuleMedians || r.ZeroBase || r.Slowest {
		if !r.Breach && !r.Fail && r.Detectable <= WeakPassFactor*r.Tolerance {
			return SettledPass
		}
		return Continue
	}
	var ws []float64
	for _, q := range r.PairRatios {
		if q > 0 {
			w := math.Log(q)
			if r.HigherIsBetter {
				w = -w
			}
			ws = append(ws, w)
		}
	}
	return s.DecideLogs(ws, r.Tolerance, r.Detectable, r.HigherIsBetter, look)
}

// pctFine formats a small fraction with two significant figures: 0.0036
// -> "0.36 %".
func pctFine(f float64) string { return fmt.Sprintf("%.2g %%", f*100) }
