package experiment

import (
	"fmt"
	"math"
)

// The first resource to run out is read stage to stage up the load, on
// each gauge's mean over a stage's window: a gauge that merely follows the
// offered load (the requests in flight of a closed loop rise with the
// clients) has not run out of anything. From one stage to the next, while
// the load rose:
//
//   - saturated: the gauge had followed the load (it rose by at least half
//     the load's rise into the earlier stage) and now rose by less than half
//     of it: it holds at a ceiling, like a pool whose every worker is busy;
//   - grew: throughput rose by less than half the load's rise (flat, as the
//     knee reads it) while the gauge rose more than twice as fast as the
//     load and by more than a tenth: a queue or a wait filling up.
//
// The earliest such step wins; within it a saturated gauge comes before a
// grown one (the pool ran out, the queue is what that caused), a larger
// growth before a smaller, then the order the gauges were scraped in.
const (
	followShare = kneeGain // a gauge rising by this share of the load's rise follows it
	growFactor  = 2.0      // a gauge rising this many times faster than the load grew
)

// stageMeans is a gauge's mean over each stage's window; ok is false for a
// stage with no sample.
func stageMeans(g *Gauge, stages []Stage) (mean []float64, ok []bool) {
	mean, ok = make([]float64, len(stages)), make([]bool, len(stages))
	for i, st := range stages {
		var n, sum float64
		for _, s := range g.Samples {
			if s.AtS >= st.StartS && s.AtS <= st.StartS+st.LengthS {
				n, sum = n+1, sum+s.Value
			}
		}
		if n > 0 {
			mean[i], ok[i] = sum/n, true
		}
	}
	return mean, ok
}

type ranOutCandidate struct {
	gauge   int
	step    int // the stage that showed it
	how     string
	growth  float64
	a, b, p float64
}

func ranOut(r *Report) {
	var best *ranOutCandidate
	better := func(c ranOutCandidate) bool {
		switch {
		case best == nil || c.step < best.step:
			return true
		case c.step > best.step:
			return false
		case c.how != best.how:
			return c.how == "saturated"
		}
		return c.growth > best.growth
	}
	for gi := range r.Gauges {
		mean, ok := stageMeans(&r.Gauges[gi], r.Stages)
		for i := 0; i+1 < len(r.Stages); i++ {
			if best != nil && i+1 > best.step {
				break
			}
			loadRise := rise(r.Stages[i+1].Level, r.Stages[i].Level)
			if loadRise <= 0 || !ok[i] || !ok[i+1] {
				continue
			}
			a, b := mean[i], mean[i+1]
			gRise := rise(b, a)
			if i > 0 && ok[i-1] {
				prevRise := rise(r.Stages[i].Level, r.Stages[i-1].Level)
				p := mean[i-1]
				if prevRise > 0 && a > 0 && a-p > 1e-9 && rise(a, p) >= followShare*prevRise && gRise < followShare*loadRise {
					if c := (ranOutCandidate{gauge: gi, step: i + 1, how: "saturated", a: a, b: b, p: p}); better(c) {
						best = &c
					}
					break
				}
			}
			tputRise := rise(r.Stages[i+1].Derived.Throughput, r.Stages[i].Derived.Throughput)
			if tputRise < kneeGain*loadRise && gRise > growFactor*loadRise && b-a > math.Max(0.1*math.Abs(a), 1e-9) {
				if c := (ranOutCandidate{gauge: gi, step: i + 1, how: "grew", growth: gRise, a: a, b: b}); better(c) {
					best = &c
				}
				break
			}
		}
	}
	if best == nil {
		if len(r.Gauges) > 0 && len(r.Stages) > 1 {
			r.Notes = append(r.Notes, "no gauge ran out: none stopped following the load or grew while throughput stayed flat")
		}
		return
	}
	g := &r.Gauges[best.gauge]
	from, to := r.Stages[best.step-1], r.Stages[best.step]
	m := &RanOut{Gauge: g.Name, Endpoint: g.Endpoint, How: best.how, From: from.Name, Before: best.a, After: best.b, Rest: g.Rest}
	// When: a pool ran out when it first reached its ceiling (from the
	// stage it followed the load into); a queue when it first left rest.
	m.AtS = to.StartS
	if best.how == "saturated" {
		for _, s := range g.Samples {
			if s.AtS >= from.StartS && s.Value >= 0.95*best.b {
				m.AtS = s.AtS
				break
			}
		}
	} else if g.MovedAtS != nil && *g.MovedAtS <= to.StartS+to.LengthS {
		m.AtS = *g.MovedAtS
	}
	for _, s := range g.Samples {
		if s.AtS == m.AtS {
			m.Value = s.Value
		}
	}
	si := stageAt(r.Stages, m.AtS)
	m.Stage, m.Level = r.Stages[si].Name, r.Stages[si].Level
	line, what := r.Settings.ObjectiveMS, "the objective"
	if line == 0 {
		line, what = 1.5*r.Stages[0].Derived.LatencyMS, "1.5 times the first stage's"
	}
	// p95 crossed the line in its first second over it from the first
	// stage that is over it as a whole (the stage table's "over the
	// objective"): one slow second inside a stage that met the line is a
	// pause of the machine, not the crossing, and on a crowded one it put
	// the crossing at 0 s, before any resource could run out.
	if over := stageOver(r.Stages, line); over >= 0 && line > 0 {
		for _, p := range r.Series {
			if p.AtS >= r.Stages[over].StartS && p.P95MS >= line {
				c := p.AtS
				m.LatencyAtS = &c
				break
			}
		}
	}
	if best.how == "saturated" {
		m.Text = fmt.Sprintf("%s saturated: it followed the load from %.3g (%s) to %.3g (%s), then held at %.3g while the load rose from %g to %g (%s); it reached %.3g at %.0f s",
			m.Gauge, best.p, r.Stages[best.step-2].Name, best.a, from.Name, best.b, from.Level, to.Level, to.Name, m.Value, m.AtS)
	} else {
		m.Text = fmt.Sprintf("%s grew from %.3g to %.3g while the load rose from %g to %g and throughput stayed flat (%.1f to %.1f/s, %s to %s); it left its resting value %.3g at %.0f s",
			m.Gauge, best.a, best.b, from.Level, to.Level, from.Derived.Throughput, to.Derived.Throughput, from.Name, to.Name, m.Rest, m.AtS)
	}
	if m.LatencyAtS != nil {
		lead := *m.LatencyAtS - m.AtS
		m.LeadS = &lead
		if lead >= 0 {
			m.Text += fmt.Sprintf(", %.0f s before p95 crossed %s (%.1f ms)", lead, what, line)
		} else {
			m.Text += fmt.Sprintf(", %.0f s after p95 crossed %s (%.1f ms)", -lead, what, line)
		}
	} else {
		m.Text += fmt.Sprintf("; p95 never crossed %s (%.1f ms)", what, line)
	}
	r.RanOut = m
}

// stageOver is the first stage whose latency is over line: the one the
// objective flags, or -1.
func stageOver(stages []Stage, line float64) int {
	for i, s := range stages {
		if s.Derived.Objective == "misses" || s.Derived.LatencyMS >= line {
			return i
		}
	}
	return -1
}
