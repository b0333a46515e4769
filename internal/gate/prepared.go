package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/base"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/host"
	"github.com/perfgate/perfgate/internal/pairs"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/services"
)

// Prepared is a gate over the arms `perfgate prepare` built: each arm boots
// from its own tree's contract (config, overrides, services), the base's
// config is checked by the base binary first, and the plan is the head's,
// judged with the stricter of its and the base's settings (judging.go).
type Prepared struct {
	Target string // holds perf-base/ and perf-head/ (prepare's --out)
	Repo   string // the checkout: the head's tree
	// Plan overrides the head's contract plan; Reshape applies the command
	// line's profile to it.
	Plan    string
	Reshape func(*plan.AB) error
	Vars    []string
	Getenv  func(string) string
	// Resolved, when set, sees the plan's variables before any request is
	// made (the action masks their secrets).
	Resolved      func(*plan.Vars)
	Store         bool
	Seed          int64
	RunID         string // labels the compose projects; default a time stamp
	Out           string // reports, logs, rendered configs; default Target/perf-run
	Progress, Log io.Writer
}

// OutDir is where the run writes its report and summary.
func (pr Prepared) OutDir() string {
	if pr.Out != "" {
		return pr.Out
	}
	return string(contract.Target(pr.Target).Run())
}

// Run boots both arms from their contracts over their own services, runs
// the gate and tears everything down, also when ctx is canceled.
func (pr Prepared) Run(ctx context.Context) (rep *report.Report, err error) {
	pr.Out = pr.OutDir()
	pr.Log = locked(pr.Log) // a canceled run's teardown steps log side by side
	if pr.RunID == "" {
		pr.RunID = NewRunID()
	}
	// Said first: a user whose run is killed needs it for `services down`.
	logf(pr.Log, "run %s: its compose projects are labelled perfgate.run=%s (remove what a killed run left with: perfgate services down --run-id %s)", pr.RunID, pr.RunID, pr.RunID)
	a, err := pr.load(ctx)
	if err != nil {
		return nil, err
	}
	svc, running, err := pr.startServices(ctx, a)
	// One teardown for the services, on every way out. A canceled run
	// (SIGINT, SIGTERM) starts it at once, beside the arms' and the
	// store's: one after the other they took 3.7 s on a quiet 2-core
	// machine, and past the runner's 7.5 s on a busy one. Whichever
	// starts it, the deferred call waits for it (sync.Once).
	var downOnce sync.Once
	var downErr error
	down := func() {
		downOnce.Do(func() {
			if running == nil {
				return
			}
			// The run's context may be canceled already: teardown gets its own.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
			start := time.Now()
			if ctx.Err() != nil {
				downErr = running.Abort(dctx) // killed, not stopped: see Abort
			} else {
				downErr = running.Down(dctx)
			}
			logf(pr.Log, "teardown: the services went down in %s", time.Since(start).Round(time.Millisecond))
		})
	}
	stopEarly := context.AfterFunc(ctx, down)
	defer func() {
		stopEarly()
		down()
		err = errors.Join(err, downErr)
	}()
	if err != nil {
		return nil, err
	}
	o, err := pr.options(ctx, a, svc)
	if err != nil {
		return nil, err
	}
	return Run(ctx, o)
}

// preparedArms are what the build job left, read back: the base's choice,
// both arms' contracts, and the run's plan, variables and controls.
type preparedArms struct {
	choice       *base.Choice
	baseC, headC *contract.Contract
	plan         *plan.Plan
	judging      *report.Judging
	vars         *plan.Vars
	ctls         plan.Controls
}

