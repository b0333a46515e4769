package experiment

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

// PlanOptions are perfgate experiment's inputs: the plan file whose
// [experiment] table says what to run, and the command line's settings.
type PlanOptions struct {
	Plan, Target string
	Out, HTML    string // the JSON and HTML reports' files; "" for none
	Previous     string // an earlier JSON report to compare the knee with
	Shard        string // "i/N", or "/N" with i from JOB_COMPLETION_INDEX
	Start        string // the shards' shared schedule origin, RFC 3339
	OnError      string // the clients model's on_error: abort or continue
	CAFile       string
	PID          int // the target's process, sampled for a plateau's growth
	Seed         int64
	Vars         []string
	// Repeat runs the experiment that many times one after another and
	// sets the runs side by side (SideBySideOf); 0 or 1 runs it once. Out
	// then names each run's file (report.json: report-1.json, ...).
	Repeat int
	// Post, when set, files the run's report with the verdict service
	// (perfgate experiment --post) before it finishes; it may Compare the
	// report with the service's last one. It does not run with Repeat,
	// shards or Previous: RunPlan refuses those together.
	Post   func(context.Context, *Report) error
	Getenv func(string) string
	// Resolved sees the plan's variables before any request is made (the
	// action masks their secrets).
	Resolved func(*plan.Vars)
	// Stdout receives the summary; Progress, when set, the live line.
	Stdout, Progress io.Writer
}

func (o PlanOptions) env(name string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(name)
}

