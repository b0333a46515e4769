package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/services"
	"github.com/perfgate/perfgate/internal/trees"
)

func init() {
	register(Command{Name: "check", Summary: "check a repository's gate contract offline: gate file, both arms' configs, the compose plan, base resolution, the plans", Run: runCheck})
}

// checkPorts are the ports the arms' configs are rendered with: the
// seed's, since nothing is started.
const checkHeadPort, checkBasePort = 8080, 8070

// checker prints one line per check and keeps the first failure, so a
// repository's author sees every problem and the exit names the first.
type checker struct {
	s     *IO
	first error
	fails int
	// trees are the folders of the contracts read (the checkout, each
	// base's export): refusals name their files relative to them, as the
	// gate file does, since a base's export is gone when the check ends.
	trees []string
}

func (c *checker) ok(name, format string, a ...any) {
	fmt.Fprintf(c.s.Out, "ok    %s: %s\n", name, fmt.Sprintf(format, a...))
}

func (c *checker) skip(name, format string, a ...any) {
	fmt.Fprintf(c.s.Out, "skip  %s: %s\n", name, fmt.Sprintf(format, a...))
}

func (c *checker) fail(name string, err error) {
	err = c.inTree(err)
	fmt.Fprintf(c.s.Out, "FAIL  %s: %s\n", name, oneLineErr(err))
	c.fails++
	if c.first == nil {
		c.first = err
	}
}

func oneLineErr(err error) string { return strings.ReplaceAll(err.Error(), "\n", " / ") }

// inTree is err with the trees' folders left out of its message.
func (c *checker) inTree(err error) error {
	msg := err.Error()
	for _, t := range c.trees {
		msg = strings.ReplaceAll(msg, t+string(filepath.Separator), "")
	}
	if msg == err.Error() {
		return err
	}
	return &treeError{msg: msg, err: err}
}

// treeError keeps the error it rewords, and so its exit code.
type treeError struct {
	msg string
	err error
}

func (e *treeError) Error() string { return e.msg }
func (e *treeError) Unwrap() error { return e.err }

// runCheck is FerroFED's `gate.sh --self-test` for any repository: the
// contract checked without docker, PostgreSQL or a build.
func runCheck(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("check", s)
	repo := fs.String("repo", ".", "the repository's checkout (the head)")
	baseRev := fs.String("base", "", "check only this commit's tree as the base arm (default: every base the events resolve to)")
	baseRef := fs.String("base-ref", "", "pull_request and merge_group: the base branch (default: main, master or origin/main, the first that exists)")
	tag := fs.String("tag", "", "release: the release's tag (default: the newest tag on HEAD; no tag skips the release base)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return exit.Refusef("perfgate check: unexpected argument %q: name the checkout with --repo", fs.Arg(0))
	}
	work, err := os.MkdirTemp("", "perfgate-check-")
	if err != nil {
		return fmt.Errorf("making the check's scratch folder: %w", err)
	}
	defer os.RemoveAll(work)
	c := &checker{s: s}

	head := c.contract(ctx, *repo, "head", nil)
	if head != nil {
		c.render(ctx, head, "head", checkHeadPort, filepath.Join(work, "head"), nil)
		c.plans(head)
	}
	commits := c.bases(ctx, *repo, *baseRef, *tag, head)
	if *baseRev != "" {
		commit, err := gitOut(ctx, *repo, "rev-parse", "--verify", *baseRev+"^{commit}")
		if err != nil {
			c.fail("base tree", exit.Refusef("%s: cannot resolve --base %q (%v); give a commit of this repository", *repo, *baseRev, err))
		}
		commits = []string{commit}
	}
	// Each base the events resolved to is booted as an arm somewhere: its
	// own contract, its compose copy and its rewritten config.
	diffed := false
	for i, commit := range commits {
		if commit == "" {
			continue
		}
		arm := "base " + event.ShortSHA(commit)
		baseTree := filepath.Join(work, fmt.Sprintf("base-tree-%d", i))
		if err := trees.Export(ctx, *repo, commit, baseTree); err != nil {
			c.fail(arm+" tree", fmt.Errorf("exporting the base %s: %w", event.ShortSHA(commit), err))
			continue
		}
		bc := c.contract(ctx, baseTree, arm, head)
		if bc == nil || head == nil {
			continue
		}
		svc := c.compose(ctx, arm, head, bc)
		diffed = true
		c.render(ctx, bc, arm, checkBasePort, filepath.Join(work, fmt.Sprintf("base-%d", i)), svc)
	}
	if !diffed && head != nil && len(head.Compose) > 0 {
		// No base to diff with: the head's own files are still read.
		if names, err := services.CheckTree(ctx, services.Tree{Dir: head.Tree, Files: head.Compose, Seeds: head.Seeds, Project: "perfgate-check"}, "head"); err != nil {
			c.fail("compose plan (head)", err)
		} else {
			c.ok("compose plan (head)", "no base to diff with; %s load: services %s", strings.Join(head.Compose, ", "), strings.Join(names, ", "))
		}
	}
	if c.first != nil {
		fmt.Fprintf(s.Out, "%d check(s) failed; the first:\n", c.fails)
		return c.first
	}
	fmt.Fprintln(s.Out, "every check passed")
	return nil
}

