package exit

import (
	"errors"
	"fmt"
)

// The exit codes every command and the action agree on. This package owns
// the numbers and imports no other perfgate package, so anything may use
// it; the judge's verdict codes are defined from these (judge.Pass is
// exit.Pass), not the other way round.
const (
	Pass        = 0
	Regression  = 1
	CannotJudge = 2
)

// Word is the exit code in the one word the action's `verdict` output and
// the published check use: "pass", "regression" or "cannot-judge" (any
// code that is neither 0 nor 1 means the run could not be judged).
func Word(code int) string {
	switch code {
	case Pass:
		return "pass"
	case Regression:
		return "regression"
	default:
		return "cannot-judge"
	}
}

// Error carries an exit code with the error that decided it.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Regressionf reports a judged regression (exit 1).
func Regressionf(format string, a ...any) error {
	return &Error{Code: Regression, Err: fmt.Errorf(format, a...)}
}

// Refusef reports refused input or a run that cannot be judged (exit 2).
// The message should name the file, the line and the fix.
func Refusef(format string, a ...any) error {
	return &Error{Code: CannotJudge, Err: fmt.Errorf(format, a...)}
}

// Refuse wraps err as exit 2, keeping its message.
func Refuse(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: CannotJudge, Err: err}
}

// Code is the process exit code for err: 0 for nil, the code of the first
// *Error in its chain, else 2, since an error nobody classified means the run
// could not be judged.
func Code(err error) int {
	if err == nil {
		return Pass
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CannotJudge
}
