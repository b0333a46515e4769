package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/client"
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
)

// DefaultServiceAudience is the audience docs/verdictd.md runs the service
// with (--oidc-audience perfgate-verdictd).
const DefaultServiceAudience = "perfgate-verdictd"

func init() { newServicePublisher = newVerdictService }

// serviceFlags are --service and --service-audience, shared by `verdict`
// and `attempts next`.
type serviceFlags struct {
	url, audience string
}

func addServiceFlags(fs *flag.FlagSet, s *IO) *serviceFlags {
	sf := &serviceFlags{}
	fs.StringVar(&sf.url, "service", s.Env(ServiceEnv), "the verdict service's URL: record the attempts there and let it decide (default $"+ServiceEnv+"; empty: decide here)")
	aud := s.Env(ServiceAudienceEnv)
	if aud == "" {
		aud = DefaultServiceAudience
	}
	fs.StringVar(&sf.audience, "service-audience", aud, "the audience of the job's OIDC token, the service's --oidc-audience (default $"+ServiceAudienceEnv+", else "+DefaultServiceAudience+")")
	return sf
}

// verdictService is one job's conversation with the service.
type verdictService struct {
	s   *IO
	url string
	c   *client.Client
}

func newVerdictService(sf *serviceFlags, s *IO) (verdictPublisher, error) {
	return dialService(sf, s)
}

// dialService builds the client and its credential. It makes no request:
// the OIDC token is asked for with the first one.
func dialService(sf *serviceFlags, s *IO) (*verdictService, error) {
	tok, err := serviceToken(s, sf.audience)
	if err != nil {
		return nil, err
	}
	c, err := client.New(sf.url, tok, nil)
	if err != nil {
		return nil, exit.Refuse(err)
	}
	return &verdictService{s: s, url: sf.url, c: c}, nil
}

// serviceToken is the repository token when one is given, else the job's
// Actions OIDC token. Each is masked before any request carries it, so
// no later log line of the job can show it.
func serviceToken(s *IO, audience string) (client.TokenSource, error) {
	if tok := strings.TrimSpace(s.Env(ServiceTokenEnv)); tok != "" {
		mask(s, tok)
		return client.StaticToken(tok), nil
	}
	oidc, err := client.ActionsOIDC(s.Env, audience, nil)
	if err != nil {
		return nil, fmt.Errorf("%w (or set %s)", err, ServiceTokenEnv)
	}
	// One token serves every request of this command: asking the runner
	// once keeps the job log to one mask and the runner to one request.
	// GitHub's tokens live several minutes, longer than a command runs.
	var mu sync.Mutex
	var cached string
	var at time.Time
	return func(ctx context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if cached != "" && time.Since(at) < 2*time.Minute {
			return cached, nil
		}
		t, err := oidc(ctx)
		if err != nil {
			return "", err
		}
		mask(s, t)
		cached, at = t, time.Now()
		return t, nil
	}, nil
}

func mask(s *IO, secret string) {
	if inActions(s) {
		githubactions.New(githubactions.WithGetenv(s.Env), githubactions.WithWriter(s.Out)).AddMask(secret)
	}
}

// warn says a problem on stderr, and as a workflow warning in Actions so
// it shows on the run's page.
func warn(s *IO, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if inActions(s) {
		githubactions.New(githubactions.WithGetenv(s.Env), githubactions.WithWriter(s.Out)).Warningf("%s", msg)
		return
	}
	fmt.Fprintln(s.Err, "warning: "+msg)
}

// refused reports whether the service answered and said no (4xx): its
// configuration or the attempt is wrong, and trying again will not help.
// Anything else (no answer, a 5xx, no OIDC token) means it is unreachable.
func refused(err error) bool {
	var api *client.APIError
	return errors.As(err, &api) && api.Status >= 400 && api.Status < 500 &&
		api.Status != http.StatusRequestTimeout && api.Status != http.StatusTooManyRequests
}

// PublishVerdict posts every attempt in order (a repeat of one `attempts
// next` already posted returns the stored one, and publishes the final
// verdict again if that had failed), then asks the service for its
// decision on the last attempt and prints it. An unreachable service is
// a warning: the verdict job's own exit code still stands, and the check
// the service would publish stays in progress, which a required check
// shows. A refusal is an error, because only a change of configuration
// makes the service's check complete.
func (v *verdictService) PublishVerdict(ctx context.Context, fv *attempts.Verdict) error {
	var last verdict.Facts
	for _, r := range fv.Attempts {
		sub, err := v.submission(r.Outcome, r.Report)
		if err != nil {
			return err
		}
		rc, err := v.c.PostAttempt(ctx, sub)
		if err != nil {
			if refused(err) {
				return exit.Refuse(err)
			}
			warn(v.s, "the verdict service %s is unreachable, so it recorded and published nothing: %v", v.url, err)
			return nil
		}
		if rc.PublishError != "" {
			warn(v.s, "the verdict service could not publish the verdict to GitHub: %s", rc.PublishError)
		}
		last = sub.Facts
	}
	d, err := v.c.Decision(ctx, last.Repository, last.RunID, last.Attempt)
	if err != nil {
		if refused(err) {
			return exit.Refuse(err)
		}
		warn(v.s, "the verdict service %s recorded the attempts but did not answer for its decision: %v", v.url, err)
		return nil
	}
	word := d.Verdict
	if word == "" {
		word = verdict.WordPending
	}
	fmt.Fprintf(v.s.Out, "service %s: attempt %d: %s (%s): %s\n", v.url, last.Attempt, d.Next, word, d.Reason)
	if d.Next == verdict.NextFinal && fv.HasFinal && d.Verdict != verdict.WordOf(fv.Code) {
		warn(v.s, "the verdict service's verdict is %s, this job's is %s: the service decided with its own policy (its --stall-prone list and the CPU models it learned)", d.Verdict, verdict.WordOf(fv.Code))
	}
	return nil
}

