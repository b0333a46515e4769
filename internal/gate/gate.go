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

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/arms"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/host"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/pairs"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/report"
)

// ArmSpec says how to start one arm, tagged with its role. Command, Env,
// URL and Ready may hold @PORT@ (the arm's port) and @DIR@ (its work
// directory).
type ArmSpec struct {
	Role    pairs.Role
	Command []string
	Env     []string
	Dir     string // work directory (@DIR@); default OutDir/<role>
	Cwd     string // where the process starts; default Dir
	Port    int    // 0: a free loopback port
	URL     string // where the load goes; default http://127.0.0.1:@PORT@
	Ready   string // ready probe: a URL, a path on URL, or tcp://; default URL
	CAFile  string
	Info    report.Build
}

// Options is one gate run.
type Options struct {
	Plan *plan.Plan
	// Judging says which plan's settings judge, for the report; nil when
	// the gate has one plan (perfgate ab, demo).
	Judging *report.Judging
	Vars    *plan.Vars
	// Arms are the run's arms, each tagged with its role: one base and one
	// head, which the pairs drive against each other, and a variant when
	// the controls hold a variant control (VariantOf makes one from the
	// head's spec). A variant is started only for its control, after the
	// pairs, beside the head.
	Arms []ArmSpec
	// Controls are the after-run controls: the gate file's [[control]]
	// tables under perfgate run, the plan's under perfgate ab.
	Controls plan.Controls
	// Store starts a PostgreSQL with one database per arm (perf_<role>)
	// and writes each arm's connection string to <dir>/store.dsn.
	Store    bool
	OutDir   string // reports, logs, the arms' dirs
	Seed     int64
	Progress io.Writer // terminal progress lines; nil for none
	Log      io.Writer // a line per phase; nil for none
	// ReadyTimeout bounds each arm's start; 0 means 60 s.
	ReadyTimeout time.Duration
	// PlanPath is the plan's path in the repository (perf/plan.toml) when
	// Plan.Path is a copy outside it, as the exported head arm's is;
	// empty: found from Plan.Path.
	PlanPath string
	// BaseNote is the sentence saying why the base was chosen (base.md's),
	// kept in the report: the verdict service makes the release-notes
	// line from it.
	BaseNote string
}

// Files written under OutDir.
const (
	ReportFile  = "latest.json"
	SummaryFile = "summary.md"
)

// VariantOf is the variant arm of perfgate ab: the head's spec started a
// second time, beside the head, with overrides added to its environment,
// on a port and in a folder of its own. A head whose port or URL the
// caller fixed cannot be started twice on one machine, so it is refused.
func VariantOf(head ArmSpec, overrides []string) (ArmSpec, error) {
	if head.Port != 0 {
		return ArmSpec{}, exit.Refusef("the variant control starts the head's command a second time beside the head, on a port of its own, but the head's port is fixed (%d); leave the port out and write @PORT@ in the head's command", head.Port)
	}
	if head.URL != "" && !strings.Contains(head.URL, contract.PortPlaceholder) {
		return ArmSpec{}, exit.Refusef("the variant control starts the head's command a second time beside the head, on a port of its own, but the head's URL %s names a fixed port; write @PORT@ in it", head.URL)
	}
	v := head
	v.Role = pairs.RoleVariant
	v.Dir, v.Cwd = "", head.Cwd
	v.Env = append(append([]string(nil), head.Env...), overrides...)
	v.Info = report.Build{Name: string(pairs.RoleVariant), Commit: head.Info.Commit, Ref: head.Info.Ref, Overrides: overrides}
	return v, nil
}

// Pair is the arms of a gate over a base and a head, tagged with their
// roles.
func Pair(base, head ArmSpec) []ArmSpec {
	base.Role, head.Role = pairs.RoleBase, pairs.RoleHead
	return []ArmSpec{base, head}
}

// specOf returns the spec of a role, or nil.
func specOf(arms []ArmSpec, r pairs.Role) *ArmSpec {
	for i := range arms {
		if arms[i].Role == r {
			return &arms[i]
		}
	}
	return nil
}

