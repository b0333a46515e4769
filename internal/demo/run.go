package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/host"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/report"
)

// Profile is the demo's short profile: under two minutes on a 2-core
// machine with every stage, enough for four pairs to agree on the head's
// doubled sleep. Full runs FerroFED's gate's profile (60 s idle,
// 4 x (10 s + 60 s) at 20/s).
var Profile = plan.AB{Pairs: 4, Warmup: 2 * time.Second, Measure: 8 * time.Second, Rate: 10, Idle: 5 * time.Second}

// RunOptions are perfgate demo's inputs.
type RunOptions struct {
	NoRegression bool   // the head carries no regression: the gate passes
	Full         bool   // the plan's own profile instead of Profile
	Out          string // report, summary, logs; the repository and the arms live in it while the demo runs
	NoStore      bool   // no PostgreSQL even when its binaries are installed
	NoDocker     bool   // no compose dependency even when a docker engine answers
	// Reshape applies the command line's profile flags over Profile (or
	// the plan's, under Full); the run line names what it sets, so it
	// must change nothing but ab.
	Reshape func(*plan.AB) error
	Getenv  func(string) string
	// Out receives what perfgate prepare prints; Log the stage lines and
	// the arms' builds; Progress, when set, the terminal progress lines.
	Stdout, Log, Progress io.Writer
	// Verdict prints the run's report (out is the folder holding it); its
	// error is the demo's, so the last stage line names the verdict's exit.
	Verdict func(rep *report.Report, out string) error
}

// Run is the whole pipeline over a repository it builds: the event's base,
// both arms built from their own trees (gate.Prepare), the compose plan
// with the base's own copy of the dependency on 127.0.0.2, the store, the
// base's config check, idle, the pairs, counters and controls, and the
// verdict (gate.Prepared), handed to o.Verdict.
func Run(ctx context.Context, o RunOptions) (err error) {
	start := time.Now()
	stage := func(name, format string, a ...any) {
		fmt.Fprintf(o.Log, "demo [%5.1fs] %s: %s\n", time.Since(start).Seconds(), name, fmt.Sprintf(format, a...))
	}
	// Runs last, after every teardown: the wall time is the whole demo's.
	defer func() {
		stage("done", "wall time %s (exit %d)", time.Since(start).Round(100*time.Millisecond), exit.Code(err))
	}()
	self, err := os.Executable()
	if err != nil {
		return exit.Refusef("demo: finding perfgate's own binary, which the demo's arms run: %w", err)
	}
	outAbs, err := filepath.Abs(o.Out)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	// The repository's path stays the same from demo to demo in one output
	// folder: a demo killed before its teardown left compose projects
	// labelled with it, and the next demo's run removes them.
	repoDir := filepath.Join(outAbs, "repo")
	target := filepath.Join(outAbs, "arms")
	for _, d := range []string{repoDir, target} {
		if err := removeSettled(d, 10*time.Second); err != nil {
			return fmt.Errorf("demo: clearing the earlier demo's %s: %w", d, err)
		}
	}
	defer func() {
		err = errors.Join(err, os.RemoveAll(repoDir), os.RemoveAll(target))
	}()

	withStore := !o.NoStore && HavePostgres()
	if !withStore {
		stage("store", "none (no PostgreSQL binaries found, or --no-store): no transactions per request, no store-write check, no idle control")
	}
	bo := Options{Binary: self, Regression: !o.NoRegression, Store: withStore}
	remove, err := dependency(ctx, o, self, &bo, stage)
	if err != nil {
		return err
	}
	// Not in the dependency's own err: the demo's error must carry it.
	defer func() {
		removing := time.Now()
		err = errors.Join(err, remove())
		stage("teardown", "the dependency's image removed in %s", time.Since(removing).Round(time.Millisecond))
	}()
	repo, err := Build(ctx, repoDir, bo)
	if err != nil {
		return err
	}
	stage("repository", "%s: %s (%s, the base), then %s on branch change (the head: %s)", repoDir, event.ShortSHA(repo.Base), repo.Tag, event.ShortSHA(repo.Head),
		map[bool]string{true: "its handlers sleep 4 ms where the base's sleep 2 ms; expect a regression, exit 1", false: "only its dependency's settings changed; expect a pass"}[bo.Regression])

	stage("prepare", "the base is the previous release; each arm built from its own tree")
	if err := prepare(ctx, repoDir, target, o); err != nil {
		return err
	}
	stage("run", "services, store, the base's config check, %s, counters and controls, verdict", o.phases())
	pr := gate.Prepared{
		Target: target, Repo: repoDir, Out: outAbs, Store: withStore, Seed: 1, Log: o.Log, Progress: o.Progress,
		// The demo's repository is not the job's checkout: a GITHUB_SHA
		// would name another commit as the head.
		Getenv: func(k string) string {
			if strings.HasPrefix(k, "GITHUB_") || o.Getenv == nil {
				return ""
			}
			return o.Getenv(k)
		},
		Reshape: func(ab *plan.AB) error {
			if !o.Full {
				ab.Pairs, ab.Warmup, ab.Measure, ab.Rate, ab.Idle =
					Profile.Pairs, Profile.Warmup, Profile.Measure, Profile.Rate, Profile.Idle
			}
			if o.Reshape == nil {
				return nil
			}
			return o.Reshape(ab)
		},
	}
	rep, err := pr.Run(ctx)
	if err != nil {
		return err
	}
	if bo.Image != "" {
		for _, arm := range []string{"base", "head"} {
			stage("dependency", "the %s read its settings from %s", arm, SettingsRead(filepath.Join(outAbs, arm+".log")))
		}
	}
	return o.Verdict(rep, outAbs)
}