// contract reads an arm's contract: the head's from the checkout (head
// nil), a base's as prepare reads it (contract.LoadBase), so a tree with no
// gate file of its own is read with the head's when the head declares how
// to read legacy trees.
func (c *checker) contract(_ context.Context, dir, arm string, head *contract.Contract) *contract.Contract {
	if abs, err := filepath.Abs(dir); err == nil {
		c.trees = append(c.trees, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			c.trees = append(c.trees, real)
		}
	}
	k, err := contract.LoadBase(dir, head)
	if err != nil {
		c.fail(arm+" gate file", err)
		return nil
	}
	how := "overrides from " + k.Overrides
	if _, err := os.Stat(filepath.Join(k.Tree, k.Overrides)); err != nil && k.Legacy != nil {
		how = "overrides derived from " + k.Legacy.Script + "'s " + k.Legacy.Function + "()"
	}
	gate := contract.GateFile
	if _, err := os.Stat(filepath.Join(k.Tree, filepath.FromSlash(contract.GateFile))); err != nil && head != nil {
		gate = "no " + contract.GateFile + " of its own: the head's, read over this tree ([legacy])"
	}
	c.ok(arm+" gate file", "%s: build, start %q, config %s, %s, prefix %s, compose %v, plan %s", gate, k.Start, k.Config, how, k.Prefix, k.Compose, k.Plan)
	if len(k.Prepare) > 0 && arm == "head" {
		// Listed, not run: a check starts nothing.
		cmds := make([]string, len(k.Prepare))
		for i, argv := range k.Prepare {
			cmds[i] = strings.Join(argv, " ")
		}
		c.ok("prepare", "%d command(s), run by perfgate run before the plan is read: %s", len(cmds), strings.Join(cmds, "; "))
	}
	return k
}

