package verdict

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/internal/report"
)

// Facts is what one attempt says about itself beside its JSON report: where
// it ran, for which change, and how it ended. The attempt job sends them;
// the service indexes them (the report itself is kept as the raw JSON the
// gate wrote).
type Facts struct {
	// Repository is owner/name.
	Repository string `json:"repository"`
	// Event is the GitHub event that ran the gate: pull_request,
	// merge_group, push, release or workflow_dispatch.
	Event string `json:"event"`
	// HeadSHA is the commit judged: the pull request's head SHA (never the
	// merge commit GITHUB_SHA names on pull_request), or the pushed commit.
	HeadSHA string `json:"head_sha"`
	// BaseSHA is the base the gate named; empty when it named none.
	BaseSHA string `json:"base_sha,omitempty"`
	// PR is the pull request's number on pull_request events.
	PR int `json:"pr,omitempty"`
	// MergeGroupSHA is merge_group.head_sha on merge_group events: the
	// queue waits for the check on that commit.
	MergeGroupSHA string `json:"merge_group_head_sha,omitempty"`
	// Tag is the release tag on release events.
	Tag string `json:"tag,omitempty"`
	// Plan is the gate's name when it is not the default plan's (see
	// PlanOf): it makes the check "perfgate (<plan>)", keeps one PR comment
	// and one release-notes line per plan, and is part of the RunKey.
	Plan       string `json:"plan,omitempty"`
	RunID      int64  `json:"run_id"`
	RunAttempt int    `json:"run_attempt"`
	// Attempt is the gate's attempt number in the run, from 1.
	Attempt  int    `json:"attempt"`
	CPUModel string `json:"cpu_model"`
	// ExitCode is the gate's exit code; null when the attempt ended
	// without one (cancelled, runner lost).
	ExitCode *int `json:"exit_code"`
	// WorkflowCancelled says the run itself was cancelled (a concurrency
	// group or a person), not only this attempt: no retry then.
	WorkflowCancelled bool `json:"workflow_cancelled,omitempty"`
	// DetailsURL links the check to the workflow run.
	DetailsURL string `json:"details_url,omitempty"`
}

// RunKey names one judgment of a change: one workflow run's run attempt
// (GITHUB_RUN_ATTEMPT: "Re-run all jobs" keeps the run id and raises it, and
// is judged anew) of one plan (two plans in a run are two judgments, each
// with its own check and comment). The gate's attempts 1, 2, 3 belong to a
// RunKey.
type RunKey struct {
	Repository string `json:"repository"`
	RunID      int64  `json:"run_id"`
	RunAttempt int    `json:"run_attempt"`
	Plan       string `json:"plan,omitempty"`
}

// Key is the judgment the facts' attempt belongs to.
func (f *Facts) Key() RunKey {
	return RunKey{Repository: f.Repository, RunID: f.RunID, RunAttempt: f.RunAttempt, Plan: f.Plan}
}

// String names the key in messages: "run 7001 (run attempt 2, plan search) of acme/api".
func (k RunKey) String() string {
	s := fmt.Sprintf("run %d (run attempt %d", k.RunID, k.RunAttempt)
	if k.Plan != "" {
		s += ", plan " + k.Plan
	}
	return s + ") of " + k.Repository
}

// Submission is the body of POST /v1/attempts.
type Submission struct {
	Facts Facts `json:"facts"`
	// Report is the JSON report as the gate wrote it; null for an attempt
	// that ended without an exit code.
	Report json.RawMessage `json:"report"`
}

// MetricPoint is one metric of an attempt's report, indexed for the page's
// head/base trends.
type MetricPoint struct {
	ID    string  `json:"id"`
	Base  float64 `json:"base"`
	Head  float64 `json:"head"`
	Ratio float64 `json:"ratio"`
	Fail  bool    `json:"fail,omitempty"`
}

// Decision is the answer to "retry or final?" for one attempt. Next is
// NextRetry or NextFinal; Verdict is the run's final word when Next is
// NextFinal.
type Decision struct {
	Next    string `json:"next"`
	Reason  string `json:"reason"`
	Verdict string `json:"verdict,omitempty"`
}

// The two answers of a decision.
const (
	NextRetry = "retry"
	NextFinal = "final"
)

// WordPending is a run's word before its final attempt.
const WordPending = "pending"