// phases names the idle phase and the pairs the run line announces: the
// profile's with the command line's flags over it, as Reshape will set
// them (under Full, the plan's, which only the run reads).
func (o RunOptions) phases() string {
	if o.Full {
		return "the plan's idle phase and pairs"
	}
	ab := Profile
	if o.Reshape != nil && o.Reshape(&ab) != nil {
		// A refused flag is the run's to report, with its file and line.
		return "the pairs"
	}
	if ab.Idle <= 0 {
		return fmt.Sprintf("%d pairs (no idle phase)", ab.Pairs)
	}
	return fmt.Sprintf("idle, %d pairs", ab.Pairs)
}

// dependency builds the compose dependency's image when a docker engine
// answers (bo.Image, bo.DependencyPort); remove takes the image away.
func dependency(ctx context.Context, o RunOptions, self string, bo *Options, stage func(string, string, ...any)) (remove func() error, err error) {
	none := func() error { return nil }
	why := "--no-docker"
	if !o.NoDocker {
		why = DockerReady(ctx)
	}
	if why != "" {
		stage("dependency", "none: %s; the same pipeline runs without the compose dependency", why)
		return none, nil
	}
	ports, err := host.FreePorts(1)
	if err != nil {
		return none, err
	}
	bo.DependencyPort = ports[0]
	// A demo killed before its teardown left its image.
	stale, err := RemoveStaleImages(ctx, gate.OwnerGone)
	for _, tag := range stale {
		stage("dependency", "removed %s, left by a demo whose process is gone", tag)
	}
	if err != nil {
		return none, err
	}
	tag, remove, err := BuildImage(ctx, self, gate.Owner())
	if err != nil {
		return none, err
	}
	bo.Image = tag
	stage("dependency", "image %s built FROM scratch around this perfgate binary (a settings server)", tag)
	return remove, nil
}

// prepare is `perfgate prepare --event workflow_dispatch` over the demo's
// repository: the base is its previous release.
func prepare(ctx context.Context, repoDir, target string, o RunOptions) error {
	ev, err := event.Local(event.WorkflowDispatch, event.LocalOptions{})
	if err != nil {
		return err
	}
	choice, err := gate.Prepare(ctx, gate.PrepareOptions{Repo: repoDir, Out: target, Event: ev, Log: o.Log})
	if choice != nil {
		fmt.Fprintln(o.Stdout, choice.Reason)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Stdout, "base arm: %s\nhead arm: %s\n", filepath.Join(target, contract.BaseArm), filepath.Join(target, contract.HeadArm))
	return nil
}

// HavePostgres reports whether initdb can be found, where Debian puts it too.
func HavePostgres() bool {
	if _, err := exec.LookPath("initdb"); err == nil {
		return true
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	return len(m) > 0
}

// removeSettled removes dir like os.RemoveAll, trying again for up to
// limit while something still writes into it: a demo killed while it
// built its repository leaves that git command running for a moment,
// and the next demo's os.RemoveAll failed with "directory not empty" as
// the command wrote a file into a folder just emptied.
func removeSettled(dir string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		err := os.RemoveAll(dir)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
