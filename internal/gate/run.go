package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/arms"
	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/host"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/pairs"
	"github.com/perfgate/perfgate/internal/report"
)

// Run starts, measures, judges and stops. The report is returned (and
// written) whatever the verdict; the error is nil only when the run itself
// completed, so callers take the exit code from the verdict.
func Run(ctx context.Context, o Options) (rep *report.Report, err error) {
	o.Log = locked(o.Log) // a canceled run's teardown steps log side by side
	r, err := newRun(o)
	if err != nil {
		return nil, err
	}
	// One teardown for everything the steps started, on every way out; a
	// canceled ctx (SIGINT, SIGTERM) stops the arms through arms.Start too.
	// When the run was canceled, teardown says how long after: the time a
	// canceled run takes to leave its load phase counts against the
	// runner's 7.5 s as much as the teardown's own.
	var canceled atomic.Int64
	stopWatch := context.AfterFunc(ctx, func() { canceled.Store(time.Now().UnixNano()) })
	defer func() {
		stopWatch()
		at := canceled.Load()
		if at != 0 {
			logf(r.o.Log, "teardown: began %s after the run was canceled", time.Since(time.Unix(0, at)).Round(time.Millisecond))
		}
		err = errors.Join(err, r.teardown(at != 0))
	}()
	if err := r.startStore(ctx); err != nil {
		return nil, err
	}
	for _, a := range []*ArmSpec{r.base, r.head} {
		if _, err := r.start(ctx, a); err != nil {
			return nil, err
		}
	}
	res, err := r.measure(ctx)
	if err != nil {
		return nil, err
	}
	checks, err := r.controls(ctx, res)
	if err != nil {
		return nil, err
	}
	rep = r.report(res, checks)
	return rep, r.write(rep)
}

// run is one gate run: its arms' specs and what the steps started, which
// teardown stops.
type run struct {
	o                   Options
	specs               []ArmSpec
	base, head, variant *ArmSpec
	srv                 *armdb.Server
	counter             *armdb.Counter
	procs               map[pairs.Role]*arms.Process
}

// newRun checks the options, clears the output folder of an earlier run's
// report and gives each arm its port and folder. It starts nothing.
func newRun(o Options) (*run, error) {
	if err := o.checkArms(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("making the output folder: %w", err)
	}
	if err := ClearReports(o.OutDir); err != nil {
		return nil, err
	}
	if err := controls.Preflight(o.Plan, o.Controls, o.Store); err != nil {
		return nil, err
	}
	// Copies: the caller's specs stay templates.
	r := &run{o: o, specs: append([]ArmSpec(nil), o.Arms...), procs: map[pairs.Role]*arms.Process{}}
	ports, err := host.FreePorts(len(r.specs))
	if err != nil {
		return nil, err
	}
	for i := range r.specs {
		if err := r.specs[i].prepare(o.OutDir, ports[i]); err != nil {
			return nil, err
		}
		logf(o.Log, "%s: %s (%s)", r.specs[i].Role, strings.Join(r.specs[i].Command, " "), r.specs[i].URL)
		// Two arms in one folder write one store.dsn: the later arm's
		// database would take both arms' commits, and the judge would
		// compare them silently wrong.
		for _, other := range r.specs[:i] {
			if other.Dir == r.specs[i].Dir {
				return nil, exit.Refusef("the %s and %s arms would share the folder %s, where each arm's store.dsn and files would overwrite the other's; give each arm its own folder (--base-dir and --head-dir, or dir in the arms file)", other.Role, r.specs[i].Role, other.Dir)
			}
		}
	}
	r.base, r.head, r.variant = specOf(r.specs, pairs.RoleBase), specOf(r.specs, pairs.RoleHead), specOf(r.specs, pairs.RoleVariant)
	return r, nil
}