// load reads the prepared arms, runs the head's [prepare] step, reads the
// plan and the controls, and derives each arm's overrides. It starts
// nothing.
func (pr Prepared) load(ctx context.Context) (*preparedArms, error) {
	target := contract.Target(pr.Target)
	if err := ClearReports(pr.Out); err != nil {
		return nil, err
	}
	choice, err := base.ReadFile(target.BaseNote())
	if err != nil {
		return nil, exit.Refusef("reading %s: %v: run `perfgate prepare` (or `perfgate unpack`) first", target.BaseNote(), err)
	}
	a := &preparedArms{choice: choice}
	if a.baseC, err = contract.LoadArm(target.Base()); err != nil {
		return nil, err
	}
	if a.headC, err = contract.LoadArm(target.Head()); err != nil {
		return nil, err
	}
	// The head's [prepare] step mints what the plan and the arms read (the
	// keys and tokens FerroFED's gate mints under target/perf-run), in the checkout,
	// before the plan's variable files are read or anything starts.
	if err := a.headC.RunPrepare(ctx, pr.Repo, pr.Out, pr.Log); err != nil {
		return nil, err
	}
	if a.plan, a.vars, a.judging, err = pr.plan(a.headC, a.baseC, choice.Commit); err != nil {
		return nil, err
	}
	// The controls are the gate files', the base's kinds over the head's,
	// read against the plan the run judges with; a plan's own [[control]]
	// is refused, naming its line.
	if a.ctls, err = judgingControls(a.plan, a.baseC, a.headC, a.judging); err != nil {
		return nil, err
	}
	// Each arm's overrides (arm.env, or a legacy tree's function) are
	// derived before any service starts: a function that sets nothing was
	// once refused only after the compose projects were up. The arms' real
	// ports are chosen after the services, which may take ports of their
	// own; these only stand in for them.
	checkPorts, err := host.FreePorts(2)
	if err != nil {
		return nil, err
	}
	for i, c := range []*contract.Contract{a.baseC, a.headC} {
		if err := c.CheckOverrides(ctx, checkPorts[i], contract.RunDir(pr.Out).Arm([]string{string(pairs.RoleBase), string(pairs.RoleHead)}[i])); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// startServices starts both trees' compose services, the base's own copy
// of each group that differs, when either tree names compose files. The
// caller takes running down.
func (pr Prepared) startServices(ctx context.Context, a *preparedArms) (*services.Plan, *services.Running, error) {
	if len(a.headC.Compose) == 0 && len(a.baseC.Compose) == 0 {
		return nil, nil, nil
	}
	project := composeProject(pr.Repo)
	checkout := Checkout(pr.Repo)
	// A run of this checkout that was killed left its containers,
	// networks and volumes: they hold ports and names this run needs.
	stale, err := services.DownStale(ctx, checkout, OwnerGone)
	for _, st := range stale {
		logf(pr.Log, "services: removed run %s of this checkout, whose process is gone (%d containers, networks and volumes)", st.RunID, len(st.What))
	}
	if err != nil {
		return nil, nil, err
	}
	svc, err := services.Diff(ctx,
		services.Tree{Dir: pr.Repo, Files: a.headC.Compose, Seeds: a.headC.Seeds, Project: project},
		services.Tree{Dir: contract.Target(pr.Target).BaseTree(), Files: a.baseC.Compose, Seeds: a.baseC.Seeds, Project: project})
	if err != nil {
		return nil, nil, err
	}
	logf(pr.Log, "services: %d group(s), base copies: %v", len(svc.Groups), svc.Copied())
	running, err := services.Up(ctx, svc, services.Start{
		RunID: pr.RunID, LogDir: contract.RunDir(pr.Out).Services(), Checkout: checkout, Owner: Owner(),
	})
	if err != nil {
		return nil, nil, err
	}
	return svc, running, nil
}

// options renders each arm's config on its port (the base's addresses of
// its own services rewritten to 127.0.0.2), has the base binary check its
// own, and names the arms for Run; svc is nil without services.
func (pr Prepared) options(ctx context.Context, a *preparedArms, svc *services.Plan) (Options, error) {
	ports, err := host.FreePorts(3)
	if err != nil {
		return Options{}, err
	}
	run := contract.RunDir(pr.Out)
	// Both arms start from the checkout, as FerroFED's gate does: a
	// relative path in either config reads the head's tree (docs/contract.md).
	checkoutDir := Checkout(pr.Repo)
	var rewrite func([]byte) []byte
	var baseServices, headServices map[string][]string
	if svc != nil {
		rewrite = svc.Rewrite
		// What each arm's generated files (the contract's generate) list.
		baseServices, headServices = svc.Addresses(true), svc.Addresses(false)
	}
	baseArm, err := a.baseC.Render(ctx, contract.RenderOptions{Port: ports[0], Dir: run.Arm(string(pairs.RoleBase)), Cwd: checkoutDir, Rewrite: rewrite, Services: baseServices})
	if err != nil {
		return Options{}, fmt.Errorf("rendering the base arm's config: %w", err)
	}
	headArm, err := a.headC.Render(ctx, contract.RenderOptions{Port: ports[1], Dir: run.Arm(string(pairs.RoleHead)), Cwd: checkoutDir, Services: headServices})
	if err != nil {
		return Options{}, fmt.Errorf("rendering the head arm's config: %w", err)
	}
	// The base binary must read its own tree's config before any load: a
	// base that refuses it cannot be an arm (exit 2, naming the keys).
	if err := a.baseC.CheckConfig(ctx, baseArm, a.choice.Commit); err != nil {
		return Options{}, err
	}
	logf(pr.Log, "base: %s (%s)", event.ShortSHA(a.choice.Commit), a.choice.Reason)

	head := headCommit(ctx, pr.Repo, pr.Getenv)
	o := Options{
		Plan: a.plan, Judging: a.judging, Vars: a.vars, Controls: a.ctls, Store: pr.Store, Getenv: pr.Getenv, OutDir: pr.Out, Seed: pr.Seed, Progress: pr.Progress, Log: pr.Log,
		PlanPath: armPlanPath(pr.Plan, a.headC), BaseNote: a.choice.Reason,
		Arms: []ArmSpec{
			armSpec(pairs.RoleBase, baseArm, ports[0], report.Build{Name: string(pairs.RoleBase), Commit: a.choice.Commit, Why: a.choice.Reason}),
			armSpec(pairs.RoleHead, headArm, ports[1], report.Build{Name: string(pairs.RoleHead), Commit: head}),
		},
	}
	if variant, ok := a.ctls.Of(plan.ControlVariant); ok {
		// The variant control's arm: the head's build rendered a second
		// time, with its own port and folder and the control's overrides
		// laid over the head's by the same rendering, so it differs from
		// the head in those alone. Its overrides are written as arm.env's
		// lines are, quotes and all, so they lose their quotes as those do.
		extra := contract.UnquoteOverrides(variant.Overrides)
		variantArm, err := a.headC.Render(ctx, contract.RenderOptions{Port: ports[2], Dir: run.Arm(string(pairs.RoleVariant)), Cwd: checkoutDir, Services: headServices, Extra: extra})
		if err != nil {
			return Options{}, fmt.Errorf("rendering the variant arm's config: %w", err)
		}
		o.Arms = append(o.Arms, armSpec(pairs.RoleVariant, variantArm, ports[2], report.Build{Name: string(pairs.RoleVariant), Commit: head, Overrides: variant.Overrides}))
	}
	return o, nil
}

// armPlanPath is the plan's path in the repository when the run reads the
// head arm's copy of it (no --plan given): the contract names it relative
// to the tree it was exported from, so GitHub's annotations point at
// perf/plan.toml, not at target/perf-run/arms/perf-head/.../perf/plan.toml.
// With --plan, "" lets the report find the path from the file itself.
func armPlanPath(given string, head *contract.Contract) string {
	if given != "" || head.Plan == "" || filepath.IsAbs(head.Plan) {
		return ""
	}
	return relative(head.Tree, filepath.Join(head.Tree, head.Plan))
}

// plan is the plan the run sends (the head's) with the settings it judges
// with (judging.go), and its variables.
func (pr Prepared) plan(head, base *contract.Contract, baseCommit string) (*plan.Plan, *plan.Vars, *report.Judging, error) {
	path := pr.Plan
	if path == "" {
		path = filepath.Join(head.Tree, head.Plan)
	}
	hp, err := plan.ParseFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	p, judging, err := judgingPlan(hp, base, baseCommit, pr.Reshape)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := p.CheckAB(p.AB); err != nil {
		return nil, nil, nil, err
	}
	v, err := plan.ResolveVars(p, pr.Vars, pr.Getenv)
	if err != nil {
		return nil, nil, nil, err
	}
	if pr.Resolved != nil {
		pr.Resolved(v)
	}
	return p, v, judging, nil
}

// armSpec starts a rendered arm: its own environment (fixed, overrides,
// config variable) over the minimal one the arms package passes on.
func armSpec(role pairs.Role, a *contract.Rendered, port int, info report.Build) ArmSpec {
	return ArmSpec{Role: role, Command: a.Command, Env: a.Env, Dir: a.Dir, Cwd: a.Cwd, Port: port, Ready: a.Ready, Info: info}
}

// composeProject is the compose project name the checkout would get from
// `docker compose`: its folder's name, lower-cased, [a-z0-9_-] only. The
// run id is added when the services start.
func composeProject(repo string) string {
	abs, err := filepath.Abs(repo)
	if err != nil {
		abs = repo
	}
	if name := services.SafeName(filepath.Base(abs)); name != "" {
		return name
	}
	return "perfgate"
}

// Checkout is the checkout's absolute path, links resolved: what the
// perfgate.checkout label of its runs names.
func Checkout(repo string) string {
	abs, err := filepath.Abs(repo)
	if err != nil {
		return repo
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// NewRunID is a fresh run id: "perfgate-" and the time in base 36.
func NewRunID() string {
	return "perfgate-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// headCommit is the commit the job checked out: Actions' GITHUB_SHA, else
// the checkout's HEAD; "" when neither says.
func headCommit(ctx context.Context, repo string, getenv func(string) string) string {
	if getenv != nil {
		if sha := getenv("GITHUB_SHA"); sha != "" {
			return sha
		}
	}
	out, err := exec.CommandContext(ctx, "git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
