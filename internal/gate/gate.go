// Package gate runs one A/B gate end to end over two commands: it starts
// the arms' store and the arms, runs the idle phase and the pairs, judges,
// writes the report, and stops everything it started, also when the run is
// interrupted. The commands `ab` and `demo` are thin layers over it.
package gate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
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
	// Getenv reads the job's environment (the runner's attempt numbers,
	// GITHUB_WORKSPACE for the plan's path in the repository); nil reads
	// none, as a test or a laptop's run wants.
	Getenv func(string) string
	// PlanPath is the plan's path in the repository (perf/plan.toml) when
	// Plan.Path is a copy outside it, as the exported head arm's is;
	// empty: found from Plan.Path.
	PlanPath string
	// BaseNote is the sentence saying why the base was chosen (base.md's),
	// kept in the report: the verdict service makes the release-notes
	// line from it.
	BaseNote string
}

// env is o.Getenv, or an empty environment.
func (o Options) env(name string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(name)
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

// lockedWriter lets a canceled run's teardown steps, which run side by
// side, share one log: each line is one Write, under the lock.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// locked wraps w once; nil stays nil (logf writes nothing then).
func locked(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	if _, ok := w.(*lockedWriter); ok {
		return w
	}
	return &lockedWriter{w: w}
}
