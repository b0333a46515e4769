package attempts

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
)

// Row is one attempt as the verdict job sees it.
type Row struct {
	Outcome Outcome
	// Decision is what followed the attempt: kept by `attempts next` in
	// the attempt's record, else decided again from the outcome.
	Decision Decision
	// JobResult is needs.attempt-<n>.result when the workflow passed it.
	JobResult string
	// Folder is the attempt's report folder; Report and Summary the files
	// found in it ("" when absent).
	Folder, Report, Summary string
}

// Verdict is the verdict over every attempt that ran.
type Verdict struct {
	Attempts []Row
	// Final is the last attempt that ran to an exit code; HasFinal is
	// false when none did.
	Final    Outcome
	HasFinal bool
	// Code is the gate's exit code: the final attempt's, or 2 without one.
	Code int
}

// Word is an attempt's verdict in the table.
func (r Row) Word() string {
	if !r.Outcome.HasExitCode {
		if r.JobResult != "" {
			return "no exit code (job " + r.JobResult + ")"
		}
		return "no exit code"
	}
	return Word(r.Outcome.ExitCode)
}

// Text is the verdict as `perfgate verdict` prints it: a line an attempt,
// then the verdict.
func (v *Verdict) Text() string {
	var b strings.Builder
	for _, r := range v.Attempts {
		fmt.Fprintf(&b, "attempt %d on %s: %s; %s: %s\n", r.Outcome.Number, orUnknownModel(r.Outcome.CPUModel), r.Word(), r.Decision.Next, r.Decision.Reason)
	}
	if v.HasFinal {
		fmt.Fprintf(&b, "verdict: %s (attempt %d)\n", Word(v.Code), v.Final.Number)
	} else {
		fmt.Fprintf(&b, "verdict: %s (no attempt ran to an exit code)\n", Word(v.Code))
	}
	return b.String()
}

// Err carries the final verdict's exit code.
func (v *Verdict) Err() error {
	switch {
	case !v.HasFinal:
		return exit.Refusef("cannot judge: no attempt ran to an exit code")
	case v.Code == exit.Pass:
		return nil
	case v.Code == exit.Regression:
		return exit.Regressionf("regression: attempt %d on %s", v.Final.Number, orUnknownModel(v.Final.CPUModel))
	}
	return exit.Refusef("cannot judge: attempt %d on %s could not be judged", v.Final.Number, orUnknownModel(v.Final.CPUModel))
}

func orUnknownModel(m string) string {
	if m == "" {
		return "an unknown CPU model"
	}
	return m
}
