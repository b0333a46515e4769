package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/perfgate/perfgate/internal/verdict"
)

// checksPermission is what a token needs to create and update check runs.
const checksPermission = "checks: write"

// StartCheckOptions names the check run to mark in progress.
type StartCheckOptions struct {
	// SHA is the commit the check goes on: a pull request's head, a merge
	// group's head, or the pushed commit.
	SHA string
	// Name is the stable check name ("perfgate", "perfgate (<plan>)").
	Name       string
	DetailsURL string
}

// CompleteCheckOptions is the verdict for the named check run on SHA.
type CompleteCheckOptions struct {
	SHA        string
	Name       string
	DetailsURL string
	Outcome    verdict.Outcome
}

// StartCheck finds the check run named opts.Name on opts.SHA or creates it,
// and marks it in_progress. A run already in progress is left as it is, so
// calling again (a retried attempt arriving) changes nothing. A run
// already completed is left as it is too: a head and plan have one check
// run, and a re-run of the workflow ("Re-run all jobs") updates that run's
// conclusion when its final attempt ends, never adding a second one.
func (c *Client) StartCheck(ctx context.Context, owner, repo string, opts StartCheckOptions) (int64, error) {
	if err := checkTarget(owner, repo, opts.SHA, opts.Name); err != nil {
		return 0, err
	}
	opts.SHA = strings.ToLower(opts.SHA)
	run, err := c.findCheckRun(ctx, owner, repo, opts.SHA, opts.Name)
	if err != nil {
		return 0, err
	}
	if run != nil && (run.GetStatus() == "in_progress" || run.GetStatus() == "completed") {
		return run.GetID(), nil
	}
	if run != nil && run.GetStatus() != "completed" {
		// queued: someone created it without starting it.
		upd := github.UpdateCheckRunOptions{Name: opts.Name, Status: github.String("in_progress"), DetailsURL: optional(opts.DetailsURL)}
		if _, _, err := c.gh.Checks.UpdateCheckRun(ctx, owner, repo, run.GetID(), upd); err != nil {
			return 0, failed(err, checksPermission, "marking check run %q (%d) on %s in progress", opts.Name, run.GetID(), opts.SHA)
		}
		return run.GetID(), nil
	}
	created, _, err := c.gh.Checks.CreateCheckRun(ctx, owner, repo, github.CreateCheckRunOptions{
		Name:       opts.Name,
		HeadSHA:    opts.SHA,
		DetailsURL: optional(opts.DetailsURL),
		Status:     github.String("in_progress"),
		StartedAt:  &github.Timestamp{Time: time.Now()},
		Output: &github.CheckRunOutput{
			Title:   github.String("measuring"),
			Summary: github.String("perfgate is measuring this commit against its base; the verdict follows when the last attempt ends."),
		},
	})
	if err != nil {
		return 0, failed(err, checksPermission, "creating check run %q on %s", opts.Name, opts.SHA)
	}
	return created.GetID(), nil
}

// CompleteCheck completes the named check run on opts.SHA with the verdict:
// pass -> success; regression -> failure; cannot-judge -> failure titled
// "cannot judge". Never neutral or skipped: a required check counts both as
// passed, so a gate that could not judge would let the change through.
// The summary is cut to GitHub's limit with a note; annotations go 50 to a
// request, the first batch with the completion and the rest appended by
// further updates.
func (c *Client) CompleteCheck(ctx context.Context, owner, repo string, opts CompleteCheckOptions) (int64, error) {
	if err := checkTarget(owner, repo, opts.SHA, opts.Name); err != nil {
		return 0, err
	}
	opts.SHA = strings.ToLower(opts.SHA)
	conclusion, title, err := conclude(opts.Outcome)
	if err != nil {
		return 0, err
	}
	annotations, err := checkAnnotations(opts.Outcome.Annotations)
	if err != nil {
		return 0, err
	}
	summary, _ := cut(opts.Outcome.Summary, MaxCheckOutput)
	if summary == "" {
		summary = title // GitHub requires a summary with every output.
	}
	details := opts.DetailsURL
	if details == "" {
		details = opts.Outcome.DetailsURL
	}
	output := func(batch []*github.CheckRunAnnotation) *github.CheckRunOutput {
		return &github.CheckRunOutput{Title: github.String(title), Summary: github.String(summary), Annotations: batch}
	}
	first, rest := splitBatch(annotations)

	// The run to complete is the head and plan's one check run: in
	// progress, or completed by an earlier run attempt (a re-run updates
	// it), or a new one when the start was never published.
	id, err := c.StartCheck(ctx, owner, repo, StartCheckOptions{SHA: opts.SHA, Name: opts.Name, DetailsURL: details})
	if err != nil {
		return 0, err
	}
	_, _, err = c.gh.Checks.UpdateCheckRun(ctx, owner, repo, id, github.UpdateCheckRunOptions{
		Name:        opts.Name,
		DetailsURL:  optional(details),
		Status:      github.String("completed"),
		Conclusion:  github.String(conclusion),
		CompletedAt: &github.Timestamp{Time: time.Now()},
		Output:      output(first),
	})
	if err != nil {
		return id, failed(err, checksPermission, "completing check run %q (%d) on %s", opts.Name, id, opts.SHA)
	}
	for sent := len(first); len(rest) > 0; {
		var batch []*github.CheckRunAnnotation
		batch, rest = splitBatch(rest)
		// UpdateCheckRunOptions.Name has no omitempty: leaving it empty
		// would send "name":"" and rename the check.
		_, _, err := c.gh.Checks.UpdateCheckRun(ctx, owner, repo, id, github.UpdateCheckRunOptions{
			Name:   opts.Name,
			Output: output(batch),
		})
		if err != nil {
			return id, failed(err, checksPermission, "adding annotations %d-%d of %d to check run %q (%d)", sent+1, sent+len(batch), len(annotations), opts.Name, id)
		}
		sent += len(batch)
	}
	return id, nil
}