// decide posts the attempt that just ended and returns the service's
// decision on it; when the service cannot be asked, or refuses, it returns
// local (the local policy's) and says why, so an attempt job never loses
// its answer to the service.
func (v *verdictService) decide(ctx context.Context, o attempts.Outcome, reportPath string, local attempts.Decision) attempts.Decision {
	sub, err := v.submission(o, reportPath)
	if err == nil {
		var rc verdict.Receipt
		rc, err = v.c.PostAttempt(ctx, sub)
		if err == nil {
			d := rc.Attempt.Decision
			if got := rc.Attempt.Facts.RunAttempt; !rc.Created && got != sub.Facts.RunAttempt {
				// The service files an attempt once per run id, so a re-run
				// of the workflow gets back the first run's attempt, and a
				// decision about another outcome.
				err = fmt.Errorf("it holds attempt %d of run %d from run attempt %d, and answered with that one's decision", o.Number, sub.Facts.RunID, got)
			} else if d.Next != verdict.NextRetry && d.Next != verdict.NextFinal {
				err = fmt.Errorf("the service answered the decision %q, neither retry nor final", d.Next)
			} else {
				fmt.Fprintf(v.s.Err, "decided by the verdict service %s\n", v.url)
				return attempts.Decision{Next: attempts.Next(d.Next), Reason: d.Reason}
			}
		}
	}
	warn(v.s, "the verdict service %s did not decide (%v): the local policy decided instead", v.url, err)
	return local
}

// submission is one attempt's report and facts. The facts come from the
// GitHub environment of this job (every attempt job and the verdict job
// run for the same event), the report from the attempt's folder.
func (v *verdictService) submission(o attempts.Outcome, reportPath string) (verdict.Submission, error) {
	f, err := jobFacts(v.s)
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

// jobFacts are the facts of the run: the repository, the event and the
// commit it judges, and the run's id.
func jobFacts(s *IO) (verdict.Facts, error) {
	f := verdict.Facts{Repository: s.Env("GITHUB_REPOSITORY"), Event: s.Env(EventEnv)}
	if f.Event == "" {
		f.Event = s.Env("GITHUB_EVENT_NAME")
	}
	if f.Repository == "" || f.Event == "" {
		return f, exit.Refusef("GITHUB_REPOSITORY or GITHUB_EVENT_NAME is not set, so this is not a GitHub Actions job: the verdict service files attempts of workflow runs only")
	}
	var err error
	if f.RunID, err = strconv.ParseInt(s.Env("GITHUB_RUN_ID"), 10, 64); err != nil {
		return f, exit.Refusef("GITHUB_RUN_ID %q is not a run id: %w", s.Env("GITHUB_RUN_ID"), err)
	}
	f.RunAttempt, _ = strconv.Atoi(s.Env("GITHUB_RUN_ATTEMPT"))
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
	if path := s.Env("GITHUB_EVENT_PATH"); path != "" {
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
	f.HeadSHA = s.Env("GITHUB_SHA")
	switch f.Event {
	case "pull_request":
		f.HeadSHA, f.PR = p.PullRequest.Head.SHA, p.PullRequest.Number
	case "merge_group":
		f.MergeGroupSHA = p.MergeGroup.HeadSHA
		if f.MergeGroupSHA == "" {
			f.MergeGroupSHA = f.HeadSHA
		}
	case "release":
		f.Tag = s.Env(TagEnv)
		if f.Tag == "" {
			f.Tag = p.Release.TagName
		}
		if f.Tag == "" && s.Env("GITHUB_REF_TYPE") == "tag" {
			f.Tag = s.Env("GITHUB_REF_NAME")
		}
	}
	if srv := s.Env("GITHUB_SERVER_URL"); srv != "" {
		f.DetailsURL = fmt.Sprintf("%s/%s/actions/runs/%d", srv, f.Repository, f.RunID)
	}
	return f, nil
}

// attemptsNextService is the service's decision for `attempts next` when
// --service is set, else local.
func attemptsNextService(ctx context.Context, s *IO, sf *serviceFlags, o attempts.Outcome, reportPath string, local attempts.Decision) attempts.Decision {
	if sf == nil || sf.url == "" {
		return local
	}
	v, err := dialService(sf, s)
	if err != nil {
		warn(s, "the verdict service %s cannot be asked (%v): the local policy decided instead", sf.url, err)
		return local
	}
	return v.decide(ctx, o, reportPath, local)
}