// RunPlan reads the plan, checks the command line against it, runs the
// experiment and finishes it (Finish).
func RunPlan(ctx context.Context, o PlanOptions) error {
	if o.Target == "" {
		return exit.Refusef("perfgate experiment: --target is missing; write --target http://127.0.0.1:8080")
	}
	sh, err := ParseShard(o.Shard, o.env("JOB_COMPLETION_INDEX"))
	if err != nil {
		return err
	}
	if o.Repeat < 0 || o.Repeat > 1 && (sh.Of > 1 || o.Start != "") {
		return exit.Refusef("perfgate experiment: --repeat %d; write --repeat 3 (1 or more, and without --shard or --start: the repeats run one after another)", o.Repeat)
	}
	if o.Post != nil && (o.Repeat > 1 || sh.Of > 1 || o.Previous != "") {
		return exit.Refusef("perfgate experiment: --post files one run and judges it against the service's history; drop --repeat, --shard and --previous")
	}
	var origin time.Time
	if o.Start != "" {
		if origin, err = time.Parse(time.RFC3339Nano, o.Start); err != nil {
			return exit.Refusef("perfgate experiment: --start %q is not an RFC 3339 time; write --start 2026-12-01T10:00:00Z", o.Start)
		}
		// On the monotonic clock from here on: a step of the wall clock
		// later must not move the schedule (load.Attack's origin).
		now := time.Now()
		origin = now.Add(origin.Sub(now))
		if late := now.Sub(origin); late > time.Second {
			// Every arrival would be due already: the engines would drop
			// them as late, not send them.
			return exit.Refusef("perfgate experiment: --start %s was %s ago; give every shard the same start a little in the future, such as $(date -u -d '+60 seconds' +%%Y-%%m-%%dT%%H:%%M:%%SZ)", o.Start, late.Round(time.Second))
		}
	} else if sh.Of > 1 {
		return exit.Refusef("perfgate experiment: --shard %s needs the shared --start time every shard counts its schedule from; write --start 2026-12-01T10:00:00Z", o.Shard)
	}
	p, err := plan.ParseFile(o.Plan)
	if err != nil {
		return err
	}
	if !p.Experiment.Written {
		return exit.Refusef("%s:1: the plan has no [experiment] table; add one such as\n[experiment]\nmodel = \"closed\"\nmax_concurrency = 32\n(docs/experiment.md)", p.Path)
	}
	if sh.Of > 1 && p.Experiment.Control != "" {
		// The control ramp runs after the main one, on each shard's own
		// clock: shards would not share its schedule.
		return exit.Refusef("%s:%d: a control ramp does not run as shards; run it unsharded, or remove control from [experiment]", p.Path, p.Line("experiment", "control"))
	}
	switch o.OnError {
	case "":
	case "abort", "continue":
		if p.Experiment.Model != "clients" {
			return exit.Refusef("perfgate experiment: --on-error applies to the clients model, and %s:%d runs model = %q; drop --on-error", p.Path, p.Experiment.Line, p.Experiment.Model)
		}
		p.Experiment.OnError = o.OnError
	default:
		return exit.Refusef("perfgate experiment: --on-error %q; write --on-error abort or --on-error continue", o.OnError)
	}
	v, err := plan.ResolveVars(p, o.Vars, o.env)
	if err != nil {
		return err
	}
	if o.Resolved != nil {
		o.Resolved(v)
	}
	// Checked before anything runs, as perfgate load does: the target is
	// quoted in every message and report below, so one carrying
	// credentials (user:password@) must stop here, in ParseTarget's words,
	// which never repeat them.
	if _, _, err := load.ParseTarget(o.Target); err != nil {
		return exit.Refuse(v.RedactError(fmt.Errorf("perfgate experiment --target: %w", err)))
	}
	var prev *Report
	if o.Previous != "" {
		if prev, err = ReadFile(o.Previous); err != nil {
			return exit.Refuse(fmt.Errorf("perfgate experiment --previous: %w", err))
		}
	}
	spec := Spec{Plan: p, Vars: v, Seed: o.Seed, Target: o.Target, Shown: v.Redact(o.Target), CAFile: o.CAFile, Shard: sh, Start: origin, PID: o.PID}
	var mu sync.Mutex
	progressed := false
	if o.Progress != nil {
		spec.Progress = func(pr Progress) {
			mu.Lock()
			defer mu.Unlock()
			progressed = true
			fmt.Fprintf(o.Progress, "\r%s\x1b[K", FormatProgress(pr))
		}
	}
	var reps []*Report
	var labels []string
	for i := 1; i <= max(o.Repeat, 1); i++ {
		rep, err := Run(ctx, spec)
		mu.Lock()
		if progressed {
			fmt.Fprintln(o.Progress)
		}
		progressed = false
		mu.Unlock()
		if err != nil {
			// Inner errors may quote the target or a request as sent.
			return exit.Refuse(v.RedactError(fmt.Errorf("perfgate experiment against %s: %w", spec.Shown, err)))
		}
		if prev != nil {
			Compare(rep, prev, o.Previous)
		}
		if o.Post != nil {
			if err := o.Post(ctx, rep); err != nil {
				return err
			}
		}
		if o.Repeat <= 1 {
			return Finish(o.Stdout, rep, o.Out, o.HTML)
		}
		fmt.Fprintf(o.Stdout, "run %d of %d:\n", i, o.Repeat)
		if err := WriteSummary(o.Stdout, rep); err != nil {
			return fmt.Errorf("writing the summary: %w", err)
		}
		label := fmt.Sprintf("run %d", i)
		if o.Out != "" {
			label = repeatFile(o.Out, i)
			if err := rep.WriteFile(label); err != nil {
				return err
			}
		}
		reps, labels = append(reps, rep), append(labels, label)
		if rep.Canceled {
			break
		}
	}
	if len(reps) < 2 {
		return Finish(o.Stdout, reps[0], "", o.HTML)
	}
	sb, err := SideBySideOf(reps, labels)
	if err != nil {
		return exit.Refuse(fmt.Errorf("perfgate experiment --repeat: %w", err))
	}
	return FinishSideBySide(o.Stdout, sb, "", o.HTML)
}

// repeatFile is run i's report file: report.json becomes report-1.json.
func repeatFile(out string, i int) string {
	ext := filepath.Ext(out)
	return fmt.Sprintf("%s-%d%s", strings.TrimSuffix(out, ext), i, ext)
}

