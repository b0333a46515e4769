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

// WorkflowRun is GitHub's record of run runID of owner/repo, GET
// /repos/{owner}/{repo}/actions/runs/{run_id} (verdict.RunRecords).
func (c *Client) WorkflowRun(ctx context.Context, owner, repo string, runID int64) (verdict.RunRecord, error) {
	run, resp, err := c.gh.Actions.GetWorkflowRunByID(ctx, owner, repo, runID)
	if notFound(resp) {
		return verdict.RunRecord{}, fmt.Errorf("run %d of %s/%s: %w", runID, owner, repo, verdict.ErrNotFound)
	}
	if err != nil {
		return verdict.RunRecord{}, failed(err, "actions: read", "reading run %d of %s/%s", runID, owner, repo)
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
		return "", "", fmt.Errorf("pull request #%d of %s/%s: %w", pr, owner, repo, verdict.ErrNotFound)
	}
	if err != nil {
		return "", "", failed(err, "pull_requests: read", "reading pull request #%d of %s/%s", pr, owner, repo)
	}
	return p.GetHead().GetSHA(), p.GetHead().GetRepo().GetFullName(), nil
}

func notFound(resp *github.Response) bool {
	return resp != nil && resp.StatusCode == http.StatusNotFound
}
