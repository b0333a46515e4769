package attempts

// Record is what an attempt job keeps about itself beside its report
// (attempt.json in the uploaded report folder): how it ended and what was
// decided. The verdict job reads it back, so an attempt that was refused
// before any report was written still names its exit code and CPU model.
type Record struct {
	Attempt    int    `json:"attempt"`
	RunAttempt int    `json:"run_attempt,omitempty"`
	ExitCode   *int   `json:"exit_code"` // null: the attempt ended without one
	CPUModel   string `json:"cpu_model"`
	Next       Next   `json:"next"`
	Reason     string `json:"reason"`
}

// NewRecord keeps an outcome and its decision.
func NewRecord(o Outcome, d Decision, runAttempt int) Record {
	r := Record{Attempt: o.Number, RunAttempt: runAttempt, CPUModel: o.CPUModel, Next: d.Next, Reason: d.Reason}
	if o.HasExitCode {
		code := o.ExitCode
		r.ExitCode = &code
	}
	return r
}

// Outcome is the outcome the record kept.
func (r Record) Outcome() Outcome {
	o := Outcome{Number: r.Attempt, CPUModel: r.CPUModel}
	if r.ExitCode != nil {
		o.HasExitCode, o.ExitCode = true, *r.ExitCode
	}
	return o
}
