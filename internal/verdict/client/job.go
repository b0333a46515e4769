package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/verdict"
)

// The environment of the verdict service's client. The reusable workflow
// sets them from its inputs, so one repository variable switches a gate
// between local decisions and the service.
const (
	// ServiceEnv is the verdict service's URL; empty: decide locally.
	ServiceEnv = "PERFGATE_SERVICE"
	// ServiceTokenEnv is a repository token (`perfgate-verdictd token
	// add`), sent instead of the job's OIDC token.
	ServiceTokenEnv = "PERFGATE_SERVICE_TOKEN"
	// ServiceAudienceEnv is the audience the job's OIDC token is asked
	// for; it must be the service's --oidc-audience.
	ServiceAudienceEnv = "PERFGATE_SERVICE_AUDIENCE"
	// EventEnv and TagEnv name the event the gate judged when it is not
	// the job's own: release.yml runs on a pushed tag but judges a release.
	EventEnv = "PERFGATE_EVENT"
	TagEnv   = "PERFGATE_TAG"
	// GateEnv is the gate's name (the reusable workflow's gate output,
	// which also names its artifacts): the plan the attempts are of, so two
	// plans in one run get a check and a comment each.
	GateEnv = "PERFGATE_GATE"
)

// DefaultServiceAudience is the audience docs/verdictd.md runs the service
// with (--oidc-audience perfgate-verdictd).
const DefaultServiceAudience = "perfgate-verdictd"

// JobToken is the repository token when one is given, else the job's
// Actions OIDC token. mask is told each before any request carries it
// (the job log's ::add-mask::), so no later log line can show it.
func JobToken(getenv func(string) string, audience string, mask func(secret string)) (TokenSource, error) {
	if tok := strings.TrimSpace(getenv(ServiceTokenEnv)); tok != "" {
		mask(tok)
		return StaticToken(tok), nil
	}
	oidc, err := ActionsOIDC(getenv, audience, nil)
	if err != nil {
		return nil, fmt.Errorf("%w (or set %s)", err, ServiceTokenEnv)
	}
	// A fresh token for every request, retries included: the service
	// accepts each token's jti once (a replayed token is refused), so a
	// token kept for a second request would be refused as a replay.
	return func(ctx context.Context) (string, error) {
		t, err := oidc(ctx)
		if err != nil {
			return "", err
		}
		mask(t)
		return t, nil
	}, nil
}

// Job is one GitHub Actions job's conversation with the service: what
// `perfgate attempts next --service` and `perfgate verdict --service` send
// and how they take the answer.
type Job struct {
	URL    string
	Client *Client
	// Getenv reads the job's GitHub environment (GITHUB_REPOSITORY, ...).
	Getenv func(string) string
	// Out gets the service's decision line; Err the note that the service
	// decided; Warn a problem that leaves the job's own answer standing.
	Out, Err io.Writer
	Warn     func(format string, a ...any)
}

// Posted is one attempt as `perfgate verdict` found it: its outcome and
// the path of its JSON report ("" when it left none).
type Posted struct {
	Outcome attempts.Outcome
	Report  string
}

// Refused reports whether the service answered and said no (4xx): its
// configuration or the attempt is wrong, and trying again will not help.
// Anything else (no answer, a 5xx, no OIDC token) means it is unreachable.
func Refused(err error) bool {
	var api *APIError
	return errors.As(err, &api) && api.Status >= 400 && api.Status < 500 &&
		api.Status != http.StatusRequestTimeout && api.Status != http.StatusTooManyRequests
}

// Publish posts every attempt in order (a repeat of one `attempts next`
// already posted returns the stored one, and publishes the final verdict's
// failed targets again), then asks the service for its decision on the
// last attempt and prints it. An unreachable service is a warning: the
// verdict job's own exit code still stands, and the check the service
// would publish stays in progress, which a required check shows. A refusal
// is an exit 2 error, because only a change of configuration makes the
// service's check complete. hasFinal and code are the job's own verdict,
// compared with the service's.
func (j *Job) Publish(ctx context.Context, posted []Posted, hasFinal bool, code int) error {
	var last verdict.Facts
	for _, p := range posted {
		sub, err := j.Submission(p.Outcome, p.Report)
		if err != nil {
			return err
		}
		rc, err := j.Client.PostAttempt(ctx, sub)
		if err != nil {
			if Refused(err) {
				return exit.Refuse(err)
			}
			j.Warn("the verdict service %s is unreachable, so it recorded and published nothing: %v", j.URL, err)
			return nil
		}
		if rc.PublishError != "" {
			j.Warn("the verdict service could not publish the verdict to GitHub: %s", rc.PublishError)
		}
		last = sub.Facts
	}
	d, err := j.Client.Decision(ctx, last.Key(), last.Attempt)
	if err != nil {
		if Refused(err) {
			return exit.Refuse(err)
		}
		j.Warn("the verdict service %s recorded the attempts but did not answer for its decision: %v", j.URL, err)
		return nil
	}
	word := d.Verdict
	if word == "" {
		word = verdict.WordPending
	}
	fmt.Fprintf(j.Out, "service %s: attempt %d: %s (%s): %s\n", j.URL, last.Attempt, d.Next, word, d.Reason)
	if d.Next == verdict.NextFinal && hasFinal && d.Verdict != verdict.WordOf(code) {
		j.Warn("the verdict service's verdict is %s, this job's is %s: the service decided with its own policy (its --stall-prone list and the CPU models it learned)", d.Verdict, verdict.WordOf(code))
	}
	return nil
}

