package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/demo"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/host"
	"github.com/perfgate/perfgate/internal/plan"
)

func init() {
	register(Command{Name: "demo", Summary: "the whole gate over a repository it builds around the bundled example service; the head carries a regression", Run: runDemo})
	register(Command{Name: "demo-service", Summary: "the demo repository's service: the example service over its perf config and its dependency's settings", Hidden: true, Run: runDemoService})
	register(Command{Name: "demo-dependency", Summary: "the demo repository's compose dependency: a settings server", Hidden: true, Run: runDemoDependency})
}

// The demo's short profile: under two minutes on a 2-core machine with
// every stage, enough for four pairs to agree on the head's doubled sleep.
// --full runs the seed's profile (60 s idle, 4 x (10 s + 60 s) at 20/s).
var demoProfile = plan.AB{Pairs: 4, Warmup: 2 * time.Second, Measure: 8 * time.Second, Rate: 10, Idle: 5 * time.Second}

// runDemo is the whole pipeline over a repository it builds: the event's
// base, both arms built from their own trees (`perfgate prepare`), the
// compose plan with the base's own copy of the dependency on 127.0.0.2,
// the store, the base's config check, idle, the pairs, counters and
// controls, and the verdict (`perfgate run`).
func runDemo(ctx context.Context, s *IO, args []string) (err error) {
	fs := newFlags("demo", s)
	noRegression := fs.Bool("no-regression", false, "the head commit carries no regression: the gate passes")
	full := fs.Bool("full", false, "the seed's full profile (about 6 minutes) instead of the short one")
	out := fs.String("out", "target/perf-demo", "folder for the report, the summary and the logs; the repository and the built arms live in it while the demo runs")
	noStore := fs.Bool("no-store", false, "run without the PostgreSQL store even when its binaries are installed")
	noDocker := fs.Bool("no-docker", false, "run without the compose dependency even when a docker engine answers")
	// The same profile flags as run and ab, applied over the short profile
	// (or --full's): a quicker demo, as its own tests run it.
	var prof profileFlags
	prof.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// A bad value is refused now, not after the image, the repository and
	// both builds.
	if err := prof.apply(&plan.AB{}); err != nil {
		return exit.Refuse(fmt.Errorf("demo: %w", err))
	}
	start := time.Now()
	stage := func(name, format string, a ...any) {
		fmt.Fprintf(s.Err, "demo [%5.1fs] %s: %s\n", time.Since(start).Seconds(), name, fmt.Sprintf(format, a...))
	}
	// Runs last, after every teardown: the wall time is the whole demo's.
	defer func() {
		stage("done", "wall time %s (exit %d)", time.Since(start).Round(100*time.Millisecond), exit.Code(err))
	}()
	self, err := os.Executable()
	if err != nil {
		return exit.Refusef("demo: finding perfgate's own binary, which the demo's arms run: %w", err)
	}
	outAbs, err := filepath.Abs(*out)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	// The repository's path stays the same from demo to demo in one output
	// folder: a demo killed before its teardown left compose projects
	// labelled with it, and the next demo's run removes them.
	repoDir := filepath.Join(outAbs, "repo")
	target := filepath.Join(outAbs, "arms")
	for _, d := range []string{repoDir, target} {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("demo: clearing the earlier demo's %s: %w", d, err)
		}
	}
	defer func() {
		err = errors.Join(err, os.RemoveAll(repoDir), os.RemoveAll(target))
	}()

	withStore := !*noStore && havePostgres()
	if !withStore {
		stage("store", "none (no PostgreSQL binaries found, or --no-store): no transactions per request, no store-write check, no idle control")
	}
	o := demo.Options{Binary: self, Regression: !*noRegression, Store: withStore}
	why := "--no-docker"
	if !*noDocker {
		why = demo.DockerReady(ctx)
	}
	if why != "" {
		stage("dependency", "none: %s; the same pipeline runs without the compose dependency", why)
	} else {
		ports, perr := host.FreePorts(1)
		if perr != nil {
			return perr
		}
		o.DependencyPort = ports[0]
		// A demo killed before its teardown left its image.
		stale, serr := demo.RemoveStaleImages(ctx, gate.OwnerGone)
		for _, tag := range stale {
			stage("dependency", "removed %s, left by a demo whose process is gone", tag)
		}
		if serr != nil {
			return serr
		}
		tag, remove, berr := demo.BuildImage(ctx, self, gate.Owner())
		if berr != nil {
			return berr
		}
		// Not in the block's own err: the demo's error must carry it.
		defer func() { err = errors.Join(err, remove()) }()
		o.Image = tag
		stage("dependency", "image %s built FROM scratch around this perfgate binary (a settings server)", tag)
	}
	repo, err := demo.Build(ctx, repoDir, o)
	if err != nil {
		return err
	}
	stage("repository", "%s: %s (%s, the base), then %s on branch change (the head: %s)", repoDir, event.ShortSHA(repo.Base), repo.Tag, event.ShortSHA(repo.Head),
		map[bool]string{true: "its handlers sleep 4 ms where the base's sleep 2 ms; expect a regression, exit 1", false: "only its dependency's settings changed; expect a pass"}[o.Regression])

	stage("prepare", "the base is the previous release; each arm built from its own tree")
	if err := runPrepare(ctx, s, []string{"--event", "workflow_dispatch", "--repo", repoDir, "--out", target}); err != nil {
		return err
	}
	pairs := demoProfile.Pairs
	if prof.pairs > 0 {
		pairs = prof.pairs
	}
	stage("run", "services, store, the base's config check, idle, %d pairs, counters and controls, verdict", pairs)
	pr := gate.Prepared{
		Target: target, Repo: repoDir, Out: outAbs, Store: withStore, Seed: 1, Log: s.Err,
		// The demo's repository is not the job's checkout: a GITHUB_SHA
		// would name another commit as the head.
		Getenv: func(k string) string {
			if strings.HasPrefix(k, "GITHUB_") {
				return ""
			}
			return s.Env(k)
		},
		Reshape: func(ab *plan.AB) error {
			if !*full {
				ab.Pairs, ab.Warmup, ab.Measure, ab.Rate, ab.Idle =
					demoProfile.Pairs, demoProfile.Warmup, demoProfile.Measure, demoProfile.Rate, demoProfile.Idle
			}
			return prof.apply(ab)
		},
	}
	if s.IsTerminal {
		pr.Progress = s.Err
	}
	rep, err := pr.Run(ctx)
	if err != nil {
		return err
	}
	if o.Image != "" {
		for _, arm := range []string{"base", "head"} {
			stage("dependency", "the %s read its settings from %s", arm, demo.SettingsRead(filepath.Join(outAbs, arm+".log")))
		}
	}
	return printVerdict(s, rep, outAbs)
}