// render fills the arm's config and overrides, as run does before the
// arm starts, and for the base checks that the rewrite to 127.0.0.2 moved
// every address of its copied services and kept every other byte.
func (c *checker) render(ctx context.Context, k *contract.Contract, arm string, port int, dir string, svc *services.Plan) {
	var before []byte
	var rewrite func([]byte) []byte
	var addrs map[string][]string
	if svc != nil {
		rewrite, addrs = svc.Rewrite, svc.Addresses(true)
	}
	if rewrite != nil {
		// The config as it would be without the rewrite, in the same
		// folder, so @DIR@ fills the same.
		plain, err := k.Render(ctx, contract.RenderOptions{Port: port, Dir: dir})
		if err != nil {
			c.fail(arm+" config", err)
			return
		}
		if before, err = os.ReadFile(plain.ConfigPath); err != nil {
			c.fail(arm+" config", fmt.Errorf("reading the rendered %s: %w", plain.ConfigPath, err))
			return
		}
	}
	a, err := k.Render(ctx, contract.RenderOptions{Port: port, Dir: dir, Rewrite: rewrite, Services: addrs})
	if err != nil {
		c.fail(arm+" config", err)
		return
	}
	var over []string
	for _, e := range a.Env {
		if name, _, _ := strings.Cut(e, "="); strings.HasPrefix(name, k.Prefix) {
			over = append(over, name)
		}
	}
	c.ok(arm+" config", "%s rendered on port %d with %d override(s) %s", k.Config, port, len(over), strings.Join(over, " "))
	if rewrite == nil {
		return
	}
	rendered, err := os.ReadFile(a.ConfigPath)
	if err != nil {
		c.fail(arm+" config rewrite", fmt.Errorf("reading the rendered %s: %w", a.ConfigPath, err))
		return
	}
	if err := rewriteReaches(k, svc, before, rendered, a.Env); err != nil {
		c.fail(arm+" config rewrite", err)
		return
	}
	if bytes.Equal(before, rendered) {
		c.ok(arm+" config rewrite", "no address of a copied service in %s: nothing moved to 127.0.0.2", k.Config)
		return
	}
	moved := strings.Count(string(rendered), "127.0.0.2") - strings.Count(string(before), "127.0.0.2")
	c.ok(arm+" config rewrite", "%d address(es) in %s moved to 127.0.0.2, the rest unchanged", moved, k.Config)
}

// rewriteReaches refuses a base whose arm would not reach its own copy of
// a service: the rewrite moves 127.0.0.1:PORT and localhost:PORT in the
// config alone, so a moved port the config names under another host, or
// only in an override, or not at all, stays pointed at the head's copy
// (or at nothing). A contract that generates files listing each arm's
// services (generate) hands the base its addresses there instead.
func rewriteReaches(k *contract.Contract, svc *services.Plan, before, rendered []byte, env []string) error {
	for _, m := range svc.Moved {
		if strings.Contains(m.Port, "-") {
			continue // a range: its ports are named one by one, if at all
		}
		loopback := regexp.MustCompile(`(127\.0\.0\.1|localhost):` + m.Port + `([^0-9]|$)`)
		for _, e := range env {
			name, value, _ := strings.Cut(e, "=")
			if strings.HasPrefix(name, k.Prefix) && loopback.MatchString(value) {
				file, line := overrideLine(k, name)
				return exit.Refusef("%s:%d: %s names %s:%s, the address of %s, whose base copy runs on %s:%s; the rewrite to %s moves addresses in %s only, so the base arm would reach the head's %s: name the address in %s instead",
					file, line, name, loopback.FindStringSubmatch(value)[1], m.Port, m.Service, services.BaseHost, m.Port, services.BaseHost, k.Config, m.Service, k.Config)
			}
		}
		if strings.Contains(string(rendered), services.BaseHost+":"+m.Port) || len(k.Generate) > 0 {
			continue
		}
		anyHost := regexp.MustCompile(`([A-Za-z0-9_.\-\[\]:]*:` + m.Port + `)(?:[^0-9]|$)`)
		if loc := anyHost.FindSubmatchIndex(before); loc != nil {
			line := 1 + bytes.Count(before[:loc[2]], []byte("\n"))
			named := string(before[loc[2]:loc[3]])
			return exit.Refusef("%s:%d: names %s's port %s as %s, which the rewrite to %s cannot move (it moves 127.0.0.1:%s and localhost:%s only), so the base arm would not reach its own copy of %s: write 127.0.0.1:%s",
				k.Config, line, m.Service, m.Port, named, services.BaseHost, m.Port, m.Port, m.Service, m.Port)
		}
		file, line := svc.PortLine(m.Service, m.Port)
		if file == "" {
			file, line = k.Config, 1
		}
		return exit.Refusef("%s:%d: the base's copy of %s publishes port %s on %s, but %s names no 127.0.0.1:%s or localhost:%s for the rewrite to move, so the base arm cannot be pointed at its own copy: name the address in %s, or have the contract generate a file with each arm's services (generate, docs/contract.md)",
			file, line, m.Service, m.Port, services.BaseHost, k.Config, m.Port, m.Port, k.Config)
	}
	return nil
}