// findCheckRun returns the newest check run named name on sha, or nil.
// GitHub filters by name itself (check_name), and by App when the client
// is one (app_id); "latest" keeps the newest run of each name, the one
// GitHub shows and a required check reads.
func (c *Client) findCheckRun(ctx context.Context, owner, repo, sha, name string) (*github.CheckRun, error) {
	opts := &github.ListCheckRunsOptions{
		CheckName:   github.String(name),
		Filter:      github.String("latest"),
		ListOptions: github.ListOptions{PerPage: 100},
	}
	if c.appID != 0 {
		opts.AppID = &c.appID
	}
	var newest *github.CheckRun
	for {
		res, resp, err := c.gh.Checks.ListCheckRunsForRef(ctx, owner, repo, sha, opts)
		if err != nil {
			return nil, failed(err, "checks: read", "listing check runs named %q on %s", name, sha)
		}
		for _, r := range res.CheckRuns {
			if r.GetName() == name && (newest == nil || r.GetID() > newest.GetID()) {
				newest = r
			}
		}
		if resp.NextPage == 0 {
			return newest, nil
		}
		opts.Page = resp.NextPage
	}
}

// conclude maps a verdict word to the check's conclusion and title.
func conclude(o verdict.Outcome) (conclusion, title string, err error) {
	title = strings.TrimSpace(o.Title)
	switch o.Word {
	case verdict.WordPass:
		conclusion = "success"
		if title == "" {
			title = "pass"
		}
	case verdict.WordRegression:
		conclusion = "failure"
		if title == "" {
			title = "regression"
		}
	case verdict.WordCannotJudge:
		conclusion = "failure"
		if !strings.HasPrefix(title, "cannot judge") {
			title = strings.TrimSuffix("cannot judge: "+title, ": ")
		}
	default:
		return "", "", fmt.Errorf("publishing a verdict: %q is not a verdict (want %s, %s or %s)",
			o.Word, verdict.WordPass, verdict.WordRegression, verdict.WordCannotJudge)
	}
	return conclusion, title, nil
}

// checkAnnotations turns breaching metrics into GitHub's annotations,
// pinned to their plan lines (line 0 pins to the first line).
func checkAnnotations(in []verdict.Annotation) ([]*github.CheckRunAnnotation, error) {
	out := make([]*github.CheckRunAnnotation, 0, len(in))
	for i, a := range in {
		if a.Path == "" {
			return nil, fmt.Errorf("publishing annotation %d (%q): it names no file (want the plan's repository-relative path, for example perf/plan.toml)", i+1, a.Title)
		}
		line := max(a.Line, 1)
		msg := a.Message
		if msg == "" {
			msg = a.Title
		}
		msg, _ = cut(msg, MaxCheckOutput)
		out = append(out, &github.CheckRunAnnotation{
			Path:            github.String(a.Path),
			StartLine:       github.Int(line),
			EndLine:         github.Int(line),
			AnnotationLevel: github.String("failure"),
			Title:           optional(truncate(a.Title, MaxAnnotationTitle)),
			Message:         github.String(msg),
		})
	}
	return out, nil
}

// splitBatch takes the first request's worth of annotations.
func splitBatch(a []*github.CheckRunAnnotation) (batch, rest []*github.CheckRunAnnotation) {
	n := min(len(a), AnnotationsPerRequest)
	return a[:n], a[n:]
}

// checkTarget refuses a check that cannot land where GitHub shows it.
func checkTarget(owner, repo, sha, name string) error {
	switch {
	case owner == "" || repo == "":
		return errors.New("publishing a check: the repository's owner and name are both needed")
	case !isSHA(strings.ToLower(sha)):
		return fmt.Errorf("publishing check %q: %q is not a commit SHA (want the pull request's head SHA, the merge group's head SHA or the pushed commit, in full: 40 hex digits, or 64 in a SHA-256 repository)", name, sha)
	case strings.TrimSpace(name) == "":
		return errors.New("publishing a check: it has no name (want \"perfgate\" or \"perfgate (<plan name>)\")")
	}
	return nil
}

// isSHA accepts a full SHA-1 or SHA-256 commit name in lower case, the
// form GitHub reports head_sha in (StartCheck and CompleteCheck lower a
// name written in capitals, which git reads as the same commit); a branch or a short SHA would make
// GitHub attach the check somewhere else or nowhere.
func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// optional is nil for "", so omitempty leaves the field out.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
