package verdict

import (
	"context"

	"github.com/perfgate/perfgate/internal/exit"
)

// The words a verdict is published as: exit.Word's, the same three the
// action's `verdict` output uses, one per exit code. They are named here
// because the service switches on them, but exit owns the spelling.
var (
	WordPass        = exit.Word(exit.Pass)
	WordRegression  = exit.Word(exit.Regression)
	WordCannotJudge = exit.Word(exit.CannotJudge)
)

// CheckTarget says where a check run goes. SHA is the commit GitHub shows
// the check on: the pull request's head SHA (never the merge commit that
// GITHUB_SHA names on pull_request, where a check is lost from the PR), the
// merge group's head SHA, or the pushed commit. Name is the stable check
// name: "perfgate", or "perfgate (<plan name>)" when a repository runs
// several plans, so runs of different plans never overwrite each other.
type CheckTarget struct {
	Owner string
	Repo  string
	SHA   string
	Name  string
	// Event is the GitHub event that ran the gate: pull_request,
	// merge_group, push, release, workflow_dispatch.
	Event string
	// PR is the pull request's number; 0 when the event has none. It does
	// not choose the SHA: SHA is always set by the caller.
	PR int
	// Plan names the plan, for the PR comment's hidden marker (one comment
	// per PR and plan).
	Plan string
}

// Annotation is one breaching metric pinned to a line of the plan file.
type Annotation struct {
	Path    string // repository-relative, for example perf/plan.toml
	Line    int    // 1-based; 0 pins it to the file's first line
	Title   string
	Message string
}

// Outcome is the final verdict as published: Word is one of the Word*
// constants; Title is the check's one-line title ("cannot judge: ..." for
// a cannot-judge after the last retry); Summary is the report's Markdown
// (the publisher cuts it to GitHub's limit and says so).
type Outcome struct {
	Word        string
	Title       string
	Summary     string
	Annotations []Annotation
	// DetailsURL links the check to the workflow run; may be empty.
	DetailsURL string
}

// Publisher is where verdicts go: GitHub's checks, PR comments and release
// bodies. internal/verdict/publish implements it with go-github; the domain only
// knows this port, so its tests can record what was published.
type Publisher interface {
	// CheckInProgress creates the named check on t.SHA, or finds the one
	// already there, and marks it in_progress. Calling it again is harmless.
	CheckInProgress(ctx context.Context, t CheckTarget) error
	// CheckCompleted completes the named check on t.SHA: pass -> success,
	// regression and cannot-judge -> failure (never neutral or skipped,
	// which both satisfy a required check).
	CheckCompleted(ctx context.Context, t CheckTarget, o Outcome) error
	// UpsertComment writes the one PR comment for (t.PR, t.Plan), found
	// by its hidden marker and edited when present. No-op when t.PR is 0.
	UpsertComment(ctx context.Context, t CheckTarget, markdown string) error
	// SetReleaseLine puts line into the release body of tag once, between
	// the markers of t.Plan, replacing an earlier perfgate line of that
	// plan. ErrNoRelease (wrapped) when the release does not exist yet.
	SetReleaseLine(ctx context.Context, t CheckTarget, tag, line string) error
}