// Decide posts the attempt that just ended and returns the service's
// decision on it; when the service cannot be asked, or refuses, it returns
// local (the local policy's) and says why, so an attempt job never loses
// its answer to the service.
func (j *Job) Decide(ctx context.Context, o attempts.Outcome, reportPath string, local attempts.Decision) attempts.Decision {
	sub, err := j.Submission(o, reportPath)
	if err == nil {
		var rc verdict.Receipt
		rc, err = j.Client.PostAttempt(ctx, sub)
		if err == nil {
			d := rc.Attempt.Decision
			if d.Next != verdict.NextRetry && d.Next != verdict.NextFinal {
				err = fmt.Errorf("the service answered the decision %q, neither retry nor final", d.Next)
			} else {
				fmt.Fprintf(j.Err, "decided by the verdict service %s\n", j.URL)
				return attempts.Decision{Next: attempts.Next(d.Next), Reason: d.Reason}
			}
		}
	}
	j.Warn("the verdict service %s did not decide (%v): the local policy decided instead", j.URL, err)
	return local
}

// Submission is one attempt's report and facts. The facts come from the
// GitHub environment of this job (every attempt job and the verdict job
// run for the same event), the report from the attempt's folder: the base
// SHA it names, its run attempt when the environment has none.
func (j *Job) Submission(o attempts.Outcome, reportPath string) (verdict.Submission, error) {
	f, err := JobFacts(j.Getenv)
	if err != nil {
		return verdict.Submission{}, err
	}
	f.Attempt, f.CPUModel, f.WorkflowCancelled = o.Number, o.CPUModel, o.WorkflowCancelled
	if o.HasExitCode {
		code := o.ExitCode
		f.ExitCode = &code
	}
	sub := verdict.Submission{Facts: f, Report: json.RawMessage("null")}
	if reportPath == "" || !o.HasExitCode {
		return sub, nil
	}
	raw, err := os.ReadFile(reportPath)
	if errors.Is(err, os.ErrNotExist) {
		return sub, nil // the service says whether this exit code needs one
	}
	if err != nil {
		return sub, fmt.Errorf("reading attempt %d's report: %w", o.Number, err)
	}
	var rep report.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		return sub, exit.Refusef("%s: not a perfgate report (%v)", reportPath, err)
	}
	if fullSHA.MatchString(rep.Base.Commit) {
		sub.Facts.BaseSHA = rep.Base.Commit
	}
	if sub.Facts.RunAttempt == 0 {
		sub.Facts.RunAttempt = rep.RunAttempt
	}
	sub.Report = raw
	return sub, nil
}

var fullSHA = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// JobFacts are the facts of the run: the repository, the event and the
// commit it judges, the run's id and run attempt, and the plan.
func JobFacts(getenv func(string) string) (verdict.Facts, error) {
	f := verdict.Facts{Repository: getenv("GITHUB_REPOSITORY"), Event: getenv(EventEnv), Plan: verdict.PlanOf(getenv(GateEnv))}
	if f.Event == "" {
		f.Event = getenv("GITHUB_EVENT_NAME")
	}
	if f.Repository == "" || f.Event == "" {
		return f, exit.Refusef("GITHUB_REPOSITORY or GITHUB_EVENT_NAME is not set, so this is not a GitHub Actions job: the verdict service files attempts of workflow runs only")
	}
	var err error
	if f.RunID, err = strconv.ParseInt(getenv("GITHUB_RUN_ID"), 10, 64); err != nil {
		return f, exit.Refusef("GITHUB_RUN_ID %q is not a run id: %w", getenv("GITHUB_RUN_ID"), err)
	}
	// "Re-run all jobs" keeps the run id and raises the run attempt: the
	// service judges each run attempt on its own.
	f.RunAttempt, _ = strconv.Atoi(getenv("GITHUB_RUN_ATTEMPT"))
	var p struct {
		PullRequest struct {
			Number int `json:"number"`
			Head   struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
		MergeGroup struct {
			HeadSHA string `json:"head_sha"`
		} `json:"merge_group"`
		Release struct {
			TagName string `json:"tag_name"`
		} `json:"release"`
	}
	if path := getenv("GITHUB_EVENT_PATH"); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return f, exit.Refuse(fmt.Errorf("reading the GitHub event payload: %w", err))
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return f, exit.Refusef("%s: the GitHub event payload is not JSON: %w", path, err)
		}
	}
	// The check goes on the pull request's head, never on GITHUB_SHA,
	// the merge commit a pull_request run checks out.
	f.HeadSHA = getenv("GITHUB_SHA")
	switch f.Event {
	case "pull_request":
		f.HeadSHA, f.PR = p.PullRequest.Head.SHA, p.PullRequest.Number
	case "merge_group":
		f.MergeGroupSHA = p.MergeGroup.HeadSHA
		if f.MergeGroupSHA == "" {
			f.MergeGroupSHA = f.HeadSHA
		}
	case "release":
		f.Tag = getenv(TagEnv)
		if f.Tag == "" {
			f.Tag = p.Release.TagName
		}
		if f.Tag == "" && getenv("GITHUB_REF_TYPE") == "tag" {
			f.Tag = getenv("GITHUB_REF_NAME")
		}
	}
	if srv := getenv("GITHUB_SERVER_URL"); srv != "" {
		f.DetailsURL = fmt.Sprintf("%s/%s/actions/runs/%d", srv, f.Repository, f.RunID)
	}
	return f, nil
}
