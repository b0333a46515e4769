package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	fs.BoolVar(&o.Full, "full", false, "the seed's full profile (about 6 minutes) instead of the short one")
	fs.StringVar(&o.Out, "out", "target/perf-demo", "folder for the report, the summary and the logs; the repository and the built arms live in it while the demo runs")
	fs.BoolVar(&o.NoStore, "no-store", false, "run without the PostgreSQL store even when its binaries are installed")
	fs.BoolVar(&o.NoDocker, "no-docker", false, "run without the compose dependency even when a docker engine answers")
	// The same profile flags as run and ab, applied over the short profile
	// (or --full's): a quicker demo, as its own tests run it.
	var prof profileFlags
	prof.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// A bad value is refused now, not after the image, the repository and
	// both builds.
	if err := prof.apply(&plan.AB{}); err != nil {
		return exit.Refuse(fmt.Errorf("demo: %w", err))
	}
	o.Reshape, o.Pairs = prof.apply, prof.pairs
	if s.IsTerminal {
		o.Progress = s.Err
	}
	o.Verdict = func(rep *report.Report, out string) error { return printVerdict(s, rep, out) }
	return demo.Run(ctx, o)
}

// runDemoService starts the example service over the demo repository's
// perf config: the settings its dependency serves become flags, the
// overrides (EXAMPLED_ variables) the rest. --check only reads the config,
// as the gate's config check runs it.
func runDemoService(ctx context.Context, s *IO, args []string) error {
	var config string
	check := false
	var rest []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--check":
			check = true
		case args[i] == "--config" && i+1 < len(args):
			config = args[i+1]
			i++
		default:
			rest = append(rest, args[i])
		}
	}
	if config == "" {
		return exit.Refusef("demo-service: give --config FILE (the rendered perf/service.toml)")
	}
	c, err := demo.ReadConfig(config)
	if err != nil {
		return exit.Refuse(err)
	}
	if check {
		fmt.Fprintf(s.Out, "demo-service: %s is fine\n", config)
		return nil
	}
	reg, err := demo.ReadRegistry(c)
	if err != nil {
		return exit.Refuse(err)
	}
	for name, svc := range reg.Services {
		fmt.Fprintf(s.Err, "demo-service: the registry names %s at %s\n", name, svc.Address)
	}
	settings, err := demo.ServiceArgs(ctx, c, 30*time.Second)
	if err != nil {
		return exit.Refuse(err)
	}
	if len(settings) > 0 {
		fmt.Fprintf(s.Err, "%s%s: %s\n", demo.SettingsLine, c.SettingsURL, strings.Join(settings, " "))
	}
	// The command line's flags come last, so they win over the settings.
	return runExampleService(ctx, s, append(settings, rest...))
}

func runDemoDependency(ctx context.Context, s *IO, args []string) error {
	return demo.ServeDependency(ctx, args, s.Err)
}
