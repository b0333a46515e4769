package judge

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/load"
)

// wrongIn is an A/A input whose arms' group "item" answered wrong in every
// phase: all of its answers when all is set, with the first sample in
// phase 1.
func wrongIn(base, head bool) Input {
	in := pairs(latencyMetric, four(5), four(5))
	mark := func(phases []Phase) {
		for i := range phases {
			g := &phases[i].Groups[1]
			g.WrongAnswers, g.Halves = 600, [2]Half{}
			if i == 0 {
				g.WrongAnswer = &load.AnswerSample{Expectation: `expect_json "items.0.id" = 42`, Why: `the body has no "items"`, Status: 200, Body: "{}"}
			}
		}
	}
	if base {
		mark(in.Base)
	}
	if head {
		mark(in.Head)
	}
	return in
}

func TestWrongAnswers(t *testing.T) {
	const sample = `group item: 2400 wrong answers; first: expect_json "items.0.id" = 42: the body has no "items"; body (200): {}`
	for _, tc := range []struct {
		name       string
		base, head bool
		code       Code
		failure    string // in Failures
		cannot     string // in CannotJudge
	}{
		{"the head's fail the gate, naming the group, the path and the body", false, true, Regression, "head: " + sample, ""},
		{"the base's leave nothing to compare", true, false, CannotJudge, "", "base: " + sample + ": the base does not answer as the plan expects"},
		{"both arms': cannot judge", true, true, CannotJudge, "head: " + sample, "base: " + sample},
		{"none", false, false, Pass, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(wrongIn(tc.base, tc.head))
			if v.Code != tc.code {
				t.Fatalf("code %v, want %v; failures %q cannot judge %q", v.Code, tc.code, v.Failures, v.CannotJudge)
			}
			if tc.failure != "" && !strings.Contains(strings.Join(v.Failures, "\n"), tc.failure) {
				t.Errorf("failures %q, want %q", v.Failures, tc.failure)
			}
			if tc.cannot != "" && !strings.Contains(strings.Join(v.CannotJudge, "\n"), tc.cannot) {
				t.Errorf("cannot judge %q, want %q", v.CannotJudge, tc.cannot)
			}
			if tc.head && !strings.Contains(strings.Join(v.LeftOut, "\n"), "head had no answer as the plan says in 4 of 4 phases (2400 wrong answers)") {
				t.Errorf("left out %q: the group's latency is not compared, and why", v.LeftOut)
			}
		})
	}
}