// overrideLine is where an arm's override is set: its line in the
// override file, else in the legacy script it is derived from.
func overrideLine(k *contract.Contract, name string) (string, int) {
	files := []string{k.Overrides}
	if k.Legacy != nil {
		files = append(files, k.Legacy.Script)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(k.Tree, filepath.FromSlash(f)))
		if err != nil {
			continue
		}
		for i, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, name+"=") {
				return f, i + 1
			}
		}
	}
	return k.Overrides, 1
}

// compose diffs both trees' services as run would, without starting them.
func (c *checker) compose(ctx context.Context, arm string, head, bc *contract.Contract) *services.Plan {
	name := "compose plan (" + arm + ")"
	if len(head.Compose) == 0 && len(bc.Compose) == 0 {
		c.skip(name, "neither tree names compose files")
		return nil
	}
	project := "perfgate-check"
	p, err := services.Diff(ctx,
		services.Tree{Dir: head.Tree, Files: head.Compose, Seeds: head.Seeds, Project: project},
		services.Tree{Dir: bc.Tree, Files: bc.Compose, Seeds: bc.Seeds, Project: project})
	if err != nil {
		c.fail(name, err)
		return nil
	}
	var parts []string
	for _, g := range p.Groups {
		what := "shared"
		if g.Copied {
			what = "base copy on 127.0.0.2 (" + g.Why + ")"
		}
		parts = append(parts, strings.Join(g.Services, "+")+": "+what)
	}
	c.ok(name, "%d group(s): %s; %d port(s) moved", len(p.Groups), strings.Join(parts, "; "), len(p.Moved))
	return p
}

// plans reads the head's plan and its idle control's plan, naming their
// idle limits and the rate rule.
func (c *checker) plans(k *contract.Contract) {
	path := filepath.Join(k.Tree, k.Plan)
	p, err := plan.ParseFile(path)
	if err == nil {
		err = p.CheckAB(p.AB)
	}
	if err != nil {
		c.fail("plan", err)
		return
	}
	c.ok("plan", "%s: %d group(s), %d pair(s) at %g/s; %s", k.Plan, len(p.Groups), p.AB.Pairs, p.AB.Rate, idleLimits(p))
	c.rateRule(k.Plan, p)
	// The controls are the gate file's, read against this plan (the
	// contract refused a variant override outside its prefix already).
	ctls, err := k.ResolveControls(p)
	if err != nil {
		c.fail("controls", err)
		return
	}
	if v, ok := ctls.Of(plan.ControlVariant); ok {
		c.ok("variant control", "overrides %s, must fail counter %s", strings.Join(v.Overrides, " "), v.Counter)
	}
	ctl, ok := ctls.Of(plan.ControlIdle)
	if !ok {
		c.skip("control plan", "%s declares no [[control]] of kind idle", contract.GateFile)
		return
	}
	if err := ctl.Plan.CheckAB(ctl.Plan.AB); err != nil {
		c.fail("control plan", err)
		return
	}
	c.ok("control plan", "%s: %s", ctl.PlanFile, idleLimits(ctl.Plan))
}

func idleLimits(p *plan.Plan) string {
	if p.AB.Idle <= 0 {
		return "no idle phase"
	}
	return fmt.Sprintf("idle %s, CPU under %g %% of a core, store under %g tx/s", p.AB.Idle, p.AB.IdleCPU*100, p.AB.IdleTxPerSec)
}

// rateRule names each group with a max_rate and the rate it gets: the
// plan sends its groups in turn, so each gets the rate over the count
// (the parser refused a plan that reaches a limit).
func (c *checker) rateRule(file string, p *plan.Plan) {
	var parts []string
	for _, g := range p.Groups {
		if g.MaxRate > 0 {
			share := p.AB.Rate / float64(len(p.Groups))
			if p.Load.Order == "weight" {
				var sum float64
				for _, x := range p.Groups {
					sum += x.Weight
				}
				share = p.AB.Rate * g.Weight / sum
			}
			parts = append(parts, fmt.Sprintf("%s %.3g/s under %g/s", g.Name, share, g.MaxRate))
		}
	}
	if len(parts) == 0 {
		c.skip("rate rule", "%s sets no max_rate", file)
		return
	}
	c.ok("rate rule", "%s", strings.Join(parts, "; "))
}

