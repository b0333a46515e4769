package httpapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/verdict"
)

// RepositoryPlaceholder in a workflow of OIDC.Workflows or OIDC.Relays
// stands for the token's own repository (its repository claim).
const RepositoryPlaceholder = "{repository}"

// DefaultWorkflows may post their own run's attempts: perfgate's reusable
// workflow, which the template workflows/perf.yml calls (any ref: a tag, a
// branch or a commit), and a repository's own copy of it at
// .github/workflows/perf.yml, as perfgate's own repository runs it. A job
// of any other workflow (one a pull request added, say) is refused even
// with id-token: write.
var DefaultWorkflows = []string{
	"perfgate/perfgate/.github/workflows/perf.yml",
	RepositoryPlaceholder + "/.github/workflows/perf.yml",
}

// DefaultRelays may post another run's attempts: the base repository's
// copy of workflows/perf-relay.yml, which runs on workflow_run after a
// fork pull request's gate (that run gets no OIDC token of its own).
var DefaultRelays = []string{RepositoryPlaceholder + "/.github/workflows/perf-relay.yml"}

// WorkflowMatches says whether a token's job_workflow_ref
// (owner/repo/.github/workflows/file.yml@ref) is one of workflows. An
// entry without "@" matches every ref; "path@refs/tags/*" every ref
// starting so; anything else the exact ref. Owner and repository names
// match without regard to case, as GitHub's do.
func WorkflowMatches(workflows []string, repository, ref string) bool {
	for _, w := range workflows {
		w = strings.ReplaceAll(w, RepositoryPlaceholder, repository)
		path, wantRef, pinned := strings.Cut(w, "@")
		gotPath, gotRef, ok := strings.Cut(ref, "@")
		if !ok || !strings.EqualFold(path, gotPath) {
			continue
		}
		switch {
		case !pinned:
			return true
		case strings.HasSuffix(wantRef, "*") && strings.HasPrefix(gotRef, strings.TrimSuffix(wantRef, "*")):
			return true
		case wantRef == gotRef:
			return true
		}
	}
	return false
}

// bind holds an attempt's facts to its credential. An OIDC token from one
// of the Workflows posts only its own run: run_id, run_attempt and
// event_name must be the token's. A token from one of the Relays, on
// workflow_run, posts another run's attempts (a fork pull request's),
// which only GitHub's record of that run can vouch for, so it needs Runs.
// With Runs every attempt is then held against its run's record.
func (a *Auth) bind(ctx context.Context, who credential, f verdict.Facts) error {
	if c := who.claims; c != nil {
		o := a.OIDC
		relays := o.Relays
		if relays == nil {
			relays = DefaultRelays
		}
		workflows := o.Workflows
		if workflows == nil {
			workflows = DefaultWorkflows
		}
		switch {
		case c.EventName == "workflow_run" && WorkflowMatches(relays, c.Repository, c.JobWorkflowRef):
			if a.Runs == nil {
				return forbidden("job_workflow_ref: %s relays another run's attempts, which the service checks against GitHub's record of that run; give the service GitHub App credentials (--github-app-id, --github-app-key)", c.JobWorkflowRef)
			}
		case !WorkflowMatches(workflows, c.Repository, c.JobWorkflowRef):
			return forbidden("job_workflow_ref: %q is not a workflow that may post attempts (%s): attempts come from perfgate's reusable workflow; to allow another, add --workflow OWNER/REPO/.github/workflows/FILE.yml", c.JobWorkflowRef, strings.Join(workflows, ", "))
		case c.RunID != strconv.FormatInt(f.RunID, 10):
			return forbidden("run_id: the OIDC token is run %s's, the attempt says run %d: a job posts its own run's attempts", c.RunID, f.RunID)
		case c.RunAttempt != strconv.Itoa(f.RunAttempt):
			return forbidden("run_attempt: the OIDC token is run attempt %s's, the attempt says %d", c.RunAttempt, f.RunAttempt)
		case !sameEvent(c.EventName, f.Event):
			return forbidden("event_name: the OIDC token's run is a %s, the attempt says %s", c.EventName, f.Event)
		case c.EventName == "push" && f.Event == "release" && c.Ref != "refs/tags/"+f.Tag:
			return forbidden("ref: the OIDC token's run was pushed %s, the attempt judges the release %s", c.Ref, f.Tag)
		}
	}
	if a.Runs == nil {
		return nil
	}
	return checkRun(ctx, a.Runs, f)
}

// sameEvent says whether a run started by event may post attempts of
// claimed: the same event, or a release judged by a run on its pushed tag
// (workflows/release.yml runs on push and passes event: release on).
func sameEvent(event, claimed string) bool {
	return event == claimed || (claimed == "release" && event == "push")
}

// checkRun holds f against GitHub's record of its run: the commit the
// check goes on, the event, the run attempt and the pull request.
func checkRun(ctx context.Context, runs verdict.RunRecords, f verdict.Facts) error {
	owner, repo, _ := strings.Cut(f.Repository, "/")
	rec, err := runs.WorkflowRun(ctx, owner, repo, f.RunID)
	if errors.Is(err, verdict.ErrNotFound) {
		// GitHub answers a repository the credentials cannot see as it
		// answers a run that does not exist.
		return forbidden("run_id: GitHub has no run %d in %s, or does not show %s to the service's GitHub credentials (install the service's GitHub App on that repository)", f.RunID, f.Repository, f.Repository)
	}
	if errors.Is(err, verdict.ErrNoAccess) {
		return forbidden("repository: GitHub's record of run %d cannot be read: %v", f.RunID, err)
	}
	if err != nil {
		return &authError{status: http.StatusBadGateway, msg: "checking the attempt against GitHub's record of its run: " + err.Error()}
	}
	switch {
	case !strings.EqualFold(rec.HeadSHA, f.CheckSHA()):
		return forbidden("head_sha: GitHub's record of run %d is for commit %s, the attempt says %s", f.RunID, rec.HeadSHA, f.CheckSHA())
	case !sameEvent(rec.Event, f.Event):
		return forbidden("event: GitHub's record of run %d is a %s, the attempt says %s", f.RunID, rec.Event, f.Event)
	case f.RunAttempt > rec.RunAttempt:
		return forbidden("run_attempt: run %d has had %d attempts, the attempt says %d", f.RunID, rec.RunAttempt, f.RunAttempt)
	}
	if f.PR == 0 || slices.Contains(rec.PRs, f.PR) {
		return nil
	}
	// GitHub links no pull request to a run from a fork: the pull
	// request's own head must be the run's.
	sha, headRepo, err := runs.PullRequestHead(ctx, owner, repo, f.PR)
	// The run was just read from the same repository, so GitHub shows it:
	// its 404 here is a pull request that does not exist.
	if errors.Is(err, verdict.ErrNotFound) {
		return forbidden("pr: %s has no pull request #%d", f.Repository, f.PR)
	}
	if err != nil {
		return &authError{status: http.StatusBadGateway, msg: "checking the attempt against GitHub's record of its pull request: " + err.Error()}
	}
	if !strings.EqualFold(sha, rec.HeadSHA) || !strings.EqualFold(headRepo, rec.HeadRepository) {
		return forbidden("pr: pull request #%d's head is %s of %s, not run %d's commit %s of %s", f.PR, sha, headRepo, f.RunID, rec.HeadSHA, rec.HeadRepository)
	}
	return nil
}
