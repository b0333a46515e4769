// Package gate runs one A/B gate end to end over two commands: it starts
// the arms' store and the arms, runs the idle phase and the pairs, judges,
// writes the report, and stops everything it started, also when the run is
// interrupted. The commands `ab` and `demo` are thin layers over it.
package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/arms"
	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/host"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/store"
)

// ArmSpec says how to start one arm. Command, Env, URL and Ready may hold
// @PORT@ (the arm's port) and @DIR@ (its work directory).
type ArmSpec struct {
	Command []string
	Env     []string
	Dir     string // work directory (@DIR@); default OutDir/<name>
	Cwd     string // where the process starts; default Dir
	Port    int    // 0: a free loopback port
	URL     string // where the load goes; default http://127.0.0.1:@PORT@
	Ready   string // ready probe: a URL, a path on URL, or tcp://; default URL
	CAFile  string
	Info    report.Arm
}

// Options is one gate run.
type Options struct {
	Plan       *plan.Plan
	Vars       *plan.Vars
	Base, Head ArmSpec
	// Store starts a PostgreSQL with one database per arm and writes each
	// arm's connection string to <dir>/store.dsn.
	Store    bool
	OutDir   string // reports, logs, the arms' dirs
	Seed     int64
	Progress io.Writer // terminal progress lines; nil for none
	Log      io.Writer // a line per phase; nil for none
	// ReadyTimeout bounds each arm's start; 0 means 60 s.
	ReadyTimeout time.Duration
}

// Files written under OutDir.
const (
	ReportFile  = "latest.json"
	SummaryFile = "summary.md"
)