// FinishSideBySide prints and writes runs set side by side; the exit code
// is the worst run's, as Finish maps one run's.
func FinishSideBySide(w io.Writer, sb *SideBySide, out, htmlOut string) error {
	runs := strings.Join(sb.Verdicts, "; ")
	return finish(func() error { return WriteSideBySide(w, sb) }, out, sb.WriteFile, htmlOut,
		func(p string) error { return WriteSideBySideHTMLFile(p, sb) }, sb.Exit, "a run failed: "+runs, "a run could not answer: "+runs)
}

// finish is Finish and FinishSideBySide: the summary, the JSON and HTML
// files when named, and the exit code (0, 1 with failed, else 2 with
// unanswered).
func finish(summary func() error, out string, writeJSON func(string) error, htmlOut string, writeHTML func(string) error, code int, failed, unanswered string) error {
	if err := summary(); err != nil {
		return fmt.Errorf("writing the summary: %w", err)
	}
	if out != "" {
		if err := writeJSON(out); err != nil {
			return err
		}
	}
	if htmlOut != "" {
		if err := writeHTML(htmlOut); err != nil {
			return err
		}
	}
	switch code {
	case 0:
		return nil
	case 1:
		return exit.Regressionf("perfgate experiment: %s", failed)
	default:
		return exit.Refusef("perfgate experiment: %s", unanswered)
	}
}

// SideBySideFiles is perfgate merge --side-by-side: the reports in files
// (repeated runs of one experiment) beside each other, labelled by file.
func SideBySideFiles(files []string) (*SideBySide, error) {
	reps, err := readReports(files)
	if err != nil {
		return nil, err
	}
	sb, err := SideBySideOf(reps, files)
	if err != nil {
		return nil, exit.Refuse(fmt.Errorf("perfgate merge --side-by-side: %w", err))
	}
	return sb, nil
}

// Finish prints and writes a report and turns its verdict into
// the exit code: 0 answered, 1 a threshold or the previous run's knee
// failed, 2 the run could not answer its question.
func Finish(w io.Writer, rep *Report, out, htmlOut string) error {
	return finish(func() error { return WriteSummary(w, rep) }, out, rep.WriteFile, htmlOut,
		func(p string) error { return WriteHTMLFile(p, rep) }, rep.Exit, rep.Verdict, rep.Verdict)
}

// ParseShard reads "i/N"; "/N" takes i from JOB_COMPLETION_INDEX (a
// Kubernetes Indexed Job sets it in each pod).
func ParseShard(s, jobIndex string) (load.Shard, error) {
	if s == "" {
		return load.Shard{}, nil
	}
	i, n, ok := strings.Cut(s, "/")
	if ok && i == "" {
		i = jobIndex
	}
	idx, err1 := strconv.Atoi(i)
	of, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || of < 1 || idx < 0 || idx >= of {
		return load.Shard{}, exit.Refusef("perfgate experiment: --shard %q (JOB_COMPLETION_INDEX %q); write --shard 0/4 for the first of four shards (i runs from 0 to N-1)", s, jobIndex)
	}
	return load.Shard{Index: idx, Of: of}, nil
}

// MergeFiles is perfgate merge: the shard reports in files merged exactly
// (HDR histograms merge), compared with previous when it names a report.
func MergeFiles(files []string, previous string) (*Report, error) {
	reps, err := readReports(files)
	if err != nil {
		return nil, err
	}
	m, err := Merge(reps)
	if err != nil {
		return nil, exit.Refuse(fmt.Errorf("perfgate merge: %w", err))
	}
	if previous != "" {
		prev, err := ReadFile(previous)
		if err != nil {
			return nil, exit.Refuse(fmt.Errorf("perfgate merge --previous: %w", err))
		}
		Compare(m, prev, previous)
	}
	return m, nil
}

// readReports reads perfgate merge's report files.
func readReports(files []string) ([]*Report, error) {
	var reps []*Report
	for _, f := range files {
		r, err := ReadFile(f)
		if err != nil {
			return nil, exit.Refuse(fmt.Errorf("perfgate merge: %w", err))
		}
		reps = append(reps, r)
	}
	return reps, nil
}
