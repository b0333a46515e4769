// Package exit maps errors to perfgate's exit codes in one place:
// 0 pass, 1 regression, 2 cannot judge or refused input. It owns the
// numbers and their one word each (Word: "pass", "regression",
// "cannot-judge"), and imports no other perfgate package, so every package
// may return its errors; the judge's verdict codes are defined from these.
//
// It does not decide which code a run gets: the package that knows (the
// judge for a verdict, a parser for refused input) wraps its error with
// Regressionf, Refusef or Refuse, and the mains turn the error into the
// process's exit code with Code.
package exit
