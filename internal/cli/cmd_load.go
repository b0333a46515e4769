package cli

import (
	"context"
	"flag"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/loadrun"
	"github.com/perfgate/perfgate/internal/plan"
)

// runLoad is loadrun.Run with the command line's flags.
func runLoad(ctx context.Context, s *IO, args []string) error {
	o, err := loadOptions(s, args)
	if err != nil {
		return err
	}
	return loadrun.Run(ctx, o)
}

func loadOptions(s *IO, args []string) (loadrun.Options, error) {
	fs := newFlags("load", s)
	o := loadrun.Options{Getenv: s.Env, Stdout: s.Out, Resolved: func(v *plan.Vars) { maskSecrets(s, v) }}
	fs.StringVar(&o.Plan, "plan", "perf/plan.toml", "the plan `file`")
	fs.StringVar(&o.Target, "target", "", "base `URL` of the target, on loopback (http://127.0.0.1:8080)")
	fs.Float64Var(&o.Rate, "rate", 0, "arrivals per second (default: the plan's [load] rate)")
	fs.DurationVar(&o.Duration, "duration", 0, "measured window (default: the plan's [load] duration)")
	fs.DurationVar(&o.Warmup, "warmup", 0, "warm-up before the measured window (default: the plan's [load] warmup)")
	fs.StringVar(&o.Out, "out", "", "write the JSON report to this `file`")
	fs.StringVar(&o.CAFile, "ca-file", "", "trust this CA `file` for an https target")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the data draws (same seed, same requests)")
	fs.Var((*listFlag)(&o.Vars), "var", "`name=value` (or name=@file) for a plan variable; repeatable")
	if err := exit.ParseFlags(fs, args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, exit.Refusef("perfgate load: unexpected argument %q; every setting is a flag (see `perfgate load -h`)", fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) { o.WarmupSet = o.WarmupSet || f.Name == "warmup" })
	if s.IsTerminal {
		o.Progress = s.Err
	}
	return o, nil
}
