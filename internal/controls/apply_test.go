package controls_test

import (
	"testing"

	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/judge"
)

func TestApply(t *testing.T) {
	fail := controls.Outcome{Failures: []string{"counter x on the head: over"}}
	blind := controls.Outcome{CannotJudge: []string{"idle control: the control passed"}}
	notes := controls.Outcome{Notes: []string{"counter x on the head: within"}}
	cases := []struct {
		name string
		in   judge.Code
		o    controls.Outcome
		want judge.Code
	}{
		{"a pass stays a pass with passing checks", judge.Pass, notes, judge.Pass},
		{"a failed counter fails a pass", judge.Pass, fail, judge.Regression},
		{"a failed counter is a regression when the load cannot be judged", judge.CannotJudge, fail, judge.Regression},
		{"a blind control makes a pass cannot judge", judge.Pass, blind, judge.CannotJudge},
		{"a blind control leaves a regression", judge.Regression, blind, judge.Regression},
		{"a blind control leaves cannot judge", judge.CannotJudge, blind, judge.CannotJudge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := judge.Verdict{Code: c.in}
			c.o.Apply(&v)
			if v.Code != c.want {
				t.Fatalf("code %v, want %v", v.Code, c.want)
			}
			if len(v.Failures) != len(c.o.Failures) || len(v.CannotJudge) != len(c.o.CannotJudge) || len(v.Notes) != len(c.o.Notes) {
				t.Fatalf("lines not carried: %+v", v)
			}
		})
	}
}