// Run starts, measures, judges and stops. The report is returned (and
// written) whatever the verdict; the error is nil only when the run itself
// completed, so callers take the exit code from the verdict.
func Run(ctx context.Context, o Options) (rep *report.Report, err error) {
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("making the output folder: %w", err)
	}
	if err := ClearReports(o.OutDir); err != nil {
		return nil, err
	}
	if err := controls.Preflight(o.Plan, o.Store); err != nil {
		return nil, err
	}
	base, head := o.Base, o.Head
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	if err := base.prepare("base", o.OutDir, ports[0]); err != nil {
		return nil, err
	}
	if err := head.prepare("head", o.OutDir, ports[1]); err != nil {
		return nil, err
	}
	logf(o.Log, "base: %s (%s)", strings.Join(base.Command, " "), base.URL)
	logf(o.Log, "head: %s (%s)", strings.Join(head.Command, " "), head.URL)

	var srv *store.Server
	if o.Store {
		storeDir := filepath.Join(o.OutDir, "store")
		// A killed run's server died with it, but its data folder (and its
		// private key) stayed behind.
		removed, rerr := store.RemoveStale(storeDir, OwnerGone)
		for _, d := range removed {
			logf(o.Log, "store: removed %s, left by a run whose process is gone", d)
		}
		if rerr != nil {
			return nil, rerr
		}
		srv, err = store.Start(ctx, store.Options{Dir: storeDir, Databases: []string{"perf_base", "perf_head"}, TLS: true, Owner: Owner()})
		if err != nil {
			return nil, exit.Refusef("starting the arms' PostgreSQL store: %w", err)
		}
		defer func() { err = errors.Join(err, stopQuietly("the store", srv.Stop)) }()
		for _, a := range []struct {
			spec *ArmSpec
			db   string
		}{{&base, "perf_base"}, {&head, "perf_head"}} {
			if _, err := srv.WriteDSN(a.db, a.spec.Dir); err != nil {
				return nil, fmt.Errorf("writing the %s arm's store.dsn: %w", a.db, err)
			}
		}
		logf(o.Log, "store: PostgreSQL over TLS, databases perf_base and perf_head")
	}

	procs := map[string]*arms.Arm{}
	defer func() {
		for _, name := range []string{"head", "base"} {
			if p := procs[name]; p != nil {
				err = errors.Join(err, stopQuietly("the "+name+" arm", p.Stop))
			}
		}
	}()
	for _, a := range []struct {
		name string
		spec *ArmSpec
	}{{"base", &base}, {"head", &head}} {
		p, err := arms.Start(ctx, arms.Spec{
			Name: a.name, Command: a.spec.Command, Env: a.spec.Env, Dir: a.spec.Cwd,
			LogPath: filepath.Join(o.OutDir, a.name+".log"), Ready: a.spec.Ready, ReadyTimeout: o.ReadyTimeout,
			Redact: o.Vars.Redactor(),
		})
		if err != nil {
			return nil, err
		}
		procs[a.name] = p
	}

	cfg := run.Config{
		Plan: o.Plan, Vars: o.Vars, Seed: o.Seed, Progress: o.Progress, Log: o.Log,
		Base: run.Arm{Name: "base", Proc: procs["base"], URL: base.URL, CAFile: base.CAFile},
		Head: run.Arm{Name: "head", Proc: procs["head"], URL: head.URL, CAFile: head.CAFile},
	}
	if srv != nil {
		cfg.Base.Commits = func(ctx context.Context) (int64, error) { return srv.Commits(ctx, "perf_base") }
		cfg.Head.Commits = func(ctx context.Context) (int64, error) { return srv.Commits(ctx, "perf_head") }
		// One held connection reads both arms' counters in one query, so
		// a window's edges are the same instant for both.
		counter, err := srv.Counter(ctx, "perf_base", "perf_head")
		if err != nil {
			return nil, exit.Refusef("connecting to the arms' store to count transactions: %w", err)
		}
		defer counter.Close()
		cfg.Counters = func(ctx context.Context) (map[string]int64, error) {
			m, err := counter.Read(ctx)
			if err != nil {
				return nil, err
			}
			return map[string]int64{"base": m["perf_base"], "head": m["perf_head"]}, nil
		}
	}
	res, err := run.Gate(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// The plan's counters, store writes and controls, with the arms still
	// up (internal/controls, docs/controls.md).
	var checks controls.Outcome
	if controls.Has(o.Plan) {
		spec := controls.Spec{Plan: o.Plan, Vars: o.Vars, Seed: o.Seed, Log: o.Log, HeadArm: cfg.Head, HeadPhases: res.Input.Head,
			Head: controls.Target{Name: "head", URL: head.URL, CAFile: head.CAFile}}
		if srv != nil {
			spec.Head.DSN = srv.DSN("perf_head")
		}
		// The variant takes the head's place once the head's checks are
		// done: its port, folder, store database and rendered config, with
		// the control's overrides added to its environment.
		spec.StartVariant = func(ctx context.Context, env []string) (controls.Target, func() error, error) {
			if err := stopQuietly("the head arm", procs["head"].Stop); err != nil {
				return controls.Target{}, nil, err
			}
			procs["head"] = nil
			p, err := arms.Start(ctx, arms.Spec{Name: "variant", Command: head.Command, Env: append(append([]string(nil), head.Env...), env...), Dir: head.Cwd,
				LogPath: filepath.Join(o.OutDir, "variant.log"), Ready: head.Ready, ReadyTimeout: o.ReadyTimeout, Redact: o.Vars.Redactor()})
			if err != nil {
				return controls.Target{}, nil, err
			}
			return controls.Target{Name: "variant", URL: head.URL, CAFile: head.CAFile, DSN: spec.Head.DSN}, p.Stop, nil
		}
		if checks, err = controls.Run(ctx, spec); err != nil {
			return nil, err
		}
	}
	ab := o.Plan.AB
	rep = &report.Report{
		Version: report.Version,
		Tool:    "perfgate",
		Created: time.Now().UTC(),
		Base:    base.Info,
		Head:    head.Info,
		Settings: report.Settings{
			Plan: o.Plan.Path, PlanPath: repoPath(o.Plan.Path, os.Getenv), Pairs: ab.Pairs, Rate: ab.Rate,
			Warmup: report.Duration(ab.Warmup), Measure: report.Duration(ab.Measure), Idle: report.Duration(ab.Idle),
		},
		// The plan lines the verdict service annotates a breach on.
		PlanLines: o.Plan.MetricLines(res.Input.Metrics),
		Input:     res.Input,
	}
	// Which attempt this is and where it ran, as retries are decided by them.
	runner := host.Facts(os.Getenv)
	rep.Attempt, rep.RunAttempt, rep.CPUModel = runner.Attempt, runner.RunAttempt, runner.CPUModel
	rep.Verdict = judge.Judge(rep.Input)
	checks.Apply(&rep.Verdict)
	if err := report.Write(filepath.Join(o.OutDir, ReportFile), rep); err != nil {
		return rep, err
	}
	f, err := os.Create(filepath.Join(o.OutDir, SummaryFile))
	if err != nil {
		return rep, fmt.Errorf("writing the job summary: %w", err)
	}
	defer f.Close()
	if err := report.Markdown(f, rep); err != nil {
		return rep, fmt.Errorf("writing the job summary: %w", err)
	}
	return rep, f.Close()
}

