package judge

import "testing"

// AddChecks' rule: a failed check of the head is a regression whatever the
// load said, a control that did not fail turns only a pass into cannot
// judge, and every line is kept.
func TestAddChecks(t *testing.T) {
	fail := []string{"counter x on the head: over"}
	blind := []string{"idle control: the control passed"}
	notes := []string{"counter x on the head: within"}
	for _, tc := range []struct {
		name                         string
		in                           Code
		failures, cannotJudge, notes []string
		want                         Code
	}{
		{"none", Pass, nil, nil, nil, Pass},
		{"a pass stays a pass with passing checks", Pass, nil, nil, notes, Pass},
		{"a failed check fails a pass", Pass, fail, nil, nil, Regression},
		{"a failed check beats cannot judge", CannotJudge, fail, nil, nil, Regression},
		{"a blind control makes a pass cannot judge", Pass, nil, blind, nil, CannotJudge},
		{"a blind control leaves a regression", Regression, nil, blind, nil, Regression},
		{"a blind control leaves cannot judge", CannotJudge, nil, blind, nil, CannotJudge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Verdict{Code: tc.in}
			v.AddChecks(tc.failures, tc.cannotJudge, tc.notes)
			if v.Code != tc.want {
				t.Fatalf("code %v, want %v", v.Code, tc.want)
			}
			if len(v.Failures) != len(tc.failures) || len(v.CannotJudge) != len(tc.cannotJudge) || len(v.Notes) != len(tc.notes) {
				t.Fatalf("lines not carried: %+v", v)
			}
		})
	}
}
