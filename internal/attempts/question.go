package attempts

import "github.com/perfgate/perfgate/internal/exit"

// Question is `perfgate attempts next`'s question as its flags ask it.
type Question struct {
	Number            int    // the attempt's own number, from 1
	ExitCode          string // the gate's exit code as given
	NoExitCode        bool   // the attempt ended without one
	WorkflowCancelled bool
	CPUModel          string
	StallProne        string // comma-separated CPU models
	MaxRetries        int    // attempts that may follow the first; 0 none
}

// Decide checks the question and answers it: the attempt's outcome and
// what follows it.
func (n Question) Decide() (Outcome, Decision, error) {
	if n.Number < 1 {
		return Outcome{}, Decision{}, exit.Refusef("attempts next: --attempt %d: give the attempt's own number, 1 for the first", n.Number)
	}
	if n.MaxRetries < 0 {
		return Outcome{}, Decision{}, exit.Refusef("attempts next: --max-retries %d: give 0 or more", n.MaxRetries)
	}
	o := Outcome{Number: n.Number, WorkflowCancelled: n.WorkflowCancelled, CPUModel: n.CPUModel}
	var err error
	if o.HasExitCode, o.ExitCode, err = ParseExitCode(n.ExitCode, n.NoExitCode); err != nil {
		return Outcome{}, Decision{}, err
	}
	policy := Policy{StallProne: ParseStallProne(n.StallProne), MaxRetries: n.MaxRetries}
	if n.MaxRetries == 0 {
		policy.MaxRetries = -1 // the flag's 0 means none; the policy's 0 means the default
	}
	return o, policy.Decide(o), nil
}
