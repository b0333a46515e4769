package controls_test

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
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

func TestPreflightRefusesStoreChecksWithoutAStore(t *testing.T) {
	const groups = "[[group]]\nname = \"g\"\npath = \"/g\"\nexpect = 200\n"
	cases := []struct {
		name, extra, want string
	}{
		{"store writes", "[[store_writes]]\ngroup = \"g\"\ntable = \"items\"\n", "plan.toml:5: [[store_writes]]"},
		{"sql counter", "[[counter]]\nname = \"c\"\ngroup = \"g\"\nsql = \"SELECT 1\"\nmax_per_request = 5\n", "plan.toml:5: counter c reads sql"},
		{"http counter", "[[counter]]\nname = \"c\"\ngroup = \"g\"\nurl = \"/calls\"\nmax_per_request = 5\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := plan.Parse("plan.toml", []byte(groups+c.extra))
			if err != nil {
				t.Fatal(err)
			}
			if err := controls.Preflight(p, p.Controls, true); err != nil {
				t.Fatalf("with a store: %v", err)
			}
			err = controls.Preflight(p, p.Controls, false)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("an HTTP counter needs no store: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || exit.Code(err) != exit.CannotJudge):
				t.Fatalf("Preflight = %v, want exit 2 naming %q", err, c.want)
			}
		})
	}
}
