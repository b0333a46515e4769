package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/sethvargo/go-githubactions"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/verdict/client"
)

// The verdict service's client lives in internal/verdict/client: what a
// job sends (its facts, its reports) and how it takes the answer. This file
// wires its flags, the job log's masks and warnings to it.

// serviceFlags are --service and --service-audience, shared by `verdict`
// and `attempts next`.
type serviceFlags struct {
	url, audience string
}

func addServiceFlags(fs *flag.FlagSet, s *IO) *serviceFlags {
	sf := &serviceFlags{}
	fs.StringVar(&sf.url, "service", s.Env(client.ServiceEnv), "the verdict service's URL: record the attempts there and let it decide (default $"+client.ServiceEnv+"; empty: decide here)")
	aud := s.Env(client.ServiceAudienceEnv)
	if aud == "" {
		aud = client.DefaultServiceAudience
	}
	fs.StringVar(&sf.audience, "service-audience", aud, "the audience of the job's OIDC token, the service's --oidc-audience (default $"+client.ServiceAudienceEnv+", else "+client.DefaultServiceAudience+")")
	return sf
}

// verdictService is `perfgate verdict`'s publisher through the service.
type verdictService struct{ job *client.Job }

func newVerdictService(sf *serviceFlags, s *IO) (verdictPublisher, error) {
	j, err := dialService(sf, s)
	if err != nil {
		return nil, err
	}
	return &verdictService{job: j}, nil
}

// checkServiceURL refuses (exit 2) an address the client would never use,
// one with a user name or password among them. Both commands call it
// before anything else quotes the address: the warning of a job without a
// credential (a fork's pull request) names the address, and a password in
// it would reach the job's log.
func checkServiceURL(sf *serviceFlags) error {
	if sf.url == "" {
		return nil
	}
	if _, err := client.New(sf.url, nil, nil); err != nil {
		return exit.Refuse(err)
	}
	return nil
}

// dialService builds the client and its credential. It makes no request:
// the OIDC token is asked for with the first one.
func dialService(sf *serviceFlags, s *IO) (*client.Job, error) {
	tok, err := client.JobToken(s.Env, sf.audience, func(secret string) { mask(s, secret) })
	if err != nil {
		return nil, err
	}
	c, err := client.New(sf.url, tok, nil)
	if err != nil {
		return nil, exit.Refuse(err)
	}
	if s.ServiceBackoff > 0 {
		c.Backoff = s.ServiceBackoff
	}
	return &client.Job{URL: sf.url, Client: c, Getenv: s.Env, Out: s.Out, Err: s.Err, Warn: func(format string, a ...any) { warn(s, format, a...) }}, nil
}

// PublishVerdict posts the verdict's attempts to the service (client.Job.Publish).
func (v *verdictService) PublishVerdict(ctx context.Context, fv *attempts.Verdict) error {
	posted := make([]client.Posted, len(fv.Attempts))
	for i, r := range fv.Attempts {
		posted[i] = client.Posted{Outcome: r.Outcome, Report: r.Report}
	}
	return v.job.Publish(ctx, posted, fv.HasFinal, fv.Code)
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

// attemptsNextService is the service's decision for `attempts next` when
// --service is set, else local.
func attemptsNextService(ctx context.Context, s *IO, sf *serviceFlags, o attempts.Outcome, reportPath string, local attempts.Decision) attempts.Decision {
	if sf == nil || sf.url == "" {
		return local
	}
	j, err := dialService(sf, s)
	if err != nil {
		warn(s, "the verdict service %s cannot be asked (%v): the local policy decided instead", sf.url, err)
		return local
	}
	return j.Decide(ctx, o, reportPath, local)
}
