package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/demo"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/report"
)

// runDemo is demo.Run with the command line's flags, printing the verdict.
func runDemo(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("demo", s)
	o := demo.RunOptions{Getenv: s.Env, Stdout: s.Out, Log: s.Err}
	fs.BoolVar(&o.NoRegression, "no-regression", false, "the head commit carries no regression: the gate passes")
	fs.BoolVar(&o.Full, "full", false, "FerroFED's gate's full profile (about 6 minutes) instead of the short one")
	fs.StringVar(&o.Out, "out", "target/perf-demo", "folder for the report, the summary and the logs; the repository and the built arms live in it while the demo runs")
	fs.BoolVar(&o.NoStore, "no-store", false, "run without the PostgreSQL store even when its binaries are installed")
	fs.BoolVar(&o.NoDocker, "no-docker", false, "run without the compose dependency even when a docker engine answers")
	// The same profile flags as run and ab, applied over the short profile
	// (or --full's): a quicker demo, as its own tests run it.
	var prof profileFlags
	prof.register(fs)
	demoProfileHelp(fs)
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	if err := exit.NoArguments(fs); err != nil {
		return err
	}
	// A bad value is refused now, not after the image, the repository and
	// both builds.
	if err := prof.apply(&plan.AB{}); err != nil {
		return exit.Refuse(fmt.Errorf("demo: %w", err))
	}
	o.Reshape = prof.apply
	if s.IsTerminal {
		o.Progress = s.Err
	}
	o.Verdict = func(rep *report.Report, out string) error { return printVerdict(s, rep, out) }
	return demo.Run(ctx, o)
}

// demoProfileHelp makes the profile flags' help name the demo's short
// profile, which they reshape: run's help names a plan's defaults (8
// pairs at 30/s), which the demo does not run.
func demoProfileHelp(fs *flag.FlagSet) {
	p := demo.Profile
	for name, def := range map[string]string{
		"pairs": strconv.Itoa(p.Pairs), "rate": strconv.FormatFloat(p.Rate, 'g', -1, 64) + "/s",
		"warmup": secs(p.Warmup), "measure": secs(p.Measure), "idle": secs(p.Idle),
	} {
		f := fs.Lookup(name)
		what, _, _ := strings.Cut(f.Usage, " (default:")
		f.Usage = fmt.Sprintf("%s (default: the demo's %s; with --full, the plan's)", what, def)
	}
}

// runDemoService runs the example service over the demo repository's perf
// config (demo.ServiceArgv); --check only reads the config.
func runDemoService(ctx context.Context, s *IO, args []string) error {
	argv, run, err := demo.ServiceArgv(ctx, args, s.Out, s.Err)
	if err != nil || !run {
		return err
	}
	return runExampleService(ctx, s, argv)
}

func runDemoDependency(ctx context.Context, s *IO, args []string) error {
	return demo.ServeDependency(ctx, args, s.Err)
}
