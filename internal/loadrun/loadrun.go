// Package loadrun is perfgate load: one target driven open loop with a
// plan's requests, its latency summarised and its [[threshold]] tables
// judged. It joins the plan (internal/plan), the engine (internal/load) and
// the thresholds' verdict (internal/pairs), which none of them may import
// from the others.
package loadrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/pairs"
	"github.com/perfgate/perfgate/internal/plan"
)

// Options are perfgate load's inputs. A zero Rate or Duration is the
// plan's; Warmup replaces the plan's only when WarmupSet.
type Options struct {
	Plan      string
	Target    string
	Rate      float64
	Duration  time.Duration
	Warmup    time.Duration
	WarmupSet bool
	Out       string // the JSON report's file; "" for none
	CAFile    string
	Seed      int64
	Vars      []string
	Getenv    func(string) string
	// Resolved sees the plan's variables before any request is made (the
	// action masks their secrets).
	Resolved func(*plan.Vars)
	// Stdout receives the summary and the verdict; Progress, when set, the
	// terminal's live line.
	Stdout, Progress io.Writer
}

// Run drives the target and returns the verdict's error: nil a pass, a
// regression for a failed threshold, a refusal when the run cannot judge.
func Run(ctx context.Context, o Options) error {
	if o.Target == "" {
		return exit.Refusef("perfgate load: --target is missing; write --target http://127.0.0.1:8080")
	}
	if o.Rate < 0 || o.Duration < 0 {
		return exit.Refusef("perfgate load: --rate and --duration must be positive; write --rate 20 --duration 60s")
	}
	p, err := plan.ParseFile(o.Plan)
	if err != nil {
		return err
	}
	v, err := plan.ResolveVars(p, o.Vars, o.Getenv)
	if err != nil {
		return err
	}
	if o.Resolved != nil {
		o.Resolved(v)
	}
	// Checked before anything runs, so a target perfgate cannot use is
	// refused with its own reason; ParseTarget never repeats credentials
	// in the URL, and the plan's secrets are redacted like every error.
	u, _, err := load.ParseTarget(o.Target)
	if err != nil {
		return exit.Refuse(v.RedactError(fmt.Errorf("perfgate load --target: %w", err)))
	}
	src, groups, err := p.Source(v, o.Seed)
	if err != nil {
		return err
	}
	// Groups with a dpop_key_file take proofs from pools that sign ahead
	// of the schedule (internal/dpop, docs/dpop.md).
	src, stopProofs, err := p.DPoP(ctx, src, v, o.Target)
	if err != nil {
		return err
	}
	defer stopProofs()
	l, err := o.settings(p)
	if err != nil {
		return err
	}
	a := attack(o, p, l, src, groups)
	a.Redact = v.Redactor()
	began := time.Now()
	r, err := drive(ctx, a, o.Progress)
	if err != nil {
		return exit.Refuse(v.RedactError(fmt.Errorf("perfgate load against %s: %w", o.Target, err)))
	}
	meta := load.ReportMeta{Target: v.Redact(o.Target), Plan: p.Path, Warmup: l.Warmup}
	if err := load.WriteSummary(o.Stdout, meta, r); err != nil {
		return fmt.Errorf("writing the summary: %w", err)
	}
	notes, ths := append(pairs.LoadNotes(src), hitLines(l.Hit, r)...), pairs.LoadThresholds(p, r)
	verdict := pairs.WriteLoadVerdict(o.Stdout, notes, ths, pairs.LoadWrongAnswers(r))
	if o.Out != "" {
		if err := writeReport(o.Out, meta, r, append(notes, pairs.ThresholdLines(ths)...)); err != nil {
			return err
		}
	}
	if err := judgeable(r, time.Since(began)); err != nil {
		return err
	}
	if why := r.NoAnswer(); why != "" {
		if tls := r.Total().Errors[load.KindTLS]; tls > 0 && u.Scheme == "https" && o.CAFile == "" {
			why += "; the target is https and no --ca-file was given, so only the system's CAs are trusted: pass --ca-file with the CA that signed its certificate (or use http:// if it speaks plain HTTP)"
		}
		return exit.Refusef("perfgate load: %s; cannot judge", why)
	}
	return verdict
}

// settings are the plan's [load] with the command line's numbers laid
// over them, checked against the plan's limits (max_rate, data a refusing
// source must hold) as parse did.
func (o Options) settings(p *plan.Plan) (plan.Load, error) {
	l := p.Load
	if o.Rate > 0 {
		l.Rate = o.Rate
	}
	if o.WarmupSet {
		l.Warmup = o.Warmup
	}
	if l.Warmup < 0 {
		return l, exit.Refusef("perfgate load: --warmup %s is negative; write --warmup 10s or --warmup 0s", l.Warmup)
	}
	if o.Duration > 0 {
		if len(l.Stages) > 0 {
			return l, exit.Refusef("%s:%d: the plan's stages set the measured duration; drop --duration or the [[load.stage]] tables", p.Path, p.Line("load", "stage"))
		}
		l.Duration = o.Duration
	}
	return l, p.CheckLoad(l)
}

// attack is the engine's run: a constant rate, or the plan's stages
// ramping from the warm-up's rate.
func attack(o Options, p *plan.Plan, l plan.Load, src load.Source, groups []load.Group) load.Attack {
	a := load.Attack{Target: o.Target, CAFile: o.CAFile, Source: src, Groups: groups, Warmup: l.Warmup,
		Duration: l.MeasuredDuration(), ServerTiming: p.ServerTiming, Hit: l.Hit.LoadRule()}
	if len(l.Stages) == 0 {
		a.Pacer = load.ConstantPacer{Freq: l.Rate}
		return a
	}
	stages := []load.RateStage{{Target: l.Rate, Duration: l.Warmup}}
	for _, st := range l.Stages {
		stages = append(stages, load.RateStage{Target: st.Target, Duration: st.Duration})
	}
	a.Pacer = load.NewStagedPacer(l.Rate, stages)
	return a
}

// drive runs the attack, with a live line on progress when set.
func drive(ctx context.Context, a load.Attack, progress io.Writer) (*load.Result, error) {
	var mu sync.Mutex
	progressed := false
	if progress != nil {
		a.Progress = func(snap load.Snapshot) {
			mu.Lock()
			defer mu.Unlock()
			progressed = true
			fmt.Fprintf(progress, "\r%s\x1b[K", load.FormatProgress(snap))
		}
	}
	r, err := load.Run(ctx, a)
	if progressed {
		fmt.Fprintln(progress)
	}
	return r, err
}

// judgeable refuses a run whose schedule did not hold: canceled, out of
// sockets, or arrivals dropped.
func judgeable(r *load.Result, took time.Duration) error {
	switch {
	case r.Canceled:
		return exit.Refusef("perfgate load: canceled after %s; the figures above are partial", took.Round(time.Millisecond))
	case r.Schedule.OutOfSockets > 0:
		return exit.Refusef("perfgate load: the generator ran out of sockets: %d of %d arrivals were not sent (its open-file limit is too low "+
			"or its local ports ran out); cannot judge: raise the limit (ulimit -n) or lower --rate", r.Schedule.OutOfSockets, r.Schedule.Intended)
	case r.Schedule.Dropped > 0:
		return exit.Refusef("perfgate load: the generator could not hold %.1f arrivals/s (%d of %d dropped); lower --rate or give the generator a core of its own",
			r.Schedule.Offered, r.Schedule.Dropped, r.Schedule.Intended)
	}
	return nil
}

func writeReport(path string, meta load.ReportMeta, r *load.Result, notes []string) error {
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
