package cli

import (
	"context"
	"fmt"

	"github.com/sethvargo/go-githubactions"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/host"
)

// defaultAttemptRecord is where `attempts next` keeps the attempt's record,
// beside the report the attempt job uploads.
const defaultAttemptRecord = contract.DefaultTarget + "/" + contract.RunDirName + "/" + attempts.RecordFile

// defaultAttemptReport is where `perfgate run` writes the attempt's report.
const defaultAttemptReport = contract.DefaultTarget + "/" + contract.RunDirName + "/" + gate.ReportFile

// runAttemptsNext answers "retry or final?" for the attempt that just
// ended, with the rules of internal/attempts: it prints the answer and a
// one-line reason, sets the step outputs next and reason, and keeps both in
// the attempt's record for the verdict job.
func runAttemptsNext(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("attempts next", s)
	number := fs.Int("attempt", 0, "the attempt's own number, from 1")
	code := fs.String("exit-code", "", "the gate's exit code (0, 1, 2, or another code a crash left)")
	noCode := fs.Bool("no-exit-code", false, "the attempt ended without an exit code (runner shut down, job time limit)")
	cancelled := fs.Bool("workflow-cancelled", false, "the workflow itself was cancelled (concurrency group or a person): no retry")
	model := fs.String("cpu-model", "", "the runner's CPU model (default: this machine's, from /proc/cpuinfo)")
	stall := fs.String("stall-prone", s.Env(attempts.StallProneEnv), "CPU models on which a regression is retried, comma-separated (default $"+attempts.StallProneEnv+")")
	maxRetries := fs.Int("max-retries", attempts.DefaultMaxRetries, "attempts that may follow the first")
	record := fs.String("record", defaultAttemptRecord, "where to keep the attempt's record for `perfgate verdict` (empty: nowhere)")
	reportPath := fs.String("report", defaultAttemptReport, "the attempt's JSON report, posted to --service with the attempt")
	service := addServiceFlags(fs, s)
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return exit.Refusef("attempts next: unexpected argument %q (see `perfgate attempts next -h`)", fs.Arg(0))
	}
	if err := checkServiceURL(service); err != nil {
		return err
	}
	in := attempts.Question{Number: *number, ExitCode: *code, NoExitCode: *noCode, WorkflowCancelled: *cancelled, CPUModel: *model,
		StallProne: *stall, MaxRetries: *maxRetries}
	if in.CPUModel == "" {
		in.CPUModel = host.CPUModel()
	}
	o, d, err := in.Decide()
	if err != nil {
		return err
	}
	// With a service, its decision (its policy, the CPU models it learned
	// stall) replaces the local one; the local one stands when it cannot
	// be asked.
	d = attemptsNextService(ctx, s, service, o, *reportPath, d)
	if *record != "" {
		if err := attempts.WriteRecord(*record, attempts.NewRecord(o, d, host.Facts(s.Env).RunAttempt)); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.Out, "%s\n%s\n", d.Next, d.Reason)
	if s.Env("GITHUB_OUTPUT") != "" {
		a := githubactions.New(githubactions.WithGetenv(s.Env), githubactions.WithWriter(s.Err))
		a.SetOutput("next", string(d.Next))
		a.SetOutput("reason", d.Reason)
	}
	return nil
}
