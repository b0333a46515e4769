package plan

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/judge"
)

// Change is one judging setting the head wrote differently from the base
// (the judge owns the word: judge.SettingChange).
type Change = judge.SettingChange

// absent is how a change names a setting one tree does not write.
const absent = "absent"

// JudgingSettings is the plan a gate judges a pull request with: the
// head's plan (its groups, load, variables and data say what is sent, as
// each arm builds and boots from its own tree) with the judging settings
// taken so that the head cannot loosen its own gate. Per setting the
// stricter of base and head is judged: the lower tolerance (each tree's
// written value, or the judge's default under its own rule), every
// threshold of either tree (one written by both is judged at the stricter
// limit), the lower idle limits and counter limits, the base's rule, and
// the base's pairs, measure and idle windows as a floor the head may raise
// but not lower, and the stricter comparison of the arms' answers. A
// setting about a group only the head has is the head's; one about a
// group the head no longer sends cannot be judged and is left out (and
// listed). Changes lists every setting the head wrote differently,
// with both values and the one judged, in a fixed order. A nil base (the
// base tree has no plan) judges with the head's settings and no changes.
func JudgingSettings(base, head *Plan) (Plan, []Change) {
	out := *head
	if base == nil {
		return out, nil
	}
	var changes []Change
	add := func(setting, b, h, judged string) {
		changes = append(changes, Change{Setting: setting, Base: b, Head: h, Judged: judged})
	}
	groups := map[string]bool{}
	for _, g := range head.Groups {
		groups[g.Name] = true
	}

	// The rule: neither is stricter, so the base's.
	out.Rule = base.Rule
	if base.Rule != head.Rule {
		add("[judge] rule", base.Rule, head.Rule, base.Rule)
	}
	out.Tolerance, changes = judgingTolerances(base, head, groups, changes)
	out.AB, changes = judgingAB(base.AB, head.AB, changes)
	out.Thresholds, changes = judgingThresholds(base.Thresholds, head.Thresholds, groups, changes)
	if out.ServerTiming == "" && base.ServerTiming != "" && slices.ContainsFunc(out.Thresholds, func(t Threshold) bool { return t.Side == "server" }) {
		// A server-side threshold of the base's needs the header it
		// reads; the head dropping the header must not void the limit.
		out.ServerTiming = base.ServerTiming
		add("server_timing", base.ServerTiming, absent, base.ServerTiming)
	}
	out.Counters, changes = judgingCounters(base.Counters, head.Counters, groups, changes)
	out.StoreWrites, changes = judgingStoreWrites(base.StoreWrites, head.StoreWrites, groups, changes)
	return out, changes
}

