package plan

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/perfgate/perfgate/internal/tomlpos"
)

func (ps *parser) load(raw map[string]any) {
	m, ok := ps.Table(raw, nil, "load", "[load] with rate = 20")
	if !ok {
		return
	}
	lp := []string{"load"}
	l := &ps.p.Load
	ps.Known(m, lp, "[load]", append([]string{"rate", "warmup", "duration", "stage", "order"}, hitRuleKeys...)...)
	ps.hitRule(m, lp, "[load]", &l.Hit)
	ps.hitStatusExpected(lp, l.Hit.HitStatus, "")
	if r, ok := ps.Num(m, lp, "rate", "rate = 20", 0, false, maxRate); ok {
		l.Rate = r
	}
	if d, ok := ps.dur(m, lp, "warmup", `warmup = "10s"`, false); ok {
		l.Warmup = d
	}
	if d, ok := ps.measured(m, lp, "duration", `duration = "60s"`); ok {
		l.Duration = d
	}
	if s, ok := ps.Str(m, lp, "order", `order = "turn"`); ok {
		if s != "turn" && s != "weight" {
			ps.At(lp, "order", "order %q is not a way of choosing groups; write order = %s", s, tomlpos.OneOf(s, []string{"turn", "weight"}, `"%s"`))
		}
		l.Order = s
	}
	stages := ps.Tables(m, lp, "stage", `[[load.stage]] with target = 50 and duration = "30s"`)
	for i, st := range stages {
		sp := []string{"load", "stage", strconv.Itoa(i)}
		ps.Known(st, sp, "[[load.stage]]", "target", "duration")
		var s Stage
		if t, ok := ps.Num(st, sp, "target", "target = 50", 0, false, maxRate); ok {
			s.Target = t
		}
		ps.Need(st, sp, "target", "this stage", "target rate", "target = 50", "[[load.stage]]")
		if d, ok := ps.dur(st, sp, "duration", `duration = "30s"`, true); ok {
			s.Duration = d
		}
		ps.Need(st, sp, "duration", "this stage", "duration", `duration = "30s"`, "[[load.stage]]")
		l.Stages = append(l.Stages, s)
	}
	if len(stages) > 0 {
		if _, present := m["duration"]; present {
			ps.At(lp, "duration", "with stages the measured duration is the sum of the stages; remove duration from [load]")
		}
		l.Duration = l.MeasuredDuration()
		if l.Duration > maxDuration {
			ps.At(lp, "stage", "the stages last %s, beyond the limit of 24h; shorten them", l.Duration)
		}
	} else if _, present := m["rate"]; present && l.Rate == 0 {
		ps.At(lp, "rate", "rate = 0 sends nothing; write rate = 20, or add [[load.stage]] tables to ramp from 0")
		return
	}
	if l.Rate == 0 && l.Warmup > 0 {
		key := "warmup"
		if _, written := m["warmup"]; !written {
			key = "rate"
		}
		ps.At(lp, key, "the warm-up (%s) runs at rate, which is 0, so it sends nothing; write rate = 20 or warmup = \"0s\"", l.Warmup)
	}
}

// hitStatusExpected refuses a hit_status that no group expects: only an
// expected answer is a hit, so its answers would count as failures and
// never as hits, and the ratio would say misses the target did not serve.
// The groups are read before [load] and [experiment]; only names the
// one group an experiment loads ("" for every group).
func (ps *parser) hitStatusExpected(lp []string, statuses []int, only string) {
	var groups []Group
	for _, g := range ps.p.Groups {
		if only == "" || g.Name == only {
			groups = append(groups, g)
		}
	}
	if len(statuses) == 0 || len(groups) == 0 {
		return
	}
	for _, g := range groups {
		if len(g.Expect) == 0 {
			return // refused at the group already
		}
	}
	for _, c := range statuses {
		expected := false
		for _, g := range groups {
			expected = expected || slices.Contains(g.Expect, c)
		}
		if !expected {
			who, fix := "no group expects", "the groups it answers"
			if only != "" {
				who, fix = fmt.Sprintf("group %q does not expect", only), "group "+strconv.Quote(only)
			}
			ps.At(lp, "hit_status", "hit_status lists %d, which %s: only an expected answer is a hit, so a %d would count as a failure, never as a hit; add %d to the expect of %s, or remove it from hit_status", c, who, c, c, fix)
			return
		}
	}
}

// weights refuses a weight that would be ignored: groups go in turn unless
// [load] says order = "weight".
func (ps *parser) weights() {
	if ps.p.Load.Order == "weight" {
		return
	}
	for i, g := range ps.p.Groups {
		if g.Weight != 1 {
			ps.At([]string{"group", strconv.Itoa(i)}, "weight", "group %q has a weight but groups are sent in turn; write order = \"weight\" under [load], or remove weight", g.Name)
		}
	}
}
