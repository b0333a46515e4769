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
	target := contract.Target(pr.Target)
	baseDir, headDir := target.Base(), target.Head()
	pr.Out = pr.OutDir()
	run := contract.RunDir(pr.Out)
	if pr.RunID == "" {
		pr.RunID = NewRunID()
	}
	// Said first: a user whose run is killed needs it for `services down`.
	logf(pr.Log, "run %s: its compose projects are labelled perfgate.run=%s (remove what a killed run left with: perfgate services down --run-id %s)", pr.RunID, pr.RunID, pr.RunID)
	if err := ClearReports(pr.Out); err != nil {
		return nil, err
	}
	choice, err := base.ReadFile(target.BaseNote())
	if err != nil {
		return nil, exit.Refusef("reading %s: %v: run `perfgate prepare` (or `perfgate unpack`) first", target.BaseNote(), err)
	}
	baseC, err := contract.LoadArm(baseDir)
	if err != nil {
		return nil, err
	}
	headC, err := contract.LoadArm(headDir)
	if err != nil {
		return nil, err
	}
	// The head's [prepare] step mints what the plan and the arms read (the
	// keys and tokens FerroFED's gate mints under target/perf-run), in the checkout,
	// before the plan's variable files are read or anything starts.
	if err := headC.RunPrepare(ctx, pr.Repo, pr.Out, pr.Log); err != nil {
		return nil, err
	}
	p, vars, judging, err := pr.plan(headC, baseC, choice.Commit)
	if err != nil {
		return nil, err
	}
	// The controls are the gate files', the base's kinds over the head's,
	// read against the plan the run judges with; a plan's own [[control]]
	// is refused, naming its line.
	ctls, err := judgingControls(p, baseC, headC, judging)
	if err != nil {
		return nil, err
	}
	variant, hasVariant := ctls.Of(plan.ControlVariant)

	// Each arm's overrides (arm.env, or a legacy tree's function) are
	// derived before any service starts: a function that sets nothing was
	// once refused only after the compose projects were up. The arms' real
	// ports are chosen after the services, which may take ports of their
	// own; these only stand in for them.
	checkPorts, err := host.FreePorts(2)
	if err != nil {
		return nil, err
	}
	for i, c := range []*contract.Contract{baseC, headC} {
		if err := c.CheckOverrides(ctx, checkPorts[i], run.Arm([]string{string(pairs.RoleBase), string(pairs.RoleHead)}[i])); err != nil {
			return nil, err
		}
	}

	var svc *services.Plan
	if len(headC.Compose) > 0 || len(baseC.Compose) > 0 {
		project := composeProject(pr.Repo)
		checkout := Checkout(pr.Repo)
		// A run of this checkout that was killed left its containers,
		// networks and volumes: they hold ports and names this run needs.
		stale, serr := services.DownStale(ctx, checkout, OwnerGone)
		for _, st := range stale {
			logf(pr.Log, "services: removed run %s of this checkout, whose process is gone (%d containers, networks and volumes)", st.RunID, len(st.What))
		}
		if serr != nil {
			return nil, serr
		}
		svc, err = services.Diff(ctx,
			services.Tree{Dir: pr.Repo, Files: headC.Compose, Seeds: headC.Seeds, Project: project},
			services.Tree{Dir: target.BaseTree(), Files: baseC.Compose, Seeds: baseC.Seeds, Project: project})
		if err != nil {
			return nil, err
		}
		logf(pr.Log, "services: %d group(s), base copies: %v", len(svc.Groups), svc.Copied())
		// Not :=, which would declare an err of this block and leave the
		// deferred teardown's error out of what Run returns.
		var running *services.Running
		running, err = services.Up(ctx, svc, services.Start{
			RunID: pr.RunID, LogDir: run.Services(), Checkout: checkout, Owner: Owner(),
		})
		if err != nil {
			return nil, err
		}
		defer func() {
			// The run's context may be canceled already: teardown gets its own.
			down, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
			err = errors.Join(err, running.Down(down))
		}()
	}

	ports, err := host.FreePorts(3)
	if err != nil {
		return nil, err
	}
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
	baseArm, err := baseC.Render(ctx, contract.RenderOptions{Port: ports[0], Dir: run.Arm(string(pairs.RoleBase)), Cwd: checkoutDir, Rewrite: rewrite, Services: baseServices})
	if err != nil {
		return nil, fmt.Errorf("rendering the base arm's config: %w", err)
	}
	headArm, err := headC.Render(ctx, contract.RenderOptions{Port: ports[1], Dir: run.Arm(string(pairs.RoleHead)), Cwd: checkoutDir, Services: headServices})
	if err != nil {
		return nil, fmt.Errorf("rendering the head arm's config: %w", err)
	}
	// The base binary must read its own tree's config before any load: a
	// base that refuses it cannot be an arm (exit 2, naming the keys).
	if err := baseC.CheckConfig(ctx, baseArm, choice.Commit); err != nil {
		return nil, err
	}
	logf(pr.Log, "base: %s (%s)", event.ShortSHA(choice.Commit), choice.Reason)

	head := headCommit(ctx, pr.Repo, pr.Getenv)
	o := Options{
		Plan: p, Judging: judging, Vars: vars, Controls: ctls, Store: pr.Store, OutDir: pr.Out, Seed: pr.Seed, Progress: pr.Progress, Log: pr.Log,
		PlanPath: armPlanPath(pr.Plan, headC), BaseNote: choice.Reason,
		Arms: []ArmSpec{
			armSpec(pairs.RoleBase, baseArm, ports[0], report.Build{Name: string(pairs.RoleBase), Commit: choice.Commit, Why: choice.Reason}),
			armSpec(pairs.RoleHead, headArm, ports[1], report.Build{Name: string(pairs.RoleHead), Commit: head}),
		},
	}
	if hasVariant {
		// The variant control's arm: the head's build rendered a second
		// time, with its own port and folder and the control's overrides
		// laid over the head's by the same rendering, so it differs from
		// the head in those alone.
		variantArm, err := headC.Render(ctx, contract.RenderOptions{Port: ports[2], Dir: run.Arm(string(pairs.RoleVariant)), Cwd: checkoutDir, Services: headServices, Extra: variant.Overrides})
		if err != nil {
			return nil, fmt.Errorf("rendering the variant arm's config: %w", err)
		}
		o.Arms = append(o.Arms, armSpec(pairs.RoleVariant, variantArm, ports[2], report.Build{Name: string(pairs.RoleVariant), Commit: head, Overrides: variant.Overrides}))
	}
	return Run(ctx, o)
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
