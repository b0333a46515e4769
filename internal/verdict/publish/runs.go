package publish

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/go-github/v62/github"

	"github.com/perfgate/perfgate/internal/verdict"
)

// The verdict service checks posted attempts against these records
// (verdict.RunRecords).
var _ verdict.RunRecords = (*Client)(nil)

// What reading a run and a pull request need, as a workflow's
// permissions block spells them.
const (
	runsPermission         = "actions: read"
	pullRequestsPermission = "pull-requests: read"
)

// WorkflowRun is GitHub's record of run runID of owner/repo, GET
// /repos/{owner}/{repo}/actions/runs/{run_id} (verdict.RunRecords).
func (c *Client) WorkflowRun(ctx context.Context, owner, repo string, runID int64) (verdict.RunRecord, error) {
	run, resp, err := c.gh.Actions.GetWorkflowRunByID(ctx, owner, repo, runID)
	if notFound(resp) {
		return verdict.RunRecord{}, &lookupNotFound{what: fmt.Sprintf("run %d", runID), repo: owner + "/" + repo, err: err}
	}
	if err != nil {
		return verdict.RunRecord{}, failed(err, runsPermission, "reading run %d of %s/%s", runID, owner, repo)
	}
	rec := verdict.RunRecord{HeadSHA: run.GetHeadSHA(), Event: run.GetEvent(), RunAttempt: run.GetRunAttempt(),
		HeadRepository: run.GetHeadRepository().GetFullName()}
	for _, pr := range run.PullRequests {
		rec.PRs = append(rec.PRs, pr.GetNumber())
	}
	return rec, nil
}

// PullRequestHead is pull request pr's head commit and the owner/name it
// comes from, GET /repos/{owner}/{repo}/pulls/{pr} (verdict.RunRecords).
func (c *Client) PullRequestHead(ctx context.Context, owner, repo string, pr int) (string, string, error) {
	p, resp, err := c.gh.PullRequests.Get(ctx, owner, repo, pr)
	if notFound(resp) {
		return "", "", &lookupNotFound{what: fmt.Sprintf("pull request #%d", pr), repo: owner + "/" + repo, err: err}
	}
	if err != nil {
		return "", "", failed(err, pullRequestsPermission, "reading pull request #%d of %s/%s", pr, owner, repo)
	}
	return p.GetHead().GetSHA(), p.GetHead().GetRepo().GetFullName(), nil
}

func notFound(resp *github.Response) bool {
	return resp != nil && resp.StatusCode == http.StatusNotFound
}

// lookupNotFound is GitHub's 404 to reading a run or a pull request. It
// is verdict.ErrNotFound, but GitHub answers a repository the credentials
// may not see (a private one the App is not installed on) with the same
// 404 as a run that does not exist, so the message says both; a missing
// permission is a 403, which names it (failed).
type lookupNotFound struct {
	what, repo string
	err        error // go-github's
}

func (e *lookupNotFound) Error() string {
	return fmt.Sprintf("GitHub has no %s in %s, or does not show %s to the service's credentials (install the GitHub App on that repository, or give the token access to it): %v", e.what, e.repo, e.repo, e.err)
}

func (e *lookupNotFound) Unwrap() []error { return []error{verdict.ErrNotFound, e.err} }
