package judge

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Controls is what the after-run checks found (internal/controls runs
// them; docs/controls.md): the counters on the head, the store-write
// accounting, the idle control and the variant control, with the lines
// they add to the verdict (Verdict.AddChecks says with what effect). It
// lives here, beside that rule, so that the stage that runs the checks
// and the report that keeps them both import it from below. The report
// keeps it so that `perfgate compare`, which judges the load figures
// again offline, applies the same lines with the same effect: the checks
// compare with what was sent, not with a tolerance, so judging again does
// not change them. Reports from before it carry none.
type Controls struct {
	// Failures are the head's failed checks (a regression), CannotJudge
	// the controls that did not fail (the gate is blind), Notes every
	// other check with its counts.
	Failures    []string `json:"failures,omitempty"`
	CannotJudge []string `json:"cannot_judge,omitempty"`
	Notes       []string `json:"notes,omitempty"`

	Counters []CounterResult `json:"counters,omitempty"` // on the head
	Writes   []WritesResult  `json:"store_writes,omitempty"`
	Idle     *IdleControl    `json:"idle,omitempty"`
	Variant  *CounterResult  `json:"variant,omitempty"`
}

// AddCheck records a check of the head: a failure, or a note with its
// counts.
func (c *Controls) AddCheck(fail bool, line string) {
	if fail {
		c.Failures = append(c.Failures, line)
	} else {
		c.Notes = append(c.Notes, line)
	}
}

// AddControl records a control: one that failed, as it must, is a note;
// one that passed means the gate is blind.
func (c *Controls) AddControl(caught bool, line string) {
	if caught {
		c.Notes = append(c.Notes, line+" (failed, as a control must)")
	} else {
		c.CannotJudge = append(c.CannotJudge, line+": the control passed, so the gate is blind to what it plants on this runner and its verdict cannot be trusted")
	}
}

// CounterResult is one counter on one arm: the requests sent, the count
// before and after, and whether the growth passed the limit.
type CounterResult struct {
	Counter       string  `json:"counter"`
	Arm           string  `json:"arm"` // the arm's role: "head", "variant"
	Sent          int     `json:"sent"`
	Before        float64 `json:"before"`
	After         float64 `json:"after"`
	MaxPerRequest float64 `json:"max_per_request"` // a fraction of Sent
	Fail          bool    `json:"fail"`
}

// Grew is how much the count grew while the requests were sent.
func (r CounterResult) Grew() float64 { return r.After - r.Before }

// Line says the result in the summary's words, with both counts.
func (r CounterResult) Line() string {
	verdict := "within"
	if r.Fail {
		verdict = "over"
	}
	share := 0.0
	if r.Sent > 0 {
		share = r.Grew() / float64(r.Sent)
	}
	return fmt.Sprintf("counter %s on the %s: %d requests sent, the count grew by %s (%s of the requests), %s the limit of at most %s",
		r.Counter, r.Arm, r.Sent, countNum(r.Grew()), countPct(share), verdict, countPct(r.MaxPerRequest))
}

// WritesResult is the store-write accounting of one group: the requests
// the head answered as expected over the pairs' measured windows, and the
// rows its store inserted or updated in the table since it was created
// (the warm-ups' too), which must not be fewer.
type WritesResult struct {
	Group   string `json:"group"`
	Table   string `json:"table"`
	Answers int64  `json:"answers"`
	Writes  int64  `json:"writes"`
	Fail    bool   `json:"fail"`
}

// Line says the result with both counts.
func (r WritesResult) Line() string {
	if r.Fail {
		return fmt.Sprintf("store writes: the head answered %d requests of %s as expected but its store wrote %d rows of %s: fewer writes than answers", r.Answers, r.Group, r.Writes, r.Table)
	}
	return fmt.Sprintf("store writes: the head answered %d requests of %s as expected and its store wrote %d rows of %s", r.Answers, r.Group, r.Writes, r.Table)
}

// IdleControl is the idle control: the second plan's idle phase measured
// on the head while the planted poller ran, and whether its limits failed
// (Caught), as they must.
type IdleControl struct {
	Plan   string     `json:"plan"`
	Polls  int64      `json:"polls"`
	Result IdleResult `json:"result"`
	Caught bool       `json:"caught"`
}

// Line says the control's figures and limits.
func (r IdleControl) Line() string {
	return fmt.Sprintf("idle control (%s): with a store poller that never waits (%d polls), the head's store committed %.1f transactions/s (limit under %g) and it used %.2f %% of a core (limit under %.2f %%)",
		r.Plan, r.Polls, r.Result.TxPerSec, r.Result.TxLimit, r.Result.CPU*100, r.Result.CPULimit*100)
}

func countNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 4, 64)
}

func countPct(f float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(f*100, 'f', 1, 64), ".0") + " %"
}
