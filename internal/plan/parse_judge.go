package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// judge reads [judge]: which rule judges the metrics.
func (ps *parser) judge(raw map[string]any) {
	m, ok := ps.Table(raw, nil, "judge", `[judge] with rule = "paired"`)
	if !ok {
		return
	}
	jp := []string{"judge"}
	ps.Known(m, jp, "[judge]", "rule")
	if r, ok := ps.Str(m, jp, "rule", `rule = "paired"`); ok {
		r, renamed := judge.CanonicalRule(r)
		if renamed {
			ps.p.Warnings = append(ps.p.Warnings, fmt.Sprintf("%s:%d: rule = %q is the former name of the medians rule (FerroFED's gate's); it judges the same, but write rule = %q (docs/judge.md)", ps.file, ps.Line(tomlpos.Join(jp, "rule")), judge.RuleMediansFormerName, judge.RuleMedians))
		}
		if !slices.Contains(judge.Rules, r) {
			ps.At(jp, "rule", "rule %q is no rule of the judge; write rule = %s (docs/judge.md)", r, tomlpos.OneOf(r, judge.Rules, `"%s"`))
			return
		}
		ps.p.Rule = r
	}
}

func (ps *parser) tolerance(raw map[string]any) {
	m, ok := ps.Table(raw, nil, "tolerance", "[tolerance] with latency = 25")
	if !ok {
		return
	}
	tp := []string{"tolerance"}
	var groupNames []string
	for _, g := range ps.p.Groups {
		groupNames = append(groupNames, g.Name)
	}
	for _, k := range ps.SortedKeys(m, tp) {
		if !ps.toleranceKey(k, groupNames, tp) {
			continue
		}
		if v, ok := ps.Num(m, tp, k, fmt.Sprintf("%q = 25 (percent)", k), 0, false, 1000); ok {
			ps.p.Tolerance[k] = v / 100
		}
	}
}

// toleranceKey checks a [tolerance] key against the judge's vocabulary:
// a class, a metric without a group, or a percentile of one of the plan's
// groups.
func (ps *parser) toleranceKey(k string, groups []string, tp []string) bool {
	if judge.CheckToleranceKey(k, groups) == "" {
		return true
	}
	if q, g, ok := strings.Cut(k, "."); ok {
		for _, p := range judge.Percentiles {
			if q == p.Name {
				if len(groups) > 0 {
					ps.At(tp, k, "tolerance %q names no request group; write %q", k, q+"."+tomlpos.OneOf(g, groups, "%s"))
				}
				return false
			}
		}
	}
	var names []string
	for _, p := range judge.Percentiles {
		names = append(names, p.Name)
	}
	ps.At(tp, k, "unknown tolerance %q; write %s, or %s.<group>", k, tomlpos.OneOf(k, judge.ToleranceKeys(), "%s"), strings.Join(names, "/"))
	return false
}
