// Package attempts decides, after each attempt of the gate, whether another
// attempt runs on a fresh runner or the verdict is final, and which attempt's
// verdict is the gate's. It is pure: the workflow (through `perfgate attempts
// next`), `perfgate verdict` and the verdict service all ask it the same
// question and get the same answer.
//
// The decisions are pure; folders.go and recordfile.go read and write what
// the attempts leave behind (their records, their report folders) for the
// verdict job.
//
// The rules are FerroFED's gate's: a run that cannot be judged (exit 2) says
// nothing about the code and runs again on any CPU model; a regression
// (exit 1) runs again only on a CPU model known to stall every route for a
// whole job; an attempt that ended without an exit code while the workflow
// went on (the runner shut down, the job hit its time limit) runs again; a
// workflow cancelled by its concurrency group or by a person retries nothing.
// At most two retries run, and the gate's verdict is the last attempt that ran.
package attempts

import (
	"fmt"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
)

// DefaultMaxRetries is how many attempts may follow the first one.
const DefaultMaxRetries = 2

// Outcome is how one attempt ended.
type Outcome struct {
	// Number counts attempts from 1.
	Number int
	// HasExitCode is false when the attempt's job ended before perfgate
	// returned (the runner shut down, the job reached its time limit, the
	// job was cancelled).
	HasExitCode bool
	ExitCode    int
	// WorkflowCancelled is true when the workflow run itself was cancelled
	// (by its concurrency group or by a person), not only the attempt's job.
	WorkflowCancelled bool
	// CPUModel is the runner's "model name" from /proc/cpuinfo.
	CPUModel string
}

// Policy holds what the retry rules need beyond the outcome itself.
type Policy struct {
	// StallProne lists the CPU models on which a regression is retried.
	// A model matches when it equals an entry after trimming spaces at both
	// ends, ignoring case (see SameCPUModel).
	StallProne []string
	// MaxRetries is how many attempts may follow the first: 0 means the
	// default 2, a negative value means none.
	MaxRetries int
}

// Next is what follows an attempt.
type Next string

// The two answers.
const (
	Retry Next = "retry"
	Final Next = "final"
)

// Decision is the answer with the one-line reason the job summary shows.
type Decision struct {
	Next   Next
	Reason string
}

// maxRetries resolves the policy's zero value to the default.
func (p Policy) maxRetries() int {
	switch {
	case p.MaxRetries == 0:
		return DefaultMaxRetries
	case p.MaxRetries < 0:
		return 0
	}
	return p.MaxRetries
}

// StallProneModel reports whether model is in the policy's list.
func (p Policy) StallProneModel(model string) bool {
	for _, m := range p.StallProne {
		if SameCPUModel(m, model) {
			return true
		}
	}
	return false
}

// SameCPUModel is how CPU models are matched everywhere: equal after
// trimming spaces at both ends, ignoring case. An empty model matches
// nothing, so a runner whose model could not be read is never stall-prone.
func SameCPUModel(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	return a != "" && strings.EqualFold(a, b)
}

// Decide answers "retry or final?" for the attempt that just ended.
func (p Policy) Decide(o Outcome) Decision {
	next, why := p.rule(o)
	if next == Retry {
		if max := p.maxRetries(); o.Number > max {
			return Decision{Next: Final, Reason: fmt.Sprintf("%s, but at most %d %s run and this was attempt %d", why, max, plural(max, "retry", "retries"), o.Number)}
		}
	}
	return Decision{Next: next, Reason: why}
}

// rule applies the retry rules without the retry budget.
func (p Policy) rule(o Outcome) (Next, string) {
	model := strings.TrimSpace(o.CPUModel)
	if model == "" {
		model = "an unknown CPU model"
	}
	switch {
	case o.WorkflowCancelled:
		return Final, "the workflow was cancelled (by its concurrency group or a person): no retry"
	case !o.HasExitCode:
		return Retry, "the attempt ended without an exit code while the workflow went on (runner shut down or job time limit)"
	case o.ExitCode == exit.Pass:
		return Final, "passed"
	case o.ExitCode == exit.Regression && p.StallProneModel(o.CPUModel):
		return Retry, fmt.Sprintf("regression on %s, a CPU model listed as stall-prone", model)
	case o.ExitCode == exit.Regression:
		return Final, fmt.Sprintf("regression on %s, not a stall-prone CPU model", model)
	case o.ExitCode == exit.CannotJudge:
		return Retry, fmt.Sprintf("cannot judge on %s: a fresh runner of any CPU model", model)
	}
	// Any other code (a crash, a kill) is a run nobody judged.
	return Retry, fmt.Sprintf("exit code %d is not a verdict (0, 1 or 2), taken as cannot judge on %s", o.ExitCode, model)
}

// FinalOf returns the gate's final attempt: the one with the highest number
// among those that ran to an exit code. It is false when no attempt did.
func FinalOf(outcomes []Outcome) (Outcome, bool) {
	var last Outcome
	found := false
	for _, o := range outcomes {
		if o.HasExitCode && (!found || o.Number > last.Number) {
			last, found = o, true
		}
	}
	return last, found
}

// Code is the exit code an attempt's exit code stands for: 0, 1 or 2, any
// other code (a crash, a kill) being a run nobody judged.
func Code(o Outcome) int {
	if !o.HasExitCode {
		return exit.CannotJudge
	}
	switch o.ExitCode {
	case exit.Pass, exit.Regression:
		return o.ExitCode
	}
	return exit.CannotJudge
}

// ParseStallProne reads the workflow's STALL_PRONE: CPU model names
// separated by commas, spaces around each trimmed, empty entries dropped.
// A model name that itself holds a comma cannot be listed.
func ParseStallProne(s string) []string {
	var out []string
	for _, m := range strings.Split(s, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// Sorted returns the outcomes ordered by attempt number, for tables.
func Sorted(outcomes []Outcome) []Outcome {
	out := append([]Outcome(nil), outcomes...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