// teardown stops what the steps started: the counters' connection, every
// arm (the variant too), then the store. A canceled run stops the store
// beside the arms, not after them: nothing is judged any more, and the
// runner gives a canceled job 7.5 s.
func (r *run) teardown(canceled bool) error {
	if r.counter != nil {
		r.counter.Close()
	}
	var storeErr error
	storeDone := make(chan struct{})
	stopStore := func() {
		defer close(storeDone)
		if r.srv != nil {
			storeErr = r.stopTimed("the store", r.srv.Stop)
		}
	}
	if canceled {
		go stopStore()
	}
	var err error
	for _, role := range []pairs.Role{pairs.RoleVariant, pairs.RoleHead, pairs.RoleBase} {
		if p := r.procs[role]; p != nil {
			err = errors.Join(err, r.stopTimed("the "+string(role)+" arm", p.Stop))
		}
	}
	if !canceled {
		stopStore()
	}
	<-storeDone
	return errors.Join(err, storeErr)
}

// stopTimed stops one thing and says how long it took: a runner allows a
// canceled job 7.5 s before it kills it, and a slow step must show by name.
func (r *run) stopTimed(what string, stop func() error) error {
	start := time.Now()
	err := stopQuietly(what, stop)
	logf(r.o.Log, "teardown: %s stopped in %s", what, time.Since(start).Round(time.Millisecond))
	return err
}

// startStore starts the PostgreSQL with a database per arm, when asked
// for, and writes each arm's store.dsn.
func (r *run) startStore(ctx context.Context) error {
	if !r.o.Store {
		return nil
	}
	storeDir := filepath.Join(r.o.OutDir, "store")
	// A killed run's server died with it, but its data folder (and its
	// private key) stayed behind.
	removed, err := armdb.RemoveStale(storeDir, OwnerGone)
	for _, d := range removed {
		logf(r.o.Log, "store: removed %s, left by a run whose process is gone", d)
	}
	if err != nil {
		return err
	}
	var dbs []string
	for _, a := range r.specs {
		dbs = append(dbs, a.Role.Database())
	}
	srv, err := armdb.Start(ctx, armdb.Options{Dir: storeDir, Databases: dbs, TLS: true, Owner: Owner()})
	if err != nil {
		return exit.Refusef("starting the arms' PostgreSQL store: %w", err)
	}
	r.srv = srv
	for _, a := range r.specs {
		if _, err := srv.WriteDSN(a.Role.Database(), a.Dir); err != nil {
			return fmt.Errorf("writing the %s arm's store.dsn: %w", a.Role, err)
		}
	}
	logf(r.o.Log, "store: PostgreSQL over TLS, databases %s", strings.Join(dbs, ", "))
	return nil
}

// start starts an arm and keeps it for teardown.
func (r *run) start(ctx context.Context, a *ArmSpec) (*arms.Process, error) {
	p, err := arms.Start(ctx, arms.Spec{
		Name: string(a.Role), Command: a.Command, Env: a.Env, Dir: a.Cwd,
		LogPath: filepath.Join(r.o.OutDir, string(a.Role)+".log"), Ready: a.Ready, ReadyTimeout: r.o.ReadyTimeout,
		Redact: r.o.Vars.Redactor(),
	})
	if err != nil {
		return nil, err
	}
	r.procs[a.Role] = p
	return p, nil
}

// arm is a started arm as the pairs drive it.
func (r *run) arm(a *ArmSpec) pairs.Arm {
	ra := pairs.Arm{Role: a.Role, Proc: r.procs[a.Role], URL: a.URL, CAFile: a.CAFile}
	if r.srv != nil {
		db := a.Role.Database()
		ra.Commits = func(ctx context.Context) (int64, error) { return r.srv.Commits(ctx, db) }
	}
	return ra
}

// measure runs the idle phase and the pairs over the started base and head.
func (r *run) measure(ctx context.Context) (*pairs.Result, error) {
	cfg := pairs.Config{
		Plan: r.o.Plan, Vars: r.o.Vars, Seed: r.o.Seed, Progress: r.o.Progress, Log: r.o.Log,
		Arms: []pairs.Arm{r.arm(r.base), r.arm(r.head)},
	}
	if r.srv != nil {
		// One held connection reads both arms' counters in one query, so
		// a window's edges are the same instant for both.
		counter, err := r.srv.Counter(ctx, pairs.RoleBase.Database(), pairs.RoleHead.Database())
		if err != nil {
			return nil, exit.Refusef("connecting to the arms' store to count transactions: %w", err)
		}
		r.counter = counter
		cfg.Counters = func(ctx context.Context) (map[string]int64, error) {
			m, err := counter.Read(ctx)
			if err != nil {
				return nil, err
			}
			return map[string]int64{string(pairs.RoleBase): m[pairs.RoleBase.Database()], string(pairs.RoleHead): m[pairs.RoleHead.Database()]}, nil
		}
	}
	return pairs.Run(ctx, cfg)
}

