package verdict

import (
	"context"
	"encoding/json"
	"time"
)

// Experiment is one capacity experiment's report as the service keeps it
// (POST /v1/experiments): which target and commit it measured, and the
// routine numbers read from the report (`perfgate experiment`'s JSON,
// docs/experiment.md), so a target's knee can be followed over commits.
type Experiment struct {
	ID                 int64           `json:"id"`
	Repository         string          `json:"repository"`
	Target             string          `json:"target"`
	Branch             string          `json:"branch"`
	DefaultBranch      bool            `json:"default_branch"` // the repository's default branch: the line later runs are judged against
	CommitSHA          string          `json:"commit"`
	Received           time.Time       `json:"received"`
	Knee               *float64        `json:"knee_per_s,omitempty"`
	KneeLevel          *float64        `json:"knee_level,omitempty"`
	FirstResource      string          `json:"first_resource,omitempty"`
	FirstResourceLevel *float64        `json:"first_resource_level,omitempty"`
	PlateauGrowth      *float64        `json:"plateau_growth_ms_per_min,omitempty"`
	RecoveryS          *float64        `json:"recovery_s,omitempty"`
	Exit               int             `json:"exit"`
	Verdict            string          `json:"verdict"`
	Report             json.RawMessage `json:"report,omitempty"`
}

// ExperimentStore keeps experiments; internal/verdict/db implements it
// beside Store.
type ExperimentStore interface {
	// PutExperiment stores e and returns its id, with the default branch's
	// last experiment on e's target stored before it (nil when none), the
	// one e's knee is judged against.
	PutExperiment(ctx context.Context, e *Experiment) (id int64, previous *Experiment, err error)
	// Experiments returns a target's experiments, oldest first, the newest
	// limit of them, without their reports.
	Experiments(ctx context.Context, repo, target string, limit int) ([]Experiment, error)
}

// ExperimentPost is POST /v1/experiments' body: where and what the
// experiment measured, and its JSON report (`perfgate experiment --out`),
// of which the service reads the routine numbers, the exit and the verdict.
type ExperimentPost struct {
	Repository    string          `json:"repository"`
	Target        string          `json:"target"`
	Branch        string          `json:"branch"`
	DefaultBranch bool            `json:"default_branch"`
	Commit        string          `json:"commit"`
	Report        json.RawMessage `json:"report"`
}

// ExperimentReceipt answers POST /v1/experiments: the stored experiment's
// id, and the default branch's last experiment on the same target before
// it, whose knee the poster judges its own against.
type ExperimentReceipt struct {
	ID       int64       `json:"id"`
	Previous *Experiment `json:"previous,omitempty"`
}
