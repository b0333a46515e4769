package judge

import (
	"fmt"
	"math"
	"strings"
)

// DetectPower is the chance at which MetricResult.Detectable is stated: a
// change that large is caught in at least this share of gates like the one
// judged.
const DetectPower = 0.95

// detectable is the smallest change, read as Worse reads it, that the
// paired rule fails in at least DetectPower of gates with n pairs whose
// log ratios scatter sd, as this gate's did. It answers what a pass is
// worth: a 5 % tolerance over pairs that scatter 15 % does not catch a
// 10 % slowdown, and the user should hear so rather than trust the pass.
//
// The pairs' log ratios are modelled as normal around the change with the
// observed sd, and the figure is found by simulating gates (detectUnits):
// the rule's three conditions (the mean over the tolerance and over the
// Student and sign-flip bounds, most pairs over the tolerance) interact
// too much for a formula; a formula that took them one by one claimed
// 95 % where the rule caught 88 %. It is an estimate from this gate's own
// scatter, as noisy as that is over a few pairs; 0 when there is nothing
// to estimate (fewer than 2 pairs, a tolerance nothing can exceed).
func detectable(tolerance, sd float64, n int, higherIsBetter bool) float64 {
	if n < 2 || !(sd >= 0) || !(tolerance >= 0) {
		return 0
	}
	tolLog := worseToLog(tolerance, higherIsBetter)
	if math.IsInf(tolLog, 1) {
		return 0
	}
	if sd == 0 {
		return tolerance // every pair is the mean: anything past the tolerance fails
	}
	u := detectUnits(n, tolLog/sd)
	if math.IsInf(u, 1) {
		return 0
	}
	return logToWorse(sd*u, higherIsBetter)
}

// worseToLog turns a Worse figure into the log ratio the paired rule
// compares: ln(1+w) when lower is better, -ln(1-w) when higher is better.
func worseToLog(w float64, higherIsBetter bool) float64 {
	if higherIsBetter {
		if w >= 1 {
			return math.Inf(1)
		}
		return -math.Log1p(-w)
	}
	return math.Log1p(w)
}

func logToWorse(l float64, higherIsBetter bool) float64 {
	if higherIsBetter {
		return -math.Expm1(-l)
	}
	return math.Expm1(l)
}

// CatchesCap is the largest catches figure written as a number: past ten
// times the base (1,000 %) a pass says nothing about any change a team
// cares for. A 2-pair gate's Student factor of 31.8 once put 3 x 10^21 %
// in a summary's note, which reads as a defect, not as "blind".
const CatchesCap = 10.0

// CatchesText is a catches figure as the summary and the notes write it:
// its percentage, or "over 1,000 %" past CatchesCap.
func CatchesText(f float64) string {
	if f > CatchesCap {
		return "over 1,000 %" // CatchesCap; TestCatchesText holds the two together
	}
	return pct(f)
}

// detectableNote is the summary's one note on the metrics that passed
// although their gate could not catch a change of twice their tolerance:
// their pass says less than the tolerance suggests. Empty when none.
func detectableNote(rs []MetricResult) string {
	var weak []string
	for _, r := range rs {
		if r.Fail || r.Rule == RuleMedians || r.ZeroBase || !(r.Tolerance > 0) || !(r.Detectable > WeakPassFactor*r.Tolerance) {
			continue
		}
		weak = append(weak, fmt.Sprintf("%s %s (tolerance %s)", r.ID, CatchesText(r.Detectable), pct(r.Tolerance)))
	}
	if len(weak) == 0 {
		return ""
	}
	return fmt.Sprintf("these catch a change only from about this size on (in %s of runs, at their pairs' scatter): %s; more answers a phase (rate x measured window) or more pairs narrow it",
		pct(DetectPower), strings.Join(weak, ", "))
}
