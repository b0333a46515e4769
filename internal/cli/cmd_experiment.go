package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/client"
)

func init() {
	register(Command{Name: "experiment", Summary: "run a plan's capacity experiment: the knee, the first resource to run out, a user population, a client ramp (docs/experiment.md)", Run: runExperiment})
}

func runExperiment(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("experiment", s)
	planPath := fs.String("plan", "perf/plan.toml", "the plan `file`; its [experiment] table says what to run")
	target := fs.String("target", "", "base `URL` of the target (http://127.0.0.1:8080)")
	out := fs.String("out", "", "write the JSON report to this `file`")
	htmlOut := fs.String("html", "", "write the HTML report (inline SVG charts) to this `file`")
	previous := fs.String("previous", "", "compare the knee and the other routine numbers with this earlier JSON report `file`")
	shard := fs.String("shard", "", "run shard `i/N` of the schedule (i from 0; \"/N\" takes i from JOB_COMPLETION_INDEX)")
	start := fs.String("start", "", "shared schedule origin of the shards, RFC 3339 `time` (2026-12-01T10:00:00Z)")
	onError := fs.String("on-error", "", "`continue` or abort (stop at the first failed request); default: the plan's on_error")
	caFile := fs.String("ca-file", "", "trust this CA `file` for an https target")
	pid := fs.Int("pid", 0, "the target's process `id` on this machine: its memory is sampled each second, for a plateau's growth")
	seed := fs.Int64("seed", 1, "seed of the data draws")
	post := fs.String("post", "", "post the report to the verdict service at this `URL` (POST /v1/experiments, credentials as for attempts: $"+client.ServiceTokenEnv+" or the job's OIDC token) and exit 1 when the knee fell by more than knee_tolerance against the default branch's last one there")
	audience := fs.String("service-audience", client.DefaultServiceAudience, "the audience of the job's OIDC token, the service's --oidc-audience")
	repo := fs.String("repo", s.Env("GITHUB_REPOSITORY"), "with --post: the `owner/name` the experiment is filed under (default $GITHUB_REPOSITORY)")
	commit := fs.String("commit", s.Env("GITHUB_SHA"), "with --post: the `SHA` the target runs (default $GITHUB_SHA)")
	branch := fs.String("branch", s.Env("GITHUB_REF_NAME"), "with --post: the `branch` the target runs (default $GITHUB_REF_NAME)")
	defaultBranch := fs.String("default-branch", "main", "with --post: the repository's default `branch`: experiments of it are the line the knee is judged against")
	repeat := fs.Int("repeat", 1, "run the experiment `N` times, one after another, and set the runs side by side: a table and a chart per figure, the knee's spread (--out FILE writes FILE-1.json ...; --html the side-by-side page)")
	var vars listFlag
	fs.Var(&vars, "var", "`name=value` (or name=@file) for a plan variable; repeatable")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return exit.Refusef("perfgate experiment: unexpected argument %q; every setting is a flag (see `perfgate experiment -h`)", fs.Arg(0))
	}
	if *target == "" {
		return exit.Refusef("perfgate experiment: --target is missing; write --target http://127.0.0.1:8080")
	}
	sh, err := parseShard(*shard, s.Env("JOB_COMPLETION_INDEX"))
	if err != nil {
		return err
	}
	if *repeat < 1 || *repeat > 1 && (sh.Of > 1 || *start != "") {
		return exit.Refusef("perfgate experiment: --repeat %d; write --repeat 3 (1 or more, and without --shard or --start: the repeats run one after another)", *repeat)
	}
	if *post != "" {
		switch {
		case *repeat > 1 || sh.Of > 1 || *previous != "":
			return exit.Refusef("perfgate experiment: --post files one run and judges it against the service's history; drop --repeat, --shard and --previous")
		case *repo == "" || *commit == "" || *branch == "":
			return exit.Refusef("perfgate experiment --post: the repository, commit and branch are needed (--repo owner/name --commit SHA --branch main, or GitHub's $GITHUB_REPOSITORY, $GITHUB_SHA, $GITHUB_REF_NAME)")
		}
	}
	var origin time.Time
	if *start != "" {
		if origin, err = time.Parse(time.RFC3339Nano, *start); err != nil {
			return exit.Refusef("perfgate experiment: --start %q is not an RFC 3339 time; write --start 2026-12-01T10:00:00Z", *start)
		}
		if late := time.Since(origin); late > time.Second {
			// Every arrival would be due already: the engines would drop
			// them as late, not send them.
			return exit.Refusef("perfgate experiment: --start %s was %s ago; give every shard the same start a little in the future, such as $(date -u -d '+60 seconds' +%%Y-%%m-%%dT%%H:%%M:%%SZ)", *start, late.Round(time.Second))
		}
	} else if sh.Of > 1 {
		return exit.Refusef("perfgate experiment: --shard %s needs the shared --start time every shard counts its schedule from; write --start 2026-12-01T10:00:00Z", *shard)
	}
	p, err := plan.ParseFile(*planPath)
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
	switch *onError {
	case "":
	case "abort", "continue":
		if p.Experiment.Model != "clients" {
			return exit.Refusef("perfgate experiment: --on-error applies to the clients model, and %s:%d runs model = %q; drop --on-error", p.Path, p.Experiment.Line, p.Experiment.Model)
		}
		p.Experiment.OnError = *onError
	default:
		return exit.Refusef("perfgate experiment: --on-error %q; write --on-error abort or --on-error continue", *onError)
	}
	v, err := plan.ResolveVars(p, vars, s.Env)
	if err != nil {
		return err
	}
	maskSecrets(s, v)
	var prev *experiment.Report
	if *previous != "" {
		if prev, err = experiment.ReadFile(*previous); err != nil {
			return exit.Refuse(fmt.Errorf("perfgate experiment --previous: %w", err))
		}
	}
	spec := experiment.Spec{Plan: p, Vars: v, Seed: *seed, Target: *target, Shown: v.Redact(*target), CAFile: *caFile, Shard: sh, Start: origin, PID: *pid}
	var mu sync.Mutex
	progressed := false
	if s.IsTerminal {
		spec.Progress = func(pr experiment.Progress) {
			mu.Lock()
			defer mu.Unlock()
			progressed = true
			fmt.Fprintf(s.Err, "\r%s\x1b[K", experiment.FormatProgress(pr))
		}
	}
	var reps []*experiment.Report
	var labels []string
	for i := 1; i <= *repeat; i++ {
		rep, err := experiment.Run(ctx, spec)
		mu.Lock()
		if progressed {
			fmt.Fprintln(s.Err)
		}
		progressed = false
		mu.Unlock()
		if err != nil {
			return exit.Refuse(fmt.Errorf("perfgate experiment against %s: %w", spec.Shown, err))
		}
		if prev != nil {
			experiment.Compare(rep, prev, *previous)
		}
		if *post != "" {
			if err := postExperiment(ctx, s, rep, verdict.ExperimentPost{Repository: *repo, Target: spec.Shown, Branch: *branch,
				DefaultBranch: *branch == *defaultBranch, Commit: *commit}, *post, *audience); err != nil {
				return err
			}
		}
		if *repeat == 1 {
			return finishExperiment(s, rep, *out, *htmlOut)
		}
		fmt.Fprintf(s.Out, "run %d of %d:\n", i, *repeat)
		if err := experiment.WriteSummary(s.Out, rep); err != nil {
			return fmt.Errorf("writing the summary: %w", err)
		}
		label := fmt.Sprintf("run %d", i)
		if *out != "" {
			label = repeatFile(*out, i)
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
		return finishExperiment(s, reps[0], "", *htmlOut)
	}
	sb, err := experiment.SideBySideOf(reps, labels)
	if err != nil {
		return exit.Refuse(fmt.Errorf("perfgate experiment --repeat: %w", err))
	}
	return finishSideBySide(s, sb, "", *htmlOut)
}

