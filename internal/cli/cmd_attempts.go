package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/host"
	"github.com/sethvargo/go-githubactions"
)

func init() {
	register(Command{Name: "attempts next", Summary: "after an attempt: retry on a fresh runner, or final (prints which and why)", Run: runAttemptsNext})
}

// StallProneEnv is the workflow's list of CPU models on which a regression
// is retried, comma-separated.
const StallProneEnv = "STALL_PRONE"

// DefaultAttemptRecord is where `attempts next` keeps the attempt's record,
// beside the report the attempt job uploads.
const DefaultAttemptRecord = contract.DefaultTarget + "/" + contract.RunDirName + "/attempt.json"

// DefaultAttemptReport is where `perfgate run` writes the attempt's report.
const DefaultAttemptReport = contract.DefaultTarget + "/" + contract.RunDirName + "/" + gate.ReportFile

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
	stall := fs.String("stall-prone", s.Env(StallProneEnv), "CPU models on which a regression is retried, comma-separated (default $"+StallProneEnv+")")
	maxRetries := fs.Int("max-retries", attempts.DefaultMaxRetries, "attempts that may follow the first")
	record := fs.String("record", DefaultAttemptRecord, "where to keep the attempt's record for `perfgate verdict` (empty: nowhere)")
	reportPath := fs.String("report", DefaultAttemptReport, "the attempt's JSON report, posted to --service with the attempt")
	service := addServiceFlags(fs, s)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return exit.Refusef("attempts next: unexpected argument %q (see `perfgate attempts next -h`)", fs.Arg(0))
	}
	if *number < 1 {
		return exit.Refusef("attempts next: --attempt %d: give the attempt's own number, 1 for the first", *number)
	}
	if *maxRetries < 0 {
		return exit.Refusef("attempts next: --max-retries %d: give 0 or more", *maxRetries)
	}
	o := attempts.Outcome{Number: *number, WorkflowCancelled: *cancelled, CPUModel: *model}
	if o.CPUModel == "" {
		o.CPUModel = host.CPUModel()
	}
	switch c := strings.TrimSpace(*code); {
	case *noCode && c != "":
		return exit.Refusef("attempts next: --exit-code %s and --no-exit-code both given: give one", c)
	case *noCode:
	case c == "":
		return exit.Refusef("attempts next: give --exit-code C, or --no-exit-code for an attempt that ended without one")
	default:
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 || n > 255 {
			return exit.Refusef("attempts next: --exit-code %q: give a process exit code, 0 to 255", c)
		}
		o.HasExitCode, o.ExitCode = true, n
	}
	policy := attempts.Policy{StallProne: attempts.ParseStallProne(*stall), MaxRetries: *maxRetries}
	if *maxRetries == 0 {
		policy.MaxRetries = -1 // the flag's 0 means none; the policy's 0 means the default
	}
	d := policy.Decide(o)
	// With a service, its decision (its policy, the CPU models it learned
	// stall) replaces the local one; the local one stands when it cannot
	// be asked.
	d = attemptsNextService(ctx, s, service, o, *reportPath, d)
	if *record != "" {
		if err := writeAttemptRecord(*record, attempts.NewRecord(o, d, host.Facts(s.Env).RunAttempt)); err != nil {
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

func writeAttemptRecord(path string, r attempts.Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("keeping the attempt's record: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("keeping the attempt's record: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("keeping the attempt's record: %w", err)
	}
	return nil
}

// readAttemptRecord reads a record `attempts next` kept.
func readAttemptRecord(path string) (attempts.Record, error) {
	var r attempts.Record
	b, err := os.ReadFile(path)
	if err != nil {
		return r, fmt.Errorf("reading the attempt's record: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, exit.Refusef("%s: not an attempt record (%v): it is written by `perfgate attempts next`", path, err)
	}
	if r.Attempt < 1 {
		return r, exit.Refusef("%s: attempt %d: an attempt record counts from 1; it is written by `perfgate attempts next`", path, r.Attempt)
	}
	return r, nil
}
