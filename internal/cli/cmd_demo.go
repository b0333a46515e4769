package cli

import (
	"context"
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/report"
)

// The demo's plan and its catalogue of item ids, written out next to the
// run's report so the plan reads like any other.
//
//go:embed demo/plan.toml demo/ids.txt
var demoFiles embed.FS

func init() {
	register(Command{Name: "demo", Summary: "a local A/B gate over the bundled example service; the head carries a regression", Run: runDemo})
}

// The demo's short profile: about a minute on a 2-core machine, enough for
// four pairs to agree on the head's doubled sleep. --full runs the seed's
// profile (60 s idle, 4 x (10 s + 60 s) at 20/s).
var demoProfile = plan.AB{Pairs: 4, Warmup: 2 * time.Second, Measure: 8 * time.Second, Rate: 50, Idle: 5 * time.Second}

func runDemo(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("demo", s)
	noRegression := fs.Bool("no-regression", false, "run the head without its regression: the gate passes")
	full := fs.Bool("full", false, "the seed's full profile (about 6 minutes) instead of the one-minute one")
	out := fs.String("out", "target/perf-demo", "folder for the report, the summary and the arms' logs")
	noStore := fs.Bool("no-store", false, "run without the PostgreSQL store even when its binaries are installed")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	planPath, err := writeDemoPlan(filepath.Join(*out, "plan"))
	if err != nil {
		return err
	}
	p, err := plan.ParseFile(planPath)
	if err != nil {
		return err
	}
	if !*full {
		p.AB.Pairs, p.AB.Warmup, p.AB.Measure, p.AB.Rate, p.AB.Idle =
			demoProfile.Pairs, demoProfile.Warmup, demoProfile.Measure, demoProfile.Rate, demoProfile.Idle
	}
	if err := p.CheckAB(p.AB); err != nil {
		return err
	}
	vars, err := plan.ResolveVars(p, nil, s.Env)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return exit.Refusef("demo: finding perfgate's own binary to start the example service: %w", err)
	}
	withStore := !*noStore && havePostgres()
	arm := func(name, latency string) gate.ArmSpec {
		cmd := []string{self, "example-service", "--addr", "127.0.0.1:@PORT@", "--latency", latency, "--cpu-work", "200"}
		if withStore {
			cmd = append(cmd, "--store-file", "@DIR@/store.dsn")
		}
		return gate.ArmSpec{Command: cmd, Ready: "/healthz",
			Info: report.Arm{Name: name, Ref: "example service, --latency " + latency}}
	}
	headLatency := "4ms" // twice the base's 2 ms sleep: a regression the gate must catch
	if *noRegression {
		headLatency = "2ms"
	}
	o := gate.Options{
		Plan: p, Vars: vars, OutDir: *out, Seed: 1, Log: s.Err, Store: withStore,
		Base: arm("base", "2ms"), Head: arm("head", headLatency),
	}
	if s.IsTerminal {
		o.Progress = s.Err
	}
	fmt.Fprintf(s.Err, "demo: base and head are the bundled example service; the head %s\n",
		map[bool]string{true: "is the same build (expect a pass)", false: "sleeps 4 ms per request where the base sleeps 2 ms (expect a regression, exit 1)"}[*noRegression])
	if !withStore {
		fmt.Fprintln(s.Err, "demo: running without a store (no PostgreSQL binaries found, or --no-store): transactions per request are not measured")
	}
	return gateAndReport(ctx, s, o)
}

// havePostgres reports whether initdb can be found, where Debian puts it too.
func havePostgres() bool {
	if _, err := exec.LookPath("initdb"); err == nil {
		return true
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	return len(m) > 0
}

func writeDemoPlan(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("demo: writing its plan: %w", err)
	}
	for _, name := range []string{"plan.toml", "ids.txt"} {
		b, err := demoFiles.ReadFile("demo/" + name)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", fmt.Errorf("demo: writing its plan: %w", err)
		}
	}
	return filepath.Join(dir, "plan.toml"), nil
}
