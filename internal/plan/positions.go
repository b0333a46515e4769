package plan

import (
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// positions maps a plan's key paths to their lines (internal/tomlpos reads
// them; the plan's refusals name them).
type positions struct {
	*tomlpos.Positions
}

// line returns the line of path, or of its nearest written ancestor, or 1.
func (p *positions) line(path []string) int {
	if p == nil {
		return 1
	}
	return p.Line(path...)
}

// MetricLine is the plan line a metric's judgement comes from, for the
// verdict service's annotations: the [tolerance] key that set the
// tolerance it was judged by (the metric's own key before its class's,
// the judge's order), else the [[group]] header of a latency metric's
// group; 0 when the plan writes nothing about it (a run-wide metric under
// the default tolerance), so the caller picks its own fallback.
func (p *Plan) MetricLine(id string, class judge.Class) int {
	for _, k := range []string{id, string(class)} {
		if _, set := p.Tolerance[k]; !set || p.pos == nil {
			continue
		}
		if l, ok := p.pos.Lookup("tolerance", k); ok {
			return l
		}
	}
	if _, group, ok := judge.SplitLatencyID(id); ok {
		for _, g := range p.Groups {
			if g.Name == group && g.Line > 0 {
				return g.Line
			}
		}
	}
	return 0
}

// MetricLines maps each metric ID to its MetricLine, leaving out the
// metrics the plan writes nothing about.
func (p *Plan) MetricLines(metrics []judge.Metric) map[string]int {
	out := map[string]int{}
	for _, m := range metrics {
		if l := p.MetricLine(m.ID, m.Class); l > 0 {
			out[m.ID] = l
		}
	}
	return out
}
