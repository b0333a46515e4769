package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
)

// verdictPublisher is told the final verdict after the job summary is
// written: the verdict service's client (verdict_service.go), when
// --service names one.
type verdictPublisher interface {
	PublishVerdict(ctx context.Context, v *attempts.Verdict) error
}

// runVerdict is the verdict job: internal/attempts reads the attempts'
// folders and decides; the summary is written and the verdict printed.
func runVerdict(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("verdict", s)
	dir := fs.String("reports", "", "the folder holding every attempt's downloaded report folder, perf-report-attempt-<n>")
	out := fs.String("out", "target/perf-verdict", "where to write summary.md")
	results := fs.String("job-results", "", "needs.attempt-<n>.result of each attempt job in order, comma-separated (success, failure, cancelled, skipped)")
	stall := fs.String("stall-prone", s.Env(attempts.StallProneEnv), "CPU models on which a regression is retried, comma-separated (default $"+attempts.StallProneEnv+")")
	service := addServiceFlags(fs, s)
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return exit.Refusef("verdict: give --reports DIR, the folder the attempts' report artifacts were downloaded to")
	}
	if fs.NArg() > 0 {
		return exit.Refusef("verdict: unexpected argument %q (see `perfgate verdict -h`)", fs.Arg(0))
	}
	if err := checkServiceURL(service); err != nil {
		return err
	}
	jr, err := attempts.ParseJobResults(*results)
	if err != nil {
		return err
	}
	files := attempts.Files{Report: gate.ReportFile, Summary: gate.SummaryFile}
	v, err := attempts.Collect(*dir, jr, attempts.Policy{StallProne: attempts.ParseStallProne(*stall)}, files)
	if err != nil {
		return err
	}
	path := filepath.Join(*out, gate.SummaryFile)
	if err := v.WriteMarkdown(path); err != nil {
		return err
	}
	fmt.Fprint(s.Out, v.Text())
	fmt.Fprintf(s.Out, "summary: %s\n", path)
	if err := appendStepSummary(s, path); err != nil {
		return err
	}
	if service.url != "" {
		p, err := newVerdictService(service, s)
		if err != nil {
			// No credential (a fork's pull request gets no OIDC token): the
			// verdict above stands, the service just never hears of it.
			warn(s, "not publishing to the verdict service %s: %v", service.url, err)
		} else if err := p.PublishVerdict(ctx, v); err != nil {
			return fmt.Errorf("publishing the verdict to %s: %w", service.url, err)
		}
	}
	return v.Err()
}
