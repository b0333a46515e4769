package plan

import (
	"fmt"
	"math"
	"strconv"
)

// CheckLoad checks load settings that replace the plan's (a --rate or
// --duration flag) against the plan's limits: no group may reach its
// max_rate, and a fresh data source that refuses exhaustion must hold
// enough values for the arrivals that draw from it.
func (p *Plan) CheckLoad(l Load) error {
	ps := problems{plan: p.Path, list: p.check(l, "the load (--rate, --duration or [load])", p.Line("load", "rate"))}
	return ps.first()
}

// CheckAB is CheckLoad for A/B settings, per arm over all pairs.
func (p *Plan) CheckAB(ab AB) error {
	ps := problems{plan: p.Path, list: p.checkAB(ab)}
	return ps.first()
}

// share is the fraction of arrivals that go to group i.
func (p *Plan) share(i int, order string) float64 {
	if order != "weight" {
		return 1 / float64(len(p.Groups))
	}
	var total float64
	for _, g := range p.Groups {
		total += g.Weight
	}
	return p.Groups[i].Weight / total
}

func (p *Plan) check(l Load, what string, rateLine int) []problem {
	var out []problem
	warm, measured := l.Arrivals()
	if d := l.MeasuredDuration(); d < minMeasured {
		return append(out, problem{p.Path, p.Line("load", "duration"), fmt.Sprintf(
			"%s measures for %s, too short to measure anything (under %s); write a duration of 10s or more", what, d, minMeasured)})
	}
	if measured < 1 {
		return append(out, problem{p.Path, rateLine, fmt.Sprintf(
			"%s offers %s arrivals in its measured %s, fewer than one; raise the rate or the duration", what, num(measured), l.MeasuredDuration())})
	}
	out = append(out, p.checkRate(l.PeakRate(), l.Order, what, rateLine)...)
	out = append(out, p.checkDraws(warm, measured, 1, l.Order, fmt.Sprintf("%s (%s warm-up and %s measured at up to %s/s)", what, l.Warmup, l.MeasuredDuration(), num(l.PeakRate())))...)
	return out
}

func (p *Plan) checkAB(ab AB) []problem {
	rateLine := p.Line("ab", "rate")
	what := "[ab]"
	if !p.abWritten {
		// The plan has no [ab] table: the gate's defaults are what would
		// be sent, and the line to point at is the limit they reach.
		what = "the A/B gate's defaults (the plan has no [ab] table; write one to change them)"
		rateLine = 0
	}
	var out []problem
	// The gate's windows meet the rule [load]'s do (check): parsing
	// refuses a short measure, but --measure and --rate replace the
	// plan's after it, and a rate of 0.01/s passes parsing yet offers no
	// arrival to judge.
	if ab.Measure < minMeasured {
		return append(out, problem{p.Path, p.Line("ab", "measure"), fmt.Sprintf(
			"%s measures each pair for %s, too short to measure anything (under %s); write a measure of 10s or more", what, ab.Measure, minMeasured)})
	}
	if measured := ab.Rate * ab.Measure.Seconds(); measured < 1 {
		return append(out, problem{p.Path, p.Line("ab", "rate"), fmt.Sprintf(
			"%s offers each arm %s arrivals in a pair's measured %s, fewer than one; raise the rate or the measure", what, num(measured), ab.Measure)})
	}
	out = append(out, p.checkRate(ab.Rate, p.Load.Order, what, rateLine)...)
	out = append(out, p.checkDraws(ab.Rate*ab.Warmup.Seconds(), ab.Rate*ab.Measure.Seconds(), ab.Pairs, p.Load.Order,
		fmt.Sprintf("%s (%d pairs of %s warm-up and %s measured at %s/s to each arm)", what, ab.Pairs, ab.Warmup, ab.Measure, num(ab.Rate)))...)
	return out
}

// checkRate is FerroFED's gate's rule: a group whose share of the rate reaches its
// max_rate (an emergency-access limit, say) would trip the target's own
// limit, so the plan is refused rather than measured.
func (p *Plan) checkRate(rate float64, order, what string, rateLine int) []problem {
	var out []problem
	for i, g := range p.Groups {
		if g.MaxRate == 0 {
			continue
		}
		share := p.share(i, order)
		if got := rate * share; got >= g.MaxRate {
			limit := g.MaxRate / share
			fix := math.Ceil(limit) - 1
			if fix <= 0 {
				fix = limit / 2
			}
			line := rateLine
			if line == 0 {
				line = p.Line("group", strconv.Itoa(i), "max_rate")
			}
			out = append(out, problem{p.Path, line, fmt.Sprintf(
				"%s sends group %q %s arrivals/s (a %s share of %s/s), reaching its max_rate of %s (line %d); write a rate of %s or less",
				what, g.Name, num(got), shareText(share), num(rate), num(g.MaxRate), p.Line("group", strconv.Itoa(i), "max_rate"), num(fix))})
		}
	}
	return out
}

// checkDraws refuses settings that would exhaust a fresh data source whose
// plan says exhausted = "refuse"; warm and measured are the arrivals of
// each of `parts` runs (A/B pairs), each drawing from its own slice. Counts
// are bounds: a group sent in turn gets at most one arrival more than its
// share.
func (p *Plan) checkDraws(warm, measured float64, parts int, order, what string) []problem {
	var out []problem
	for _, d := range p.Data {
		if d.Draw != "fresh" || d.Exhausted != "refuse" {
			continue
		}
		var share float64
		var users int
		for i, g := range p.Groups {
			for _, n := range groupNames(g) {
				if n == d.Name {
					share += p.share(i, order)
					users++
					break
				}
			}
		}
		if users == 0 {
			continue
		}
		needWarm := math.Floor(math.Ceil(warm)*share) + float64(users)
		needMeas := math.Floor(math.Ceil(measured)*share) + float64(users)
		hasWarm, hasMeas := d.Values()
		needWarm *= float64(parts)
		needMeas *= float64(parts)
		if warm == 0 || hasWarm == 0 {
			// No warm-up, or one drawing from the measured values by choice.
			needWarm = 0
		}
		for _, c := range []struct {
			stage      string
			need       float64
			has        int
			otherStage int
		}{{"measured", needMeas, hasMeas, hasWarm}, {"warm-up", needWarm, hasWarm, hasMeas}} {
			if c.need <= float64(c.has) {
				continue
			}
			// The file must grow so that its part for this stage holds c.need.
			frac := 1 - d.WarmupFraction
			if c.stage == "warm-up" {
				frac = d.WarmupFraction
			}
			total := hasWarm + hasMeas
			want := int(math.Ceil(c.need / frac))
			out = append(out, problem{p.Path, d.FileLine, fmt.Sprintf(
				"the %s part of data %s holds %d values, but %s draws up to %s of them without replacement; add %d values to %s, or write draw = \"zipf\" or exhausted = \"reshuffle\" under [data.%s]",
				c.stage, d.Name, c.has, what, num(c.need), max(want-total, 1), d.File, d.Name)})
			break
		}
	}
	return out
}

func groupNames(g Group) []string {
	names := parseTemplate(g.Path).names()
	for _, h := range g.Header {
		names = append(names, parseTemplate(h.Value).names()...)
	}
	return append(names, parseTemplate(g.Body).names()...)
}

func num(f float64) string { return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64) }

func shareText(s float64) string {
	if inv := 1 / s; math.Abs(inv-math.Round(inv)) < 1e-9 {
		return "1/" + num(math.Round(inv))
	}
	return strconv.FormatFloat(s*100, 'f', 1, 64) + "%"
}