// postExperiment files rep with the verdict service and judges its knee
// against the default branch's last one there, as --previous judges it
// against a file.
func postExperiment(ctx context.Context, s *IO, rep *experiment.Report, p verdict.ExperimentPost, url, audience string) error {
	var b strings.Builder
	if err := rep.Write(&b); err != nil {
		return fmt.Errorf("encoding the experiment report: %w", err)
	}
	p.Report = json.RawMessage(b.String())
	tok, err := client.JobToken(s.Env, audience, func(secret string) { mask(s, secret) })
	if err != nil {
		return exit.Refuse(fmt.Errorf("perfgate experiment --post: %w", err))
	}
	c, err := client.New(url, tok, nil)
	if err != nil {
		return exit.Refuse(err)
	}
	rc, err := c.PostExperiment(ctx, p)
	if err != nil {
		return exit.Refuse(fmt.Errorf("perfgate experiment --post %s: %w", url, err))
	}
	fmt.Fprintf(s.Err, "perfgate experiment: filed as experiment %d of %s at %s\n", rc.ID, p.Repository, url)
	if last := rc.Previous; last != nil {
		before := &experiment.Report{Routine: experiment.Routine{Knee: last.Knee, KneeLevel: last.KneeLevel, FirstResource: last.FirstResource,
			FirstResourceAt: last.FirstResourceLevel, PlateauGrowth: last.PlateauGrowth, RecoveryS: last.RecoveryS}}
		experiment.Compare(rep, before, fmt.Sprintf("the default branch's last on the service, commit %s", event.ShortSHA(last.CommitSHA)))
	}
	return nil
}

// repeatFile is run i's report file: report.json becomes report-1.json.
func repeatFile(out string, i int) string {
	ext := filepath.Ext(out)
	return fmt.Sprintf("%s-%d%s", strings.TrimSuffix(out, ext), i, ext)
}

// finishExperiment prints and writes a report and turns its verdict into
// the exit code: 0 answered, 1 a threshold or the previous run's knee
// failed, 2 the run could not answer its question.
func finishExperiment(s *IO, rep *experiment.Report, out, htmlOut string) error {
	if err := experiment.WriteSummary(s.Out, rep); err != nil {
		return fmt.Errorf("writing the summary: %w", err)
	}
	if out != "" {
		if err := rep.WriteFile(out); err != nil {
			return err
		}
	}
	if htmlOut != "" {
		if err := experiment.WriteHTMLFile(htmlOut, rep); err != nil {
			return err
		}
	}
	switch rep.Exit {
	case 0:
		return nil
	case 1:
		return exit.Regressionf("perfgate experiment: %s", rep.Verdict)
	default:
		return exit.Refusef("perfgate experiment: %s", rep.Verdict)
	}
}

// parseShard reads "i/N"; "/N" takes i from JOB_COMPLETION_INDEX (a
// Kubernetes Indexed Job sets it in each pod).
func parseShard(s, jobIndex string) (load.Shard, error) {
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
