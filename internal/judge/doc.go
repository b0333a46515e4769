// Package judge decides a gate: pass, regression or cannot judge, from plain
// numbers per arm per phase. It does no I/O and keeps no state, so the JSON
// report can hold its whole input and `perfgate compare` can judge it again
// offline with other tolerances.
//
// It holds the judge's vocabulary (metrics.go: the verdict codes, metric
// IDs, classes, default tolerances, idle limits and rules), both rules
// (the paired rule, the default, and the medians rule, FerroFED's gate's), the
// checks that say a run cannot be judged, the plan's absolute thresholds
// (measured from a target's pooled load stats by MeasureThresholds, then
// decided), what the after-run checks found (Controls, with the lines they
// add) and how those lines change a verdict (Verdict.AddChecks). It does not measure anything itself (internal/pairs
// and internal/load do), run the checks (internal/controls) or render the
// verdict (internal/report). docs/judge.md derives every rule.
package judge
