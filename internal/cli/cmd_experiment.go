package cli

import (
	"context"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/client"
)

// runExperiment is experiment.RunPlan with the command line's flags.
func runExperiment(ctx context.Context, s *IO, args []string) error {
	o, err := experimentOptions(s, args)
	if err != nil {
		return err
	}
	return experiment.RunPlan(ctx, o)
}

func experimentOptions(s *IO, args []string) (experiment.PlanOptions, error) {
	fs := newFlags("experiment", s)
	o := experiment.PlanOptions{Getenv: s.Env, Stdout: s.Out, Resolved: func(v *plan.Vars) { maskSecrets(s, v) }}
	fs.StringVar(&o.Plan, "plan", "perf/plan.toml", "the plan `file`; its [experiment] table says what to run")
	fs.StringVar(&o.Target, "target", "", "base `URL` of the target (http://127.0.0.1:8080)")
	fs.StringVar(&o.Out, "out", "", "write the JSON report to this `file`")
	fs.StringVar(&o.HTML, "html", "", "write the HTML report (inline SVG charts) to this `file`")
	fs.StringVar(&o.Previous, "previous", "", "compare the knee and the other routine numbers with this earlier JSON report `file`")
	fs.StringVar(&o.Shard, "shard", "", "run shard `i/N` of the schedule (i from 0; \"/N\" takes i from JOB_COMPLETION_INDEX)")
	fs.StringVar(&o.Start, "start", "", "shared schedule origin of the shards, RFC 3339 `time` (2026-12-01T10:00:00Z)")
	fs.StringVar(&o.OnError, "on-error", "", "`continue` or abort (stop at the first failed request); default: the plan's on_error")
	fs.StringVar(&o.CAFile, "ca-file", "", "trust this CA `file` for an https target")
	fs.IntVar(&o.PID, "pid", 0, "the target's process `id` on this machine: its memory is sampled each second, for a plateau's growth")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the data draws")
	fs.Var((*listFlag)(&o.Vars), "var", "`name=value` (or name=@file) for a plan variable; repeatable")
	fs.IntVar(&o.Repeat, "repeat", 1, "run the experiment `N` times, one after another, and set the runs side by side: a table and a chart per figure, the knee's spread (--out FILE writes FILE-1.json ...; --html the side-by-side page)")
	post := fs.String("post", "", "post the report to the verdict service at this `URL` (POST /v1/experiments, credentials as for attempts: $"+client.ServiceTokenEnv+" or the job's OIDC token) and exit 1 when the knee fell by more than knee_tolerance against the default branch's last one there")
	audience := fs.String("service-audience", client.DefaultServiceAudience, "the audience of the job's OIDC token, the service's --oidc-audience")
	to := verdict.ExperimentPost{}
	fs.StringVar(&to.Repository, "repo", s.Env("GITHUB_REPOSITORY"), "with --post: the `owner/name` the experiment is filed under (default $GITHUB_REPOSITORY)")
	fs.StringVar(&to.Commit, "commit", s.Env("GITHUB_SHA"), "with --post: the `SHA` the target runs (default $GITHUB_SHA)")
	fs.StringVar(&to.Branch, "branch", s.Env("GITHUB_REF_NAME"), "with --post: the `branch` the target runs (default $GITHUB_REF_NAME)")
	defaultBranch := fs.String("default-branch", "main", "with --post: the repository's default `branch`: experiments of it are the line the knee is judged against")
	if err := exit.ParseFlags(fs, args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, exit.Refusef("perfgate experiment: unexpected argument %q; every setting is a flag (see `perfgate experiment -h`)", fs.Arg(0))
	}
	if o.Repeat < 1 {
		return o, exit.Refusef("perfgate experiment: --repeat %d; write --repeat 3 (1 or more, and without --shard or --start: the repeats run one after another)", o.Repeat)
	}
	if *post != "" {
		if to.Repository == "" || to.Commit == "" || to.Branch == "" {
			return o, exit.Refusef("perfgate experiment --post: the repository, commit and branch are needed (--repo owner/name --commit SHA --branch main, or GitHub's $GITHUB_REPOSITORY, $GITHUB_SHA, $GITHUB_REF_NAME)")
		}
		to.DefaultBranch = to.Branch == *defaultBranch
		o.Post = func(ctx context.Context, rep *experiment.Report) error {
			to.Target = rep.Target // the target as shown: its secrets redacted
			return client.FileExperiment(ctx, s.Env, func(secret string) { mask(s, secret) }, s.Err, *post, *audience, rep, to)
		}
	}
	if s.IsTerminal {
		o.Progress = s.Err
	}
	return o, nil
}