// judgingTolerances takes, for every key either plan writes, the lower of
// the two trees' tolerances for it, each read as the judge would read that
// tree alone (judge.Judge: a metric's own key, else its class, else the
// default under the tree's rule). A class neither writes is set too when
// the two rules' defaults differ, so the judged rule's default cannot be
// the looser one.
func judgingTolerances(base, head *Plan, groups map[string]bool, changes []Change) (map[string]float64, []Change) {
	keys := map[string]bool{}
	for _, p := range []*Plan{base, head} {
		for k := range p.Tolerance {
			if _, g, ok := judge.SplitLatencyID(k); ok && !groups[g] {
				continue // a group the head does not send has no metric
			}
			keys[k] = true
		}
	}
	for _, c := range judge.Classes {
		if judge.DefaultToleranceOf(base.Rule, c) != judge.DefaultToleranceOf(head.Rule, c) {
			keys[string(c)] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	baseGroups := map[string]bool{}
	for _, g := range base.Groups {
		baseGroups[g.Name] = true
	}
	onlyHead := func(k string) bool {
		_, g, ok := judge.SplitLatencyID(k)
		return ok && !baseGroups[g]
	}
	out := map[string]float64{}
	for _, k := range sorted {
		if onlyHead(k) {
			continue // set below, from the head
		}
		b, bs := toleranceOf(base, k)
		h, hs := toleranceOf(head, k)
		out[k] = min(b, h)
		if b != h || bs != hs {
			add := Change{Setting: "[tolerance] " + tomlKey(k), Base: bs, Head: hs, Judged: bs}
			if h < b {
				add.Judged = hs
			}
			changes = append(changes, add)
		}
	}
	// A group only the head sends has no base to take settings from: its
	// metrics keep the tolerances the head alone gives them.
	judged := &Plan{Tolerance: out, Rule: base.Rule}
	for _, g := range head.Groups {
		if baseGroups[g.Name] {
			continue
		}
		for _, q := range judge.Percentiles {
			k := q.Name + "." + g.Name
			h, _ := toleranceOf(head, k)
			if j, _ := toleranceOf(judged, k); j != h {
				out[k] = h
			}
		}
	}
	return out, changes
}

// toleranceOf is the tolerance p alone judges key with, and how to say it
// ("10 %", "5 % (the default)").
func toleranceOf(p *Plan, key string) (float64, string) {
	if t, ok := p.Tolerance[key]; ok {
		return t, percent(t)
	}
	class := judge.Class(key)
	if _, _, ok := judge.SplitLatencyID(key); ok {
		class = judge.Latency
	} else {
		for _, m := range judge.WholeMetrics {
			if m.ID == key {
				class = m.Class
			}
		}
	}
	if t, ok := p.Tolerance[string(class)]; ok && string(class) != key {
		return t, percent(t) + " (its class " + string(class) + ")"
	}
	t := judge.DefaultToleranceOf(p.Rule, class)
	return t, percent(t) + " (the default)"
}

// judgingAB floors the base's pairs and windows (the head may measure
// more, never less), takes the lower idle limits and the stricter answer
// comparison; rate and warm-up shape the load both arms take alike, so
// they stay the head's.
func judgingAB(base, head AB, changes []Change) (AB, []Change) {
	out := head
	floor := func(key string, b, h *time.Duration) {
		if *b == *h {
			return
		}
		judged := max(*b, *h)
		changes = append(changes, Change{Setting: "[ab] " + key, Base: b.String(), Head: h.String(), Judged: judged.String()})
		*h = judged
	}
	if base.Pairs != head.Pairs || base.Auto != head.Auto || base.MinPairs != head.MinPairs {
		out = judgingPairs(base, out)
		changes = append(changes, Change{Setting: "[ab] pairs", Base: pairsText(base), Head: pairsText(head), Judged: pairsText(out)})
	}
	floor("measure", &base.Measure, &out.Measure)
	floor("idle", &base.Idle, &out.Idle)
	lower := func(key, unit string, scale, b float64, h *float64) {
		if b == *h {
			return
		}
		judged := min(b, *h)
		changes = append(changes, Change{Setting: "[ab] " + key, Base: fnum(b*scale) + unit, Head: fnum(*h*scale) + unit, Judged: fnum(judged*scale) + unit})
		*h = judged
	}
	lower("idle_cpu", " %", 100, base.IdleCPU, &out.IdleCPU)
	lower("idle_tx_per_sec", "/s", 1, base.IdleTxPerSec, &out.IdleTxPerSec)
	out.Answers, out.Ignore, changes = judgingAnswers(base, head, changes)
	return out, changes
}

// answersStrictness orders the answer comparison's modes: a difference
// that fails the gate, then one that is a note, then none compared.
var answersStrictness = map[string]int{"": 0, AnswersWarn: 1, AnswersSame: 2}

// judgingAnswers compares the arms' answers at the stricter mode. A field
// is ignored only if every plan compared at that mode ignores it: the
// stricter plan's list, or, when both write the mode, the fields both
// ignore, so a head that changed a field cannot add it to ignore.
func judgingAnswers(base, head AB, changes []Change) (string, []string, []Change) {
	mode, ignore := head.Answers, head.Ignore
	switch b, h := answersStrictness[base.Answers], answersStrictness[head.Answers]; {
	case b > h:
		mode, ignore = base.Answers, base.Ignore
	case b == h:
		ignore = nil
		for _, f := range base.Ignore {
			if slices.Contains(head.Ignore, f) {
				ignore = append(ignore, f)
			}
		}
	}
	if base.Answers != head.Answers {
		changes = append(changes, Change{Setting: "[ab] answers", Base: orAbsent(base.Answers), Head: orAbsent(head.Answers), Judged: orAbsent(mode)})
	}
	// The fields are compared as written (the parser keeps them so): a
	// new order is no change.
	if !sameFields(base.Ignore, head.Ignore) {
		changes = append(changes, Change{Setting: "[ab] ignore", Base: fieldsText(base.Ignore), Head: fieldsText(head.Ignore), Judged: fieldsText(ignore)})
	}
	return mode, ignore, changes
}

// sameFields says whether two ignore lists name the same fields.
func sameFields(a, b []string) bool {
	return !slices.ContainsFunc(a, func(f string) bool { return !slices.Contains(b, f) }) &&
		!slices.ContainsFunc(b, func(f string) bool { return !slices.Contains(a, f) })
}

// orAbsent says a setting's value, or that the plan does not write it.
func orAbsent(s string) string {
	if s == "" {
		return absent
	}
	return s
}

// fieldsText says an ignore list as the verdict does ("id, created_at").
func fieldsText(fields []string) string {
	if len(fields) == 0 {
		return absent
	}
	return strings.Join(fields, ", ")
}

// thresholdKey is what makes two trees' thresholds the same limit: its
// group, metric and side, and for "under" the latency it counts under.
func thresholdKey(t Threshold) string {
	k := t.Group + "\x00" + t.Metric + "\x00" + t.Side
	if t.Metric == judge.ThresholdUnder {
		k += "\x00" + t.Below.String()
	}
	return k
}

// judgingThresholds judges every threshold of either tree: the head's in
// its order, one the base writes too at the stricter limit, then those
// only the base writes (on the groups the head still sends).
func judgingThresholds(base, head []Threshold, groups map[string]bool, changes []Change) ([]Threshold, []Change) {
	byKey := map[string]Threshold{}
	for _, t := range base {
		byKey[thresholdKey(t)] = t
	}
	var out []Threshold
	seen := map[string]bool{}
	for _, h := range head {
		k := thresholdKey(h)
		seen[k] = true
		b, both := byKey[k]
		if !both {
			out = append(out, h)
			continue
		}
		j := h
		if b.Below > 0 && h.Below > 0 {
			j.Below = min(b.Below, h.Below)
		}
		j.Min = max(b.Min, h.Min)
		if b.Below != h.Below || b.Min != h.Min {
			changes = append(changes, Change{Setting: thresholdName(h), Base: thresholdLimit(b), Head: thresholdLimit(h), Judged: thresholdLimit(j)})
		}
		out = append(out, j)
	}
	for _, b := range base {
		k := thresholdKey(b)
		if seen[k] {
			continue
		}
		if b.Group != "" && !groups[b.Group] {
			changes = append(changes, Change{Setting: thresholdName(b), Base: thresholdLimit(b), Head: absent + " (the head sends no group " + b.Group + ")", Judged: absent})
			continue
		}
		changes = append(changes, Change{Setting: thresholdName(b), Base: thresholdLimit(b), Head: absent, Judged: thresholdLimit(b)})
		out = append(out, b)
	}
	return out, changes
}

// thresholdName names a threshold as its table reads.
func thresholdName(t Threshold) string {
	s := "[[threshold]] " + t.Metric
	if t.Metric == judge.ThresholdUnder {
		s += " " + t.Below.String()
	}
	if t.Group != "" {
		s += " of group " + t.Group
	} else {
		s += " of all groups"
	}
	if t.Side == "server" {
		s += " (server side)"
	}
	return s
}

// thresholdLimit says a threshold's limit.
func thresholdLimit(t Threshold) string {
	switch t.Metric {
	case judge.ThresholdSuccess, judge.ThresholdUnder:
		return "min " + percent(t.Min)
	}
	return "below " + t.Below.String()
}

// judgingCounters judges every counter of either tree by name: the head's
// reading (its URL or query is the head's to know), at the lower limit
// and the larger number of requests; a counter only the base has is kept
// while the head still sends its group.
func judgingCounters(base, head []Counter, groups map[string]bool, changes []Change) ([]Counter, []Change) {
	byName := map[string]Counter{}
	for _, c := range base {
		byName[c.Name] = c
	}
	var out []Counter
	seen := map[string]bool{}
	for _, h := range head {
		seen[h.Name] = true
		b, both := byName[h.Name]
		if !both {
			out = append(out, h)
			continue
		}
		j := h
		j.MaxPerRequest = min(b.MaxPerRequest, h.MaxPerRequest)
		j.Requests = max(b.Requests, h.Requests)
		if b.MaxPerRequest != h.MaxPerRequest {
			changes = append(changes, Change{Setting: "[[counter]] " + h.Name + " max_per_request", Base: percent(b.MaxPerRequest), Head: percent(h.MaxPerRequest), Judged: percent(j.MaxPerRequest)})
		}
		if b.Requests != h.Requests {
			changes = append(changes, Change{Setting: "[[counter]] " + h.Name + " requests", Base: fmt.Sprint(b.Requests), Head: fmt.Sprint(h.Requests), Judged: fmt.Sprint(j.Requests)})
		}
		out = append(out, j)
	}
	for _, b := range base {
		if seen[b.Name] {
			continue
		}
		setting := "[[counter]] " + b.Name
		if !groups[b.Group] {
			changes = append(changes, Change{Setting: setting, Base: "max_per_request " + percent(b.MaxPerRequest), Head: absent + " (the head sends no group " + b.Group + ")", Judged: absent})
			continue
		}
		changes = append(changes, Change{Setting: setting, Base: "max_per_request " + percent(b.MaxPerRequest), Head: absent, Judged: "max_per_request " + percent(b.MaxPerRequest)})
		out = append(out, b)
	}
	return out, changes
}

// judgingStoreWrites judges every [[store_writes]] of either tree.
func judgingStoreWrites(base, head []StoreWrites, groups map[string]bool, changes []Change) ([]StoreWrites, []Change) {
	out := append([]StoreWrites(nil), head...)
	for _, b := range base {
		if slices.ContainsFunc(head, func(h StoreWrites) bool { return h.Group == b.Group && h.Table == b.Table }) {
			continue
		}
		setting := "[[store_writes]] " + b.Table + " of group " + b.Group
		if !groups[b.Group] {
			changes = append(changes, Change{Setting: setting, Base: "written", Head: absent + " (the head sends no group " + b.Group + ")", Judged: absent})
			continue
		}
		changes = append(changes, Change{Setting: setting, Base: "written", Head: absent, Judged: "written"})
		out = append(out, b)
	}
	return out, changes
}

// JudgingControls are the controls a gate judges with, from the base's and
// the head's gate files: a control kind the base declares is the base's
// (the head cannot remove or weaken the proof that its gate can fail), one
// only the head declares is the head's.
func JudgingControls(base, head Controls) (Controls, []Change) {
	var out Controls
	var changes []Change
	for _, b := range base {
		out = append(out, b)
		h, both := head.Of(b.Kind)
		switch {
		case !both:
			changes = append(changes, Change{Setting: "[[control]] " + b.Kind, Base: controlText(b), Head: absent, Judged: controlText(b)})
		case controlText(h) != controlText(b):
			changes = append(changes, Change{Setting: "[[control]] " + b.Kind, Base: controlText(b), Head: controlText(h), Judged: controlText(b)})
		}
	}
	for _, h := range head {
		if _, both := base.Of(h.Kind); !both {
			out = append(out, h)
		}
	}
	return out, changes
}

// controlText says what a control checks, as its table writes it.
func controlText(c Control) string {
	switch c.Kind {
	case ControlIdle:
		return "plan = " + c.PlanFile
	case ControlVariant:
		return fmt.Sprintf("counter = %s, overrides = %s", c.Counter, strings.Join(c.Overrides, " "))
	}
	return c.Kind
}

// percent says a fraction as the plan writes it: 0.1 is "10 %"; the
// rounding drops float noise (0.07*100 is 7.000000000000001).
func percent(f float64) string { return fnum(math.Round(f*100*1e9)/1e9) + " %" }

// tomlKey quotes a key the way the plan must write it ("p99.search").
func tomlKey(k string) string {
	if strings.Contains(k, ".") {
		return `"` + k + `"`
	}
	return k
}
