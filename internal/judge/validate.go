package judge

import (
	"fmt"
	"math"
	"sort"
)

// validate lists what makes an input impossible to judge: the report or the
// run that filled it is broken, and the judge says where rather than guess.
func validate(in Input) []string {
	var bad []string
	if len(in.Metrics) == 0 {
		bad = append(bad, "the input names no metric")
	}
	if len(in.Base) == 0 || len(in.Head) == 0 {
		bad = append(bad, fmt.Sprintf("the input holds %d base and %d head phases: at least one pair is needed", len(in.Base), len(in.Head)))
	}
	if len(in.Base) != len(in.Head) {
		bad = append(bad, fmt.Sprintf("the input holds %d base and %d head phases: each pair needs one of each", len(in.Base), len(in.Head)))
	}
	if in.Rule != "" && in.Rule != RulePaired && in.Rule != RuleMedians {
		bad = append(bad, fmt.Sprintf("rule %q is no rule of the judge: use %q or %q", in.Rule, RulePaired, RuleMedians))
	}
	if in.Alpha != 0 && !(in.Alpha > 0 && in.Alpha <= PairedAlpha) {
		// An adaptive gate's last look only ever has less than PairedAlpha;
		// more would be a report loosening its own gate.
		bad = append(bad, fmt.Sprintf("alpha is %v: an adaptive gate's false-alarm chance is above 0 and at most %v (absent: %v)", in.Alpha, PairedAlpha, PairedAlpha))
	}
	for _, t := range in.Thresholds {
		for _, x := range []float64{t.BelowMS, t.Min, t.Value} {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				bad = append(bad, fmt.Sprintf("the threshold of plan line %d has a figure of %v: figures are finite and 0 or more", t.Line, x))
				break
			}
		}
	}
	ids := map[string]bool{}
	classes := map[Class]bool{}
	for _, m := range in.Metrics {
		if _, ok := DefaultTolerance[m.Class]; !ok {
			bad = append(bad, fmt.Sprintf("metric %q has class %q: use one of %s", m.ID, m.Class, classNames()))
		}
		if ids[m.ID] {
			bad = append(bad, fmt.Sprintf("metric %q is named twice", m.ID))
		}
		ids[m.ID] = true
		classes[m.Class] = true
	}
	keys := make([]string, 0, len(in.Tolerance))
	for k := range in.Tolerance {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := in.Tolerance[k]
		if !ids[k] && !classes[Class(k)] {
			if _, isClass := DefaultTolerance[Class(k)]; !isClass {
				bad = append(bad, fmt.Sprintf("tolerance %q names no metric and no class of this run", k))
			}
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			bad = append(bad, fmt.Sprintf("tolerance %q is %v: give a fraction of 0 or more", k, v))
		}
	}
	for i := range in.Base {
		if i >= len(in.Head) {
			break
		}
		if in.Base[i].Pair != in.Head[i].Pair {
			bad = append(bad, fmt.Sprintf("phase %d is pair %d in the base and pair %d in the head", i+1, in.Base[i].Pair, in.Head[i].Pair))
		}
	}
	for _, arm := range []struct {
		name   string
		phases []Phase
	}{{"base", in.Base}, {"head", in.Head}} {
		for _, p := range arm.phases {
			for _, m := range in.Metrics {
				v, ok := p.Values[m.ID]
				switch {
				case !ok:
					bad = append(bad, fmt.Sprintf("%s pair %d has no value for metric %q", arm.name, p.Pair, m.ID))
				case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
					bad = append(bad, fmt.Sprintf("%s pair %d has %v for metric %q: values are finite and 0 or more", arm.name, p.Pair, v, m.ID))
				}
			}
			if p.Schedule.Intended == 0 || !(p.Schedule.Offered > 0) {
				bad = append(bad, fmt.Sprintf("%s pair %d had no arrivals due (offered %v/s, %d intended)", arm.name, p.Pair, p.Schedule.Offered, p.Schedule.Intended))
			}
			for _, g := range p.Groups {
				for _, x := range []float64{g.P50, g.P99, g.Halves[0].P50, g.Halves[0].P90, g.Halves[1].P50, g.Halves[1].P90} {
					if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
						bad = append(bad, fmt.Sprintf("%s pair %d group %q has a latency of %v: latencies are finite and 0 or more", arm.name, p.Pair, g.Name, x))
						break
					}
				}
			}
		}
	}
	if id := in.Idle; id != nil {
		for _, x := range []float64{id.Seconds, id.CPU, id.CPULimit, id.TxPerSec, id.TxLimit} {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				bad = append(bad, fmt.Sprintf("the idle phase has a figure of %v: figures are finite and 0 or more", x))
				break
			}
		}
	}
	return bad
}
