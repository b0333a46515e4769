package verdict

import (
	"regexp"
	"strings"
)

var (
	// repoName is owner/name as GitHub allows it: an owner (a user or an
	// organization) of 1 to 39 letters, digits, hyphens and underscores
	// (an enterprise-managed user is handle_shortcode), a name of letters,
	// digits, '.', '_' and '-'.
	repoName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,39}/[A-Za-z0-9._-]+$`)
	fullSHA  = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
)

// ValidRepository says whether name is an owner/name GitHub can have. A
// name GitHub cannot have would file attempts, tokens or an allow-list
// entry for a repository no workflow ever posts from.
func ValidRepository(name string) bool {
	_, repo, _ := strings.Cut(name, "/")
	return repoName.MatchString(name) && repo != "." && repo != ".."
}

// Events are the GitHub events a gate runs on.
var Events = []string{"pull_request", "merge_group", "push", "release", "workflow_dispatch"}

// Validate refuses facts the service cannot file or publish, naming the
// field and the fix.
func (f *Facts) Validate() error {
	switch {
	case !ValidRepository(f.Repository):
		return inputf("facts.repository", "%q is not owner/name: send GITHUB_REPOSITORY", f.Repository)
	case !validEvent(f.Event):
		return inputf("facts.event", "%q is not one of %s: send GITHUB_EVENT_NAME", f.Event, strings.Join(Events, ", "))
	case !fullSHA.MatchString(f.HeadSHA):
		return inputf("facts.head_sha", "%q is not a full lowercase commit hash: send the pull request's head.sha (not GITHUB_SHA, the merge commit) or the pushed commit", f.HeadSHA)
	case f.BaseSHA != "" && !fullSHA.MatchString(f.BaseSHA):
		return inputf("facts.base_sha", "%q is not a full lowercase commit hash: send the base the gate named, or leave it out when it named none", f.BaseSHA)
	case f.RunID <= 0:
		return inputf("facts.run_id", "%d is not a run id: send GITHUB_RUN_ID", f.RunID)
	case f.RunAttempt < 1:
		return inputf("facts.run_attempt", "%d is not a run attempt: send GITHUB_RUN_ATTEMPT (1 for the first)", f.RunAttempt)
	case f.Attempt < 1:
		return inputf("facts.attempt", "%d is not an attempt number: the gate's attempts count from 1", f.Attempt)
	case f.ExitCode != nil && (*f.ExitCode < 0 || *f.ExitCode > 255):
		return inputf("facts.exit_code", "%d is not an exit code: send the gate's exit code, or null when the attempt ended without one", *f.ExitCode)
	case f.PR < 0:
		return inputf("facts.pr", "%d is not a pull request number", f.PR)
	case f.Event == "pull_request" && f.PR == 0:
		return inputf("facts.pr", "a pull_request event needs the pull request's number")
	case f.Event == "merge_group" && !fullSHA.MatchString(f.MergeGroupSHA):
		return inputf("facts.merge_group_head_sha", "%q is not a full commit hash: a merge_group event needs merge_group.head_sha, the commit the queue waits on", f.MergeGroupSHA)
	case f.Event == "release" && f.Tag == "":
		return inputf("facts.tag", "a release event needs the release's tag")
	case len(f.CPUModel) > 200 || len(f.Plan) > 200 || len(f.Tag) > 200 || len(f.DetailsURL) > 2000:
		return inputf("facts", "cpu_model, plan and tag are at most 200 characters, details_url 2000")
	}
	return nil
}

func validEvent(e string) bool {
	for _, v := range Events {
		if v == e {
			return true
		}
	}
	return false
}

// CheckSHA is the commit the check goes on: merge_group.head_sha for the
// merge queue, else the judged head.
func (f *Facts) CheckSHA() string {
	if f.Event == "merge_group" && f.MergeGroupSHA != "" {
		return f.MergeGroupSHA
	}
	return f.HeadSHA
}

// DefaultGate is the gate's name the reusable workflow makes from the
// default plan, perf/plan.toml: its judgment keeps the plain names (the
// check "perfgate", the comment marker of no plan) that a repository's
// required check already names.
const DefaultGate = "perf-plan"

// PlanOf is the plan key of the gate named gate (the workflow's name input,
// or the name it makes from the plan's path): "" for the default plan (and
// no gate name), else the name.
func PlanOf(gate string) string {
	gate = strings.TrimSpace(gate)
	if gate == DefaultGate {
		return ""
	}
	return gate
}

// CheckName is the check's stable name: "perfgate", or "perfgate (<plan>)"
// for a named plan, so several plans' checks never overwrite each other.
func CheckName(plan string) string {
	if plan == "" {
		return "perfgate"
	}
	return "perfgate (" + plan + ")"
}

// Target is where the facts' check and comment go.
func (f *Facts) Target() CheckTarget {
	owner, repo, _ := strings.Cut(f.Repository, "/")
	return CheckTarget{Owner: owner, Repo: repo, SHA: f.CheckSHA(), Name: CheckName(f.Plan), Event: f.Event, PR: f.PR, Plan: f.Plan}
}
