package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/report"
)

func init() {
	register(Command{Name: "verdict", Summary: "the final verdict over every attempt's report folder (perf-report-attempt-<n>)", Run: runVerdict})
}

// AttemptFolderPrefix names each attempt's uploaded report folder:
// perf-report-attempt-<n>, n the attempt job's own number.
const AttemptFolderPrefix = "perf-report-attempt-"

var attemptFolderRe = regexp.MustCompile(`^` + AttemptFolderPrefix + `([1-9][0-9]*)$`)

// jobResults are the values GitHub gives needs.<job>.result.
var jobResults = map[string]bool{"success": true, "failure": true, "cancelled": true, "skipped": true}

// AttemptRow is one attempt as the verdict sees it.
type AttemptRow struct {
	Outcome attempts.Outcome
	// Decision is what followed the attempt: kept by `attempts next` in
	// the attempt's record, else decided again from the outcome.
	Decision attempts.Decision
	// JobResult is needs.attempt-<n>.result when the workflow passed it.
	JobResult string
	// Folder is the attempt's report folder; Report and Summary the files
	// found in it ("" when absent).
	Folder, Report, Summary string
}

// FinalVerdict is the verdict over every attempt that ran.
type FinalVerdict struct {
	Attempts []AttemptRow
	// Final is the last attempt that ran to an exit code; HasFinal is
	// false when none did.
	Final    attempts.Outcome
	HasFinal bool
	// Code is the gate's exit code: the final attempt's, or 2 without one.
	Code int
}

// VerdictPublisher is told the final verdict after the job summary is
// written. It is the seam for the verdict service: when
// newServicePublisher is set, `perfgate verdict` gains --service URL and
// publishes through it.
type VerdictPublisher interface {
	PublishVerdict(ctx context.Context, v *FinalVerdict) error
}

// newServicePublisher builds the verdict service's publisher from
// --service URL and its audience; verdict_service.go wires it.
var newServicePublisher func(sf *serviceFlags, s *IO) (VerdictPublisher, error)

func runVerdict(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("verdict", s)
	dir := fs.String("reports", "", "the folder holding every attempt's downloaded report folder, perf-report-attempt-<n>")
	out := fs.String("out", "target/perf-verdict", "where to write summary.md")
	results := fs.String("job-results", "", "needs.attempt-<n>.result of each attempt job in order, comma-separated (success, failure, cancelled, skipped)")
	stall := fs.String("stall-prone", s.Env(StallProneEnv), "CPU models on which a regression is retried, comma-separated (default $"+StallProneEnv+")")
	var service *serviceFlags
	if newServicePublisher != nil {
		service = addServiceFlags(fs, s)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return exit.Refusef("verdict: give --reports DIR, the folder the attempts' report artifacts were downloaded to")
	}
	if fs.NArg() > 0 {
		return exit.Refusef("verdict: unexpected argument %q (see `perfgate verdict -h`)", fs.Arg(0))
	}
	jr, err := parseJobResults(*results)
	if err != nil {
		return err
	}
	v, err := collectVerdict(*dir, jr, attempts.Policy{StallProne: attempts.ParseStallProne(*stall)})
	if err != nil {
		return err
	}
	md, err := verdictMarkdown(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("writing the verdict's summary: %w", err)
	}
	path := filepath.Join(*out, gate.SummaryFile)
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		return fmt.Errorf("writing the verdict's summary: %w", err)
	}
	fmt.Fprint(s.Out, verdictText(v))
	fmt.Fprintf(s.Out, "summary: %s\n", path)
	if err := appendStepSummary(s, path); err != nil {
		return err
	}
	if service != nil && service.url != "" {
		p, err := newServicePublisher(service, s)
		if err != nil {
			// No credential (a fork's pull request gets no OIDC token): the
			// verdict above stands, the service just never hears of it.
			warn(s, "not publishing to the verdict service %s: %v", service.url, err)
		} else if err := p.PublishVerdict(ctx, v); err != nil {
			return fmt.Errorf("publishing the verdict to %s: %w", service.url, err)
		}
	}
	return finalError(v)
}

func parseJobResults(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for i, r := range strings.Split(s, ",") {
		r = strings.TrimSpace(r)
		if !jobResults[r] {
			return nil, exit.Refusef("verdict: --job-results item %d is %q: give needs.attempt-<n>.result, one of success, failure, cancelled, skipped", i+1, r)
		}
		out = append(out, r)
	}
	return out, nil
}

// collectVerdict reads every attempt's folder under dir and decides.
func collectVerdict(dir string, jobResults []string, policy attempts.Policy) (*FinalVerdict, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !(len(jobResults) > 0 && os.IsNotExist(err)) {
		return nil, exit.Refuse(fmt.Errorf("verdict: reading the attempts' reports: %w", err))
	}
	rows := map[int]*AttemptRow{}
	row := func(n int) *AttemptRow {
		if rows[n] == nil {
			rows[n] = &AttemptRow{Outcome: attempts.Outcome{Number: n}}
		}
		return rows[n]
	}
	for _, e := range entries {
		m := attemptFolderRe.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		r := row(n)
		r.Folder = filepath.Join(dir, e.Name())
		if err := r.read(); err != nil {
			return nil, err
		}
	}
	for i, res := range jobResults {
		if res == "skipped" && rows[i+1] == nil {
			continue // the attempt never ran
		}
		row(i + 1).JobResult = res
	}
	if len(rows) == 0 {
		return nil, exit.Refusef("verdict: %s holds no %s<n> folder and no attempt ran: download the attempts' report artifacts there (see docs/action.md)", dir, AttemptFolderPrefix)
	}
	v := &FinalVerdict{}
	for _, r := range rows {
		if r.Decision.Next == "" {
			r.Decision = policy.Decide(r.Outcome)
		}
		v.Attempts = append(v.Attempts, *r)
	}
	sort.Slice(v.Attempts, func(i, j int) bool { return v.Attempts[i].Outcome.Number < v.Attempts[j].Outcome.Number })
	outcomes := make([]attempts.Outcome, len(v.Attempts))
	for i, r := range v.Attempts {
		outcomes[i] = r.Outcome
	}
	v.Final, v.HasFinal = attempts.FinalOf(outcomes)
	v.Code = exit.CannotJudge
	if v.HasFinal {
		v.Code = attempts.Code(v.Final)
	}
	return v, nil
}