// runDemoService starts the example service over the demo repository's
// perf config: the settings its dependency serves become flags, the
// overrides (EXAMPLED_ variables) the rest. --check only reads the config,
// as the gate's config check runs it.
func runDemoService(ctx context.Context, s *IO, args []string) error {
	var config string
	check := false
	var rest []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--check":
			check = true
		case args[i] == "--config" && i+1 < len(args):
			config = args[i+1]
			i++
		default:
			rest = append(rest, args[i])
		}
	}
	if config == "" {
		return exit.Refusef("demo-service: give --config FILE (the rendered perf/service.toml)")
	}
	c, err := demo.ReadConfig(config)
	if err != nil {
		return exit.Refuse(err)
	}
	if check {
		fmt.Fprintf(s.Out, "demo-service: %s is fine\n", config)
		return nil
	}
	reg, err := demo.ReadRegistry(c)
	if err != nil {
		return exit.Refuse(err)
	}
	for name, svc := range reg.Services {
		fmt.Fprintf(s.Err, "demo-service: the registry names %s at %s\n", name, svc.Address)
	}
	settings, err := demo.ServiceArgs(ctx, c, 30*time.Second)
	if err != nil {
		return exit.Refuse(err)
	}
	if len(settings) > 0 {
		fmt.Fprintf(s.Err, "%s%s: %s\n", demo.SettingsLine, c.SettingsURL, strings.Join(settings, " "))
	}
	// The command line's flags come last, so they win over the settings.
	return runExampleService(ctx, s, append(settings, rest...))
}

func runDemoDependency(ctx context.Context, s *IO, args []string) error {
	return demo.ServeDependency(ctx, args, s.Err)
}

// havePostgres reports whether initdb can be found, where Debian puts it too.
func havePostgres() bool {
	if _, err := exec.LookPath("initdb"); err == nil {
		return true
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	return len(m) > 0
}
