package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
)

// TestJudgeRule: [judge] rule names the judge's rule; "seed", the medians
// rule's former name, is still read as it, with a warning naming the line
// and the new name.
func TestJudgeRule(t *testing.T) {
	for _, tc := range []struct {
		name, plan, rule, refusal, warning string
	}{
		{"default is paired", hello, judge.RulePaired, "", ""},
		{"medians", "[judge]\nrule = \"medians\"\n" + hello, judge.RuleMedians, "", ""},
		{"seed, the former name", "[judge]\nrule = \"seed\"\n" + hello, judge.RuleMedians, "",
			`plan.toml:2: rule = "seed" is the former name of the medians rule (FerroFED's gate's); it judges the same, but write rule = "medians" (docs/judge.md)`},
		{"paired written", "[judge]\nrule = \"paired\"\n" + hello, judge.RulePaired, "", ""},
		{"near miss", "[judge]\nrule = \"median\"\n" + hello, "", `plan.toml:2: rule "median" is no rule of the judge; write rule = "medians"`, ""},
		{"unknown rule", "[judge]\nrule = \"sead\"\n" + hello, "", `plan.toml:2: rule "sead" is no rule of the judge; write rule = one of "paired", "medians"`, ""},
		{"unknown key", "[judge]\nrules = \"medians\"\n" + hello, "", `plan.toml:2: unknown key "rules" in [judge]; did you mean "rule"?`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("plan.toml", []byte(tc.plan))
			if tc.refusal != "" {
				if err == nil || exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), tc.refusal) {
					t.Fatalf("err %v, want exit 2 holding %q", err, tc.refusal)
				}
				return
			}
			if err != nil || p.Rule != tc.rule {
				t.Fatalf("rule %q err %v, want %q", p.Rule, err, tc.rule)
			}
			var want []string
			if tc.warning != "" {
				want = []string{tc.warning}
			}
			if !slices.Equal(p.Warnings, want) {
				t.Errorf("warnings %q, want %q", p.Warnings, want)
			}
		})
	}
}

// Tolerance keys are the judge's vocabulary: its classes, its metrics
// without a group, and its percentiles of the plan's groups.
func TestToleranceKeys(t *testing.T) {
	for _, tc := range []struct {
		key, refusal string
	}{
		{"latency", ""}, {"cpu", ""}, {"throughput", ""}, {"memory", ""}, {"transactions", ""},
		{"cpu_per_request", ""}, {"peak_memory", ""}, {"tx_per_request", ""}, {`"p95.hello"`, ""},
		{`"p95.helo"`, `tolerance "p95.helo" names no request group; write "p95.hello"`},
		{`"p90.hello"`, `unknown tolerance "p90.hello"`},
		{"latancy", `unknown tolerance "latancy"; write latency`},
	} {
		_, err := Parse("plan.toml", []byte(hello+"[tolerance]\n"+tc.key+" = 5\n"))
		switch {
		case tc.refusal == "" && err != nil:
			t.Errorf("%s refused: %v", tc.key, err)
		case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
			t.Errorf("%s: err %v, want %q", tc.key, err, tc.refusal)
		}
	}
}

// Issue 10: "1ns" was a measured window that offered a billion arrivals
// a second. A window under a second is refused, in the plan and in the
// settings a flag replaces.
func TestWindowMeasuredTooShort(t *testing.T) {
	for _, tc := range []struct{ plan, says string }{
		{"[load]\nduration = \"1ns\"\n" + hello, `plan.toml:2: duration 1ns is too short to measure anything (under 1s); write duration = "60s"`},
		{"[ab]\nmeasure = \"10ms\"\n" + hello, `plan.toml:2: measure 10ms is too short to measure anything (under 1s); write measure = "60s"`},
	} {
		if _, err := Parse("plan.toml", []byte(tc.plan)); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("err %v, want %q", err, tc.says)
		}
	}
	p, err := Parse("plan.toml", []byte(hello))
	if err != nil {
		t.Fatal(err)
	}
	l := p.Load
	l.Duration = 1
	if err := p.CheckLoad(l); err == nil || !strings.Contains(err.Error(), "measures for 1ns, too short to measure anything") {
		t.Errorf("CheckLoad of 1ns: %v", err)
	}
	l.Duration, l.Rate = 2e9, 0.1
	if err := p.CheckLoad(l); err == nil || !strings.Contains(err.Error(), "offers 0.2 arrivals in its measured 2s, fewer than one") {
		t.Errorf("CheckLoad of 0.2 arrivals: %v", err)
	}
}

// The A/B gate's windows meet the same rule: a --measure of 1ns (CheckAB
// after the flags replaced the plan's) was let through, and an [ab] rate
// of 0.05/s parsed though each pair's 10 s offered half an arrival.
func TestABWindowMeasuresSomething(t *testing.T) {
	_, err := Parse("plan.toml", []byte("[ab]\nrate = 0.05\n"+hello))
	want := `plan.toml:2: [ab] offers each arm 0.5 arrivals in a pair's measured 10s, fewer than one; raise the rate or the measure`
	if err == nil || exit.Code(err) != exit.CannotJudge || err.Error() != want {
		t.Errorf("an [ab] rate of 0.05/s: %v, want %q", err, want)
	}
	p, err := Parse("plan.toml", []byte(hello))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*AB)
		says string
	}{
		{"--measure 1ns", func(a *AB) { a.Measure = 1 }, "measures each pair for 1ns, too short to measure anything (under 1s)"},
		{"--rate 0.01", func(a *AB) { a.Rate = 0.01 }, "offers each arm 0.1 arrivals in a pair's measured 10s, fewer than one"},
		{"the defaults", func(*AB) {}, ""},
	} {
		ab := p.AB
		tc.edit(&ab)
		err := p.CheckAB(ab)
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.says != "" && (err == nil || exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), tc.says)):
			t.Errorf("%s: %v, want exit 2 holding %q", tc.name, err, tc.says)
		}
	}
}

// Issue 10: a plan for perfgate load alone, with a max_rate under the A/B
// gate's default rate, was refused citing an [ab] table it does not have.
// It parses; the gate's own check names the defaults and the max_rate line.
func TestMaxRateWithoutAB(t *testing.T) {
	const plan = "[load]\nrate = 2\n[[group]]\nname = \"emergency\"\npath = \"/e\"\nexpect = 200\nmax_rate = 5\n"
	p, err := Parse("plan.toml", []byte(plan))
	if err != nil {
		t.Fatalf("a load plan under its max_rate was refused: %v", err)
	}
	err = p.CheckAB(p.AB)
	want := `plan.toml:7: the A/B gate's defaults (the plan has no [ab] table; write one to change them) sends group "emergency" 30 arrivals/s`
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "[ab] sends") {
		t.Errorf("CheckAB: %v, want %q", err, want)
	}
	// With [ab] written the refusal comes at parse and cites it.
	_, err = Parse("plan.toml", []byte("[ab]\nrate = 20\n"+plan))
	if err == nil || !strings.Contains(err.Error(), `plan.toml:2: [ab] sends group "emergency" 20 arrivals/s`) {
		t.Errorf("with [ab]: %v", err)
	}
}