// bases resolves the base for each event type on HEAD with prepare's own
// resolveBase (so a legacy tree counts as the head's [legacy] says), and
// returns the distinct commits they name.
func (c *checker) bases(ctx context.Context, repo, baseRef, tag string, head *contract.Contract) []string {
	if baseRef == "" {
		for _, ref := range []string{"main", "master", "origin/main", "origin/master"} {
			if _, err := gitOut(ctx, repo, "rev-parse", "--verify", "--quiet", ref+"^{commit}"); err == nil {
				baseRef = ref
				break
			}
		}
	}
	headSHA, err := gitOut(ctx, repo, "rev-parse", "HEAD")
	if err != nil {
		c.fail("base", exit.Refusef("%s: not a git repository with a HEAD (%v); run perfgate check in a checkout or give --repo", repo, err))
		return nil
	}
	before, _ := gitOut(ctx, repo, "rev-parse", "--verify", "--quiet", "HEAD~1")
	if tag == "" {
		tag, _ = gitOut(ctx, repo, "describe", "--tags", "--exact-match", "HEAD")
	}
	// A release before HEAD is what the manual and release lanes compare
	// with; a repository without one cannot exercise them.
	tags, _ := gitOut(ctx, repo, "tag", "--list", "v*", "--merged", "HEAD", "--no-contains", "HEAD")
	seen := map[string]bool{}
	var commits []string
	type ev struct {
		name string
		opts event.LocalOptions
	}
	list := []ev{
		{name: event.PullRequest, opts: event.LocalOptions{Head: headSHA, BaseRef: baseRef}},
		{name: event.MergeGroup, opts: event.LocalOptions{Head: headSHA, BaseRef: baseRef}},
		{name: event.Push, opts: event.LocalOptions{Head: headSHA, Before: before}},
		{name: event.WorkflowDispatch, opts: event.LocalOptions{Head: headSHA}},
		{name: event.Release, opts: event.LocalOptions{Head: headSHA, Tag: tag}},
	}
	for _, e := range list {
		name := "base for " + e.name
		switch {
		case (e.name == event.PullRequest || e.name == event.MergeGroup) && baseRef == "":
			c.skip(name, "no main or master branch; give --base-ref")
			continue
		case e.name == event.MergeGroup:
			// A merge group's base is its target branch's tip.
			sha, err := gitOut(ctx, repo, "rev-parse", baseRef+"^{commit}")
			if err != nil {
				c.fail(name, err)
				continue
			}
			e.opts = event.LocalOptions{Head: headSHA, BaseRef: baseRef, BaseSHA: sha}
		case e.name == event.Push && before == "":
			c.skip(name, "HEAD has no parent")
			continue
		case e.name == event.Release && tag == "":
			c.skip(name, "HEAD carries no tag; give --tag")
			continue
		case (e.name == event.WorkflowDispatch || e.name == event.Release) && tags == "":
			c.skip(name, "no release tag (v*) before HEAD")
			continue
		}
		evt, err := event.Local(e.name, e.opts)
		if err != nil {
			c.fail(name, err)
			continue
		}
		choice, err := resolveBase(ctx, repo, evt, head)
		if err != nil {
			c.fail(name, err)
			continue
		}
		c.ok(name, "%s", choice.Reason)
		if !seen[choice.Commit] && choice.Commit != headSHA {
			seen[choice.Commit] = true
			commits = append(commits, choice.Commit)
		}
	}
	return commits
}

func gitOut(ctx context.Context, repo string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", repo}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return "", errors.New("git " + strings.Join(args, " ") + ": " + msg)
	}
	return strings.TrimSpace(out.String()), nil
}