// read fills the row from its folder: the record `attempts next` kept,
// else the report's own verdict, else an attempt that ended without one.
func (r *AttemptRow) read() error {
	found := map[string]string{}
	err := filepath.WalkDir(r.Folder, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || (name != "attempt.json" && name != gate.ReportFile && name != gate.SummaryFile) {
			return nil
		}
		if old, ok := found[name]; !ok || len(p) < len(old) {
			found[name] = p
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("verdict: reading %s: %w", r.Folder, err)
	}
	r.Report, r.Summary = found[gate.ReportFile], found[gate.SummaryFile]
	n := r.Outcome.Number
	if p, ok := found["attempt.json"]; ok {
		rec, err := readAttemptRecord(p)
		if err != nil {
			return err
		}
		if rec.Attempt != n {
			return exit.Refusef("%s: the record says attempt %d but its folder is attempt %d: upload each attempt's report as %s<its own number>", p, rec.Attempt, n, AttemptFolderPrefix)
		}
		r.Outcome = rec.Outcome()
		r.Decision = attempts.Decision{Next: rec.Next, Reason: rec.Reason}
		return nil
	}
	if r.Report != "" {
		rep, err := report.Read(r.Report)
		if err != nil {
			return err
		}
		r.Outcome = attempts.Outcome{Number: n, HasExitCode: true, ExitCode: int(rep.Verdict.Code), CPUModel: rep.CPUModel}
	}
	return nil
}

// word is an attempt's verdict in the table.
func (r AttemptRow) word() string {
	if !r.Outcome.HasExitCode {
		if r.JobResult != "" {
			return "no exit code (job " + r.JobResult + ")"
		}
		return "no exit code"
	}
	if w, ok := verdicts[r.Outcome.ExitCode]; ok {
		return w
	}
	return fmt.Sprintf("exit %d", r.Outcome.ExitCode)
}

func verdictMarkdown(v *FinalVerdict) (string, error) {
	var b strings.Builder
	mark := report.Mark(v.Code)
	if v.HasFinal {
		fmt.Fprintf(&b, "## %s perfgate verdict: %s (attempt %d)\n\n", mark, verdicts[v.Code], v.Final.Number)
	} else {
		fmt.Fprintf(&b, "## %s perfgate verdict: %s (no attempt ran to an exit code)\n\n", mark, verdicts[v.Code])
	}
	b.WriteString("| attempt | CPU model | verdict | what followed |\n|---:|---|---|---|\n")
	for _, r := range v.Attempts {
		model := r.Outcome.CPUModel
		if model == "" {
			model = "unknown"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s: %s |\n", r.Outcome.Number, mdCell(model), r.word(), r.Decision.Next, mdCell(r.Decision.Reason))
	}
	b.WriteString("\n")
	for _, r := range v.Attempts {
		if !v.HasFinal || r.Outcome.Number != v.Final.Number || r.Summary == "" {
			continue
		}
		md, err := os.ReadFile(r.Summary)
		if err != nil {
			return "", fmt.Errorf("reading attempt %d's summary: %w", r.Outcome.Number, err)
		}
		fmt.Fprintf(&b, "### The final attempt (%d)\n\n", r.Outcome.Number)
		b.Write(md)
	}
	return b.String(), nil
}

func mdCell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }

func verdictText(v *FinalVerdict) string {
	var b strings.Builder
	for _, r := range v.Attempts {
		fmt.Fprintf(&b, "attempt %d on %s: %s; %s: %s\n", r.Outcome.Number, orUnknownModel(r.Outcome.CPUModel), r.word(), r.Decision.Next, r.Decision.Reason)
	}
	if v.HasFinal {
		fmt.Fprintf(&b, "verdict: %s (attempt %d)\n", verdicts[v.Code], v.Final.Number)
	} else {
		fmt.Fprintf(&b, "verdict: %s (no attempt ran to an exit code)\n", verdicts[v.Code])
	}
	return b.String()
}

func orUnknownModel(m string) string {
	if m == "" {
		return "an unknown CPU model"
	}
	return m
}

// finalError carries the final verdict's exit code.
func finalError(v *FinalVerdict) error {
	switch {
	case !v.HasFinal:
		return exit.Refusef("cannot judge: no attempt ran to an exit code")
	case v.Code == exit.Pass:
		return nil
	case v.Code == exit.Regression:
		return exit.Regressionf("regression: attempt %d on %s", v.Final.Number, orUnknownModel(v.Final.CPUModel))
	}
	return exit.Refusef("cannot judge: attempt %d on %s could not be judged", v.Final.Number, orUnknownModel(v.Final.CPUModel))
}