// controls runs the plan's counters and store writes and the controls,
// with the arms still up (internal/controls, docs/controls.md); nil when
// the run has none.
func (r *run) controls(ctx context.Context, res *pairs.Result) (*controls.Outcome, error) {
	if !controls.Has(r.o.Plan, r.o.Controls) {
		return nil, nil
	}
	target := func(a *ArmSpec) controls.Target {
		t := controls.Target{Name: string(a.Role), URL: a.URL, CAFile: a.CAFile}
		if r.srv != nil {
			t.DSN = r.srv.DSN(a.Role.Database())
		}
		return t
	}
	spec := controls.Spec{Plan: r.o.Plan, Controls: r.o.Controls, Vars: r.o.Vars, Seed: r.o.Seed, Log: r.o.Log,
		HeadArm: r.arm(r.head), HeadPhases: res.Input.Head, Head: target(r.head)}
	if r.variant != nil {
		// The variant is its own process from the head's build, with
		// its own port, folder, store database and rendered config,
		// started beside the head, which stays up.
		spec.StartVariant = func(ctx context.Context) (controls.Target, func() error, error) {
			p, err := r.start(ctx, r.variant)
			if err != nil {
				return controls.Target{}, nil, err
			}
			return target(r.variant), func() error {
				r.procs[pairs.RoleVariant] = nil
				return p.Stop()
			}, nil
		}
	}
	checks, err := controls.Run(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &checks, nil
}

// report is the run's report, judged, with the controls applied.
func (r *run) report(res *pairs.Result, checks *controls.Outcome) *report.Report {
	ab := r.o.Plan.AB
	rep := &report.Report{
		Version: report.Version,
		Tool:    "perfgate",
		Created: time.Now().UTC(),
		Base:    r.base.Info,
		Head:    r.head.Info,
		Judging: r.o.Judging,
		Settings: report.Settings{
			Plan: r.o.Plan.Path, PlanPath: r.o.PlanPath, Pairs: len(res.Input.Base), Rate: ab.Rate, // the pairs run: an adaptive gate may stop early
			Warmup: report.Duration(ab.Warmup), Measure: report.Duration(ab.Measure), Idle: report.Duration(ab.Idle),
		},
		// The plan lines the verdict service annotates a breach on.
		PlanLines: r.o.Plan.MetricLines(res.Input.Metrics),
		Input:     res.Input,
		BaseNote:  r.o.BaseNote,
	}
	if rep.Settings.PlanPath == "" {
		rep.Settings.PlanPath = repoPath(r.o.Plan.Path, r.o.env)
	}
	if r.variant != nil && checks != nil && checks.Variant != nil {
		info := r.variant.Info
		rep.Variant = &info
	}
	// Which attempt this is and where it ran, as retries are decided by them.
	runner := host.Facts(r.o.env)
	rep.Attempt, rep.RunAttempt, rep.CPUModel = runner.Attempt, runner.RunAttempt, runner.CPUModel
	rep.Verdict = judge.Judge(rep.Input)
	if checks != nil {
		// Kept in the report, so perfgate compare applies it again.
		rep.Controls = checks
		rep.Verdict.AddChecks(checks.Failures, checks.CannotJudge, checks.Notes)
	}
	return rep
}

// write keeps the report and the job summary in the output folder.
func (r *run) write(rep *report.Report) error {
	if err := report.Write(filepath.Join(r.o.OutDir, ReportFile), rep); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(r.o.OutDir, SummaryFile))
	if err != nil {
		return fmt.Errorf("writing the job summary: %w", err)
	}
	defer f.Close()
	if err := report.Markdown(f, rep); err != nil {
		return fmt.Errorf("writing the job summary: %w", err)
	}
	return f.Close()
}
