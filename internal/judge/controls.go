package judge

// AddChecks adds the lines of the after-run checks (the counters, the
// store writes, the idle and variant controls: internal/controls runs
// them, docs/controls.md says what each is) to v, with their effect on the
// code. A head that failed a check is a regression even when the load
// phases could not be judged: a counter and the store writes compare with
// nothing but what was sent, like the idle limits, which the judge holds
// the same way. A control that did not fail turns a pass into cannot
// judge, since a gate that could not catch its own planted fault cannot
// vouch for the head; a regression found stays one, as the blind control
// does not unsay what the gate caught.
func (v *Verdict) AddChecks(failures, cannotJudge, notes []string) {
	v.Failures = append(v.Failures, failures...)
	v.CannotJudge = append(v.CannotJudge, cannotJudge...)
	v.Notes = append(v.Notes, notes...)
	switch {
	case len(failures) > 0:
		v.Code = Regression
	case v.Code == Pass && len(cannotJudge) > 0:
		v.Code = CannotJudge
	}
}
