package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/pairs"
	"github.com/perfgate/perfgate/internal/plan"
)

func init() {
	register(Command{Name: "load", Summary: "drive one target open loop with a plan's requests and report latency", Run: runLoad})
}

func runLoad(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("load", s)
	planPath := fs.String("plan", "perf/plan.toml", "the plan `file`")
	target := fs.String("target", "", "base `URL` of the target, on loopback (http://127.0.0.1:8080)")
	rate := fs.Float64("rate", 0, "arrivals per second (default: the plan's [load] rate)")
	duration := fs.Duration("duration", 0, "measured window (default: the plan's [load] duration)")
	warmup := fs.Duration("warmup", 0, "warm-up before the measured window (default: the plan's [load] warmup)")
	out := fs.String("out", "", "write the JSON report to this `file`")
	caFile := fs.String("ca-file", "", "trust this CA `file` for an https target")
	seed := fs.Int64("seed", 1, "seed of the data draws (same seed, same requests)")
	var vars listFlag
	fs.Var(&vars, "var", "`name=value` (or name=@file) for a plan variable; repeatable")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return exit.Refusef("perfgate load: unexpected argument %q; every setting is a flag (see `perfgate load -h`)", fs.Arg(0))
	}
	if *target == "" {
		return exit.Refusef("perfgate load: --target is missing; write --target http://127.0.0.1:8080")
	}
	if *rate < 0 || *duration < 0 {
		return exit.Refusef("perfgate load: --rate and --duration must be positive; write --rate 20 --duration 60s")
	}
	p, err := plan.ParseFile(*planPath)
	if err != nil {
		return err
	}
	v, err := plan.ResolveVars(p, vars, s.Env)
	if err != nil {
		return err
	}
	maskSecrets(s, v)
	// Checked before anything runs, so a target perfgate cannot use is
	// refused with its own reason; ParseTarget never repeats credentials
	// in the URL, and the plan's secrets are redacted like every error.
	u, _, err := load.ParseTarget(*target)
	if err != nil {
		return exit.Refuse(v.RedactError(fmt.Errorf("perfgate load --target: %w", err)))
	}
	src, groups, err := p.Source(v, *seed)
	if err != nil {
		return err
	}
	// Groups with a dpop_key_file take proofs from pools that sign ahead
	// of the schedule (internal/dpop, docs/dpop.md).
	src, stopProofs, err := p.DPoP(ctx, src, v, *target)
	if err != nil {
		return err
	}
	defer stopProofs()
	l := p.Load
	if *rate > 0 {
		l.Rate = *rate
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "warmup" {
			l.Warmup = *warmup
		}
	})
	if l.Warmup < 0 {
		return exit.Refusef("perfgate load: --warmup %s is negative; write --warmup 10s or --warmup 0s", l.Warmup)
	}
	if *duration > 0 {
		if len(l.Stages) > 0 {
			return exit.Refusef("%s:%d: the plan's stages set the measured duration; drop --duration or the [[load.stage]] tables", p.Path, p.Line("load", "stage"))
		}
		l.Duration = *duration
	}
	// The flags replace the plan's numbers: check them against the plan's
	// limits (max_rate, data a refusing source must hold) as parse did.
	if err := p.CheckLoad(l); err != nil {
		return err
	}
	a := load.Attack{Target: *target, CAFile: *caFile, Source: src, Groups: groups, Warmup: l.Warmup,
		Duration: l.MeasuredDuration(), ServerTiming: p.ServerTiming, Redact: v.Redactor()}
	if len(l.Stages) == 0 {
		a.Pacer = load.ConstantPacer{Freq: l.Rate}
	} else {
		// The warm-up holds the start rate; the stages ramp from it.
		stages := []load.RateStage{{Target: l.Rate, Duration: l.Warmup}}
		for _, st := range l.Stages {
			stages = append(stages, load.RateStage{Target: st.Target, Duration: st.Duration})
		}
		a.Pacer = load.NewStagedPacer(l.Rate, stages)
	}
	var mu sync.Mutex
	progressed := false
	if s.IsTerminal {
		a.Progress = func(snap load.Snapshot) {
			mu.Lock()
			defer mu.Unlock()
			progressed = true
			fmt.Fprintf(s.Err, "\r%s\x1b[K", load.FormatProgress(snap))
		}
	}
	began := time.Now()
	r, err := load.Run(ctx, a)
	if progressed {
		fmt.Fprintln(s.Err)
	}
	if err != nil {
		return exit.Refuse(v.RedactError(fmt.Errorf("perfgate load against %s: %w", *target, err)))
	}
	meta := load.ReportMeta{Target: v.Redact(*target), Plan: p.Path, Warmup: l.Warmup}
	if err := load.WriteSummary(s.Out, meta, r); err != nil {
		return fmt.Errorf("writing the summary: %w", err)
	}
	notes, ths := pairs.LoadNotes(src), pairs.LoadThresholds(p, r)
	verdict := pairs.WriteLoadVerdict(s.Out, notes, ths, pairs.LoadWrongAnswers(r))
	if *out != "" {
		if err := writeLoadReport(*out, meta, r, append(notes, pairs.ThresholdLines(ths)...)); err != nil {
			return err
		}
	}
	switch {
	case r.Canceled:
		return exit.Refusef("perfgate load: canceled after %s; the figures above are partial", time.Since(began).Round(time.Millisecond))
	case r.Schedule.OutOfSockets > 0:
		return exit.Refusef("perfgate load: the generator ran out of sockets: %d of %d arrivals were not sent (its open-file limit is too low "+
			"or its local ports ran out); cannot judge: raise the limit (ulimit -n) or lower --rate", r.Schedule.OutOfSockets, r.Schedule.Intended)
	case r.Schedule.Dropped > 0:
		return exit.Refusef("perfgate load: the generator could not hold %.1f arrivals/s (%d of %d dropped); lower --rate or give the generator a core of its own",
			r.Schedule.Offered, r.Schedule.Dropped, r.Schedule.Intended)
	}
	if why := r.NoAnswer(); why != "" {
		if tls := r.Total().Errors[load.KindTLS]; tls > 0 && u.Scheme == "https" && *caFile == "" {
			why += "; the target is https and no --ca-file was given, so only the system's CAs are trusted: pass --ca-file with the CA that signed its certificate (or use http:// if it speaks plain HTTP)"
		}
		return exit.Refusef("perfgate load: %s; cannot judge", why)
	}
	return verdict
}

func writeLoadReport(path string, meta load.ReportMeta, r *load.Result, notes []string) error {
	rep, err := load.NewReport(meta, r)
	if err != nil {
		return fmt.Errorf("building the load report: %w", err)
	}
	rep.Notes = notes
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the load report: %w", err)
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return fmt.Errorf("writing the load report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the load report %s: %w", path, err)
	}
	return nil
}