// Attempt is one stored attempt.
type Attempt struct {
	Facts    Facts           `json:"facts"`
	Verdict  string          `json:"verdict"` // a Word* constant, or "" without an exit code
	Decision Decision        `json:"decision"`
	Received time.Time       `json:"received"`
	Metrics  []MetricPoint   `json:"metrics,omitempty"`
	Report   json.RawMessage `json:"report,omitempty"`
	// BaseNote is the report's sentence on why the base was chosen ("The
	// base is `<commit>`, ..."), the release-notes line's substance.
	BaseNote string `json:"base_note,omitempty"`

	// parsed is Report decoded, kept from ingest so the title and the
	// summary do not decode 100 kB again.
	parsed *report.Report
}

// Receipt answers POST /v1/attempts: the stored attempt and whether this
// request stored it (false for a repeat, which returns the stored one).
type Receipt struct {
	Created bool    `json:"created"`
	Attempt Attempt `json:"attempt"`
	// Published says the final verdict reached GitHub; PublishError says
	// why not. A repeat of the attempt publishes again when it had not.
	Published    bool   `json:"published,omitempty"`
	PublishError string `json:"publish_error,omitempty"`
}

// Run is one workflow run's verdict over its attempts.
type Run struct {
	Repository    string `json:"repository"`
	RunID         int64  `json:"run_id"`
	RunAttempt    int    `json:"run_attempt"`
	Event         string `json:"event"`
	HeadSHA       string `json:"head_sha"`
	BaseSHA       string `json:"base_sha,omitempty"`
	PR            int    `json:"pr,omitempty"`
	MergeGroupSHA string `json:"merge_group_head_sha,omitempty"`
	Tag           string `json:"tag,omitempty"`
	Plan          string `json:"plan,omitempty"`
	// Verdict is the final word, or WordPending before the final attempt.
	Verdict      string    `json:"verdict"`
	Title        string    `json:"title,omitempty"`
	FinalAttempt int       `json:"final_attempt,omitempty"`
	Updated      time.Time `json:"updated"`
	// ReleaseLine is the release-notes line; empty when the gate named no
	// base.
	ReleaseLine string `json:"release_line,omitempty"`
	// Published says every publish target of the final verdict reached
	// GitHub; Targets says which did, so a retry redoes only the others.
	Published    bool             `json:"published"`
	Targets      Targets          `json:"published_targets"`
	PublishError string           `json:"publish_error,omitempty"`
	Attempts     []AttemptSummary `json:"attempts"`
}

// Key is the judgment the run is.
func (r *Run) Key() RunKey {
	return RunKey{Repository: r.Repository, RunID: r.RunID, RunAttempt: r.RunAttempt, Plan: r.Plan}
}

// Targets are the publish targets of a final verdict that reached GitHub:
// the completed check, the PR comment, the release-notes line. A target
// the event does not have (no pull request, no release) counts as done.
type Targets struct {
	Check   bool `json:"check"`
	Comment bool `json:"comment"`
	Release bool `json:"release"`
}

// All says every target is done.
func (t Targets) All() bool { return t.Check && t.Comment && t.Release }

// AttemptSummary is one attempt as a run's verdict lists it: its CPU
// model, its verdict and why a retry ran.
type AttemptSummary struct {
	Attempt  int    `json:"attempt"`
	CPUModel string `json:"cpu_model"`
	Verdict  string `json:"verdict"`
	Next     string `json:"next"`
	Reason   string `json:"reason"`
}

// Query selects runs of one repository by exactly one of SHA (the head or
// merge-group head), PR, MergeGroupSHA or Tag.
type Query struct {
	Repository    string
	SHA           string
	PR            int
	MergeGroupSHA string
	Tag           string
	Limit         int
}

// ModelStat is one CPU model's recent attempts: how many of the last
// Window ran on it, how many of those could not be judged (exit 2), and
// whether that share makes it stall-prone.
type ModelStat struct {
	CPUModel   string  `json:"cpu_model"`
	Attempts   int     `json:"attempts"`
	Exit2      int     `json:"exit2"`
	Share      float64 `json:"share"`
	StallProne bool    `json:"stall_prone"`
	// Why says where its stall-prone mark comes from, in words.
	Why string `json:"why,omitempty"`
}