// ClearReports removes an earlier run's report and summary from out: a run
// interrupted before it writes its own must not leave them there for the
// workflow to upload as this run's.
func ClearReports(out string) error {
	for _, f := range []string{ReportFile, SummaryFile} {
		if err := os.Remove(filepath.Join(out, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing the earlier run's %s: %w", f, err)
		}
	}
	return nil
}

// VerdictError maps a verdict to the error whose exit code it carries.
func VerdictError(v judge.Verdict) error {
	switch v.Code {
	case judge.Pass:
		return nil
	case judge.Regression:
		return exit.Regressionf("regression: %s", strings.Join(v.Failures, "; "))
	default:
		return exit.Refusef("cannot judge: %s", strings.Join(v.CannotJudge, "; "))
	}
}

// prepare fills in the arm's defaults; free is the port it gets when the
// spec names none.
func (a *ArmSpec) prepare(name, out string, free int) error {
	if len(a.Command) == 0 {
		return exit.Refusef("the %s arm has no command: give --%s-cmd or a command in the arms file", name, name)
	}
	if a.Dir == "" {
		a.Dir = filepath.Join(out, name)
	}
	dir, err := filepath.Abs(a.Dir)
	if err != nil {
		return err
	}
	a.Dir = dir
	if a.Cwd == "" {
		a.Cwd = a.Dir
	}
	if err := os.MkdirAll(a.Dir, 0o755); err != nil {
		return fmt.Errorf("making the %s arm's folder: %w", name, err)
	}
	if a.Port == 0 {
		a.Port = free
	}
	if a.URL == "" {
		a.URL = "http://127.0.0.1:@PORT@"
	}
	subst := strings.NewReplacer("@PORT@", strconv.Itoa(a.Port), "@DIR@", a.Dir)
	fill := func(in []string) []string { // a copy: the caller's spec stays a template
		out := make([]string, len(in))
		for i, v := range in {
			out[i] = subst.Replace(v)
		}
		return out
	}
	a.Command, a.Env = fill(a.Command), fill(a.Env)
	a.URL = strings.TrimRight(subst.Replace(a.URL), "/")
	switch {
	case a.Ready == "":
		a.Ready = a.URL + "/"
	case strings.HasPrefix(a.Ready, "/"):
		a.Ready = a.URL + a.Ready
	default:
		a.Ready = subst.Replace(a.Ready)
	}
	if a.Info.Name == "" {
		a.Info.Name = name
	}
	return nil
}

func stopQuietly(what string, stop func() error) error {
	if err := stop(); err != nil {
		return fmt.Errorf("stopping %s: %w", what, err)
	}
	return nil
}

func logf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", a...)
	}
}
