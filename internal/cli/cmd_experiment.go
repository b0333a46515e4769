package cli

import (
	"context"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment"
	"github.com/perfgate/perfgate/internal/plan"
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
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, exit.Refusef("perfgate experiment: unexpected argument %q; every setting is a flag (see `perfgate experiment -h`)", fs.Arg(0))
	}
	if s.IsTerminal {
		o.Progress = s.Err
	}
	return o, nil
}
