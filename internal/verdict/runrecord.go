package verdict

import (
	"context"
	"errors"
)

// ErrNoAccess is why GitHub's record of a run cannot be read: the
// service's GitHub App is not installed on the repository's owner. The
// HTTP API answers it with 403: the attempt cannot be vouched for until
// someone installs the App.
var ErrNoAccess = errors.New("the service's GitHub App is not installed on the repository's owner")

// RunRecord is GitHub's own record of a workflow run, as GET
// /repos/{owner}/{repo}/actions/runs/{run_id} gives it: what the service
// holds an attempt's facts against before it files and publishes them, so
// a body cannot claim a commit, an event or a pull request its run was not
// for.
type RunRecord struct {
	// HeadSHA is the commit the run ran on: the pull request's head, the
	// merge group's head, or the pushed commit.
	HeadSHA string
	// Event is the event that started the run (pull_request, push, ...).
	Event string
	// RunAttempt is the run's newest attempt (re-runs count up from 1).
	RunAttempt int
	// PRs are the pull requests GitHub links to the run. GitHub links none
	// for a run of a pull request from a fork, so a fork's pull request is
	// confirmed through PullRequestHead instead.
	PRs []int
	// HeadRepository is the owner/name the head commit came from: the
	// fork for a fork's pull request.
	HeadRepository string
}

// RunRecords reads GitHub's records of runs and pull requests;
// internal/verdict/publish implements it with the service's GitHub App.
type RunRecords interface {
	// WorkflowRun is run runID of owner/repo; ErrNotFound when GitHub has
	// no such run, ErrNoAccess when the App may not read the repository.
	WorkflowRun(ctx context.Context, owner, repo string, runID int64) (RunRecord, error)
	// PullRequestHead is pull request pr's head commit and the owner/name
	// it comes from; ErrNotFound when there is no such pull request.
	PullRequestHead(ctx context.Context, owner, repo string, pr int) (sha, headRepo string, err error)
}