// checkArms refuses arms that are not one base, one head and at most one
// variant, and a variant the controls do not ask for or lack.
func (o Options) checkArms() error {
	count := map[pairs.Role]int{}
	for _, a := range o.Arms {
		if !a.Role.Known() {
			return fmt.Errorf("gate: an arm has role %q; the roles are %v", a.Role, pairs.Roles)
		}
		count[a.Role]++
	}
	if count[pairs.RoleBase] != 1 || count[pairs.RoleHead] != 1 || count[pairs.RoleVariant] > 1 {
		return fmt.Errorf("gate: the arms must be one base, one head and at most one variant, not %v", count)
	}
	_, wants := o.Controls.Of(plan.ControlVariant)
	switch {
	case wants && count[pairs.RoleVariant] == 0:
		c, _ := o.Controls.Of(plan.ControlVariant)
		return exit.Refusef("%s:%d: this gate was given no variant arm for the variant control; run it with perfgate ab or run, or remove the [[control]] of kind variant", c.File, c.Line)
	case !wants && count[pairs.RoleVariant] > 0:
		return fmt.Errorf("gate: a variant arm was given, but no [[control]] of kind variant asks for one")
	}
	return nil
}

// Run starts, measures, judges and stops. The report is returned (and
// written) whatever the verdict; the error is nil only when the run itself
// completed, so callers take the exit code from the verdict.
func Run(ctx context.Context, o Options) (rep *report.Report, err error) {
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
	specs := append([]ArmSpec(nil), o.Arms...)
	ports, err := host.FreePorts(len(specs))
	if err != nil {
		return nil, err
	}
	for i := range specs {
		if err := specs[i].prepare(o.OutDir, ports[i]); err != nil {
			return nil, err
		}
		logf(o.Log, "%s: %s (%s)", specs[i].Role, strings.Join(specs[i].Command, " "), specs[i].URL)
	}
	base, head, variant := specOf(specs, pairs.RoleBase), specOf(specs, pairs.RoleHead), specOf(specs, pairs.RoleVariant)

	var srv *armdb.Server
	if o.Store {
		storeDir := filepath.Join(o.OutDir, "store")
		// A killed run's server died with it, but its data folder (and its
		// private key) stayed behind.
		removed, rerr := armdb.RemoveStale(storeDir, OwnerGone)
		for _, d := range removed {
			logf(o.Log, "store: removed %s, left by a run whose process is gone", d)
		}
		if rerr != nil {
			return nil, rerr
		}
		var dbs []string
		for _, a := range specs {
			dbs = append(dbs, a.Role.Database())
		}
		srv, err = armdb.Start(ctx, armdb.Options{Dir: storeDir, Databases: dbs, TLS: true, Owner: Owner()})
		if err != nil {
			return nil, exit.Refusef("starting the arms' PostgreSQL store: %w", err)
		}
		defer func() { err = errors.Join(err, stopQuietly("the store", srv.Stop)) }()
		for _, a := range specs {
			if _, err := srv.WriteDSN(a.Role.Database(), a.Dir); err != nil {
				return nil, fmt.Errorf("writing the %s arm's store.dsn: %w", a.Role, err)
			}
		}
		logf(o.Log, "store: PostgreSQL over TLS, databases %s", strings.Join(dbs, ", "))
	}

	// Every arm started is stopped on every way out, the variant too; a
	// canceled ctx (SIGINT, SIGTERM) stops them through arms.Start as well.
	procs := map[pairs.Role]*arms.Process{}
	defer func() {
		for _, r := range []pairs.Role{pairs.RoleVariant, pairs.RoleHead, pairs.RoleBase} {
			if p := procs[r]; p != nil {
				err = errors.Join(err, stopQuietly("the "+string(r)+" arm", p.Stop))
			}
		}
	}()
	start := func(ctx context.Context, a *ArmSpec) (*arms.Process, error) {
		p, err := arms.Start(ctx, arms.Spec{
			Name: string(a.Role), Command: a.Command, Env: a.Env, Dir: a.Cwd,
			LogPath: filepath.Join(o.OutDir, string(a.Role)+".log"), Ready: a.Ready, ReadyTimeout: o.ReadyTimeout,
			Redact: o.Vars.Redactor(),
		})
		if err != nil {
			return nil, err
		}
		procs[a.Role] = p
		return p, nil
	}
	for _, a := range []*ArmSpec{base, head} {
		if _, err := start(ctx, a); err != nil {
			return nil, err
		}
	}

	runArm := func(a *ArmSpec) pairs.Arm {
		ra := pairs.Arm{Role: a.Role, Proc: procs[a.Role], URL: a.URL, CAFile: a.CAFile}
		if srv != nil {
			db := a.Role.Database()
			ra.Commits = func(ctx context.Context) (int64, error) { return srv.Commits(ctx, db) }
		}
		return ra
	}
	headArm := runArm(head)
	cfg := pairs.Config{
		Plan: o.Plan, Vars: o.Vars, Seed: o.Seed, Progress: o.Progress, Log: o.Log,
		Arms: []pairs.Arm{runArm(base), headArm},
	}
	if srv != nil {
		// One held connection reads both arms' counters in one query, so
		// a window's edges are the same instant for both.
		counter, err := srv.Counter(ctx, pairs.RoleBase.Database(), pairs.RoleHead.Database())
		if err != nil {
			return nil, exit.Refusef("connecting to the arms' store to count transactions: %w", err)
		}
		defer counter.Close()
		cfg.Counters = func(ctx context.Context) (map[string]int64, error) {
			m, err := counter.Read(ctx)
			if err != nil {
				return nil, err
			}
			return map[string]int64{string(pairs.RoleBase): m[pairs.RoleBase.Database()], string(pairs.RoleHead): m[pairs.RoleHead.Database()]}, nil
		}
	}
	res, err := pairs.Run(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// The plan's counters and store writes and the controls, with the
	// arms still up (internal/controls, docs/controls.md).
	var checks controls.Outcome
	has := controls.Has(o.Plan, o.Controls)
	if has {
		target := func(a *ArmSpec) controls.Target {
			t := controls.Target{Name: string(a.Role), URL: a.URL, CAFile: a.CAFile}
			if srv != nil {
				t.DSN = srv.DSN(a.Role.Database())
			}
			return t
		}
		spec := controls.Spec{Plan: o.Plan, Controls: o.Controls, Vars: o.Vars, Seed: o.Seed, Log: o.Log,
			HeadArm: headArm, HeadPhases: res.Input.Head, Head: target(head)}
		if variant != nil {
			// The variant is its own process from the head's build, with
			// its own port, folder, store database and rendered config,
			// started beside the head, which stays up.
			spec.StartVariant = func(ctx context.Context) (controls.Target, func() error, error) {
				p, err := start(ctx, variant)
				if err != nil {
					return controls.Target{}, nil, err
				}
				return target(variant), func() error {
					procs[pairs.RoleVariant] = nil
					return p.Stop()
				}, nil
			}
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
		Judging: o.Judging,
		Settings: report.Settings{
			Plan: o.Plan.Path, PlanPath: o.PlanPath, Pairs: ab.Pairs, Rate: ab.Rate,
			Warmup: report.Duration(ab.Warmup), Measure: report.Duration(ab.Measure), Idle: report.Duration(ab.Idle),
		},
		// The plan lines the verdict service annotates a breach on.
		PlanLines: o.Plan.MetricLines(res.Input.Metrics),
		Input:     res.Input,
		BaseNote:  o.BaseNote,
	}
	if rep.Settings.PlanPath == "" {
		rep.Settings.PlanPath = repoPath(o.Plan.Path, os.Getenv)
	}
	if variant != nil && checks.Variant != nil {
		info := variant.Info
		rep.Variant = &info
	}
	// Which attempt this is and where it ran, as retries are decided by them.
	runner := host.Facts(os.Getenv)
	rep.Attempt, rep.RunAttempt, rep.CPUModel = runner.Attempt, runner.RunAttempt, runner.CPUModel
	rep.Verdict = judge.Judge(rep.Input)
	if has {
		// Kept in the report, so perfgate compare applies it again.
		rep.Controls = &checks
		rep.Verdict.AddChecks(checks.Failures, checks.CannotJudge, checks.Notes)
	}
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
func (a *ArmSpec) prepare(out string, free int) error {
	name := string(a.Role)
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
		a.URL = contract.DefaultURL
	}
	subst := strings.NewReplacer(contract.PortPlaceholder, strconv.Itoa(a.Port), contract.DirPlaceholder, a.Dir)
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
