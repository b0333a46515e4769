// Package demo builds the repository `perfgate demo` gates: the bundled
// example service with a gate contract, a history with a release tag, a
// base commit and a head commit, and (with a docker engine) a compose
// dependency that differs between the two. It also holds the two small
// programs the repository runs: the dependency (a settings server) and the
// service's start wrapper that reads its config and the dependency.
package demo

import (
	"context"
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

//go:embed files
var files embed.FS

// Options shape the repository.
type Options struct {
	// Binary is the perfgate binary both arms' builds copy: it carries the
	// example service (`perfgate demo-service`) and the dependency.
	Binary string
	// Regression gives the head commit the doubled sleep the gate must
	// catch; without it the head changes only its dependency's settings.
	Regression bool
	// Store names the store's connection string in the overrides.
	Store bool
	// Image is the dependency's image; "" leaves the compose plan out (no
	// docker engine) and the service runs on its built-in settings.
	Image string
	// DependencyPort is the loopback port the dependency publishes on; the
	// base's copy publishes the same port on 127.0.0.2.
	DependencyPort int
}

// Repo is the built repository.
type Repo struct {
	Dir        string
	Tag        string // the release tag on the base commit
	Base, Head string // commits
	BaseBranch string // the branch a pull request would merge into
}

// Build writes the repository into dir (which must not exist or be empty).
func Build(ctx context.Context, dir string, o Options) (*Repo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("demo: making the repository folder: %w", err)
	}
	r := &Repo{Dir: dir, Tag: "v1.0.0", BaseBranch: "main"}
	g := gitRunner{dir: dir}
	if err := g.run(ctx, "init", "-q", "-b", "main"); err != nil {
		return nil, err
	}
	// The release before the gate: the service alone, no contract.
	if err := writeTree(dir, map[string]string{"README.md": readme}); err != nil {
		return nil, err
	}
	if err := g.commit(ctx, "the example service, before its performance gate"); err != nil {
		return nil, err
	}
	if err := g.run(ctx, "tag", "v0.9.0"); err != nil {
		return nil, err
	}
	baseFiles, err := treeFiles(o, false)
	if err != nil {
		return nil, err
	}
	if err := writeTree(dir, baseFiles); err != nil {
		return nil, err
	}
	if err := g.commit(ctx, "perf: the gate contract (perf/gate.toml, service config, arm.env, plan, compose dependency)"); err != nil {
		return nil, err
	}
	if err := g.run(ctx, "tag", r.Tag); err != nil {
		return nil, err
	}
	if r.Base, err = g.out(ctx, "rev-parse", "HEAD"); err != nil {
		return nil, err
	}
	if err := g.run(ctx, "checkout", "-q", "-b", "change"); err != nil {
		return nil, err
	}
	headFiles, err := treeFiles(o, true)
	if err != nil {
		return nil, err
	}
	if err := writeTree(dir, headFiles); err != nil {
		return nil, err
	}
	msg := "settings v2: the dependency gives the service a larger scratch buffer"
	if o.Regression {
		msg += "; handlers sleep 4 ms where they slept 2 ms (the regression)"
	}
	if err := g.commit(ctx, msg); err != nil {
		return nil, err
	}
	if r.Head, err = g.out(ctx, "rev-parse", "HEAD"); err != nil {
		return nil, err
	}
	return r, nil
}

// treeFiles is one commit's gate contract; head is the change's.
func treeFiles(o Options, head bool) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range []string{"plan.toml", "busy-loop.toml", "ids.txt", "settings.txt"} {
		b, err := files.ReadFile("files/" + name)
		if err != nil {
			return nil, err
		}
		out["perf/"+name] = string(b)
	}
	if o.Store {
		// The store-write check needs the store (the idle control too,
		// which the gate file adds below).
		b, err := files.ReadFile("files/store.toml")
		if err != nil {
			return nil, err
		}
		out["perf/plan.toml"] += string(b)
	}
	if head {
		// A difference in the dependency's mounted file, with no effect on
		// the service: enough for the services stage to give the base its
		// own copy on 127.0.0.2.
		out["perf/settings.txt"] = strings.Replace(out["perf/settings.txt"], "alloc=4096", "# v2: a larger scratch buffer, still garbage after each request\nalloc=8192", 1)
	}
	gateFile := fmt.Sprintf(`# The example service's gate contract (docs/contract.md).
# Both arms' builds copy the perfgate binary, which carries the service.
build = "mkdir -p bin && cp %s bin/perfgate"
binary = "bin/perfgate"
start = "@BIN@ demo-service --config @CONFIG@ --addr 127.0.0.1:@PORT@"
check = "@BIN@ demo-service --config @CONFIG@ --check"
config = "perf/service.toml"
prefix = "EXAMPLED_"
ready = "/healthz"
plan = "perf/plan.toml"
# Written into each arm's folder: the services that arm runs over, with
# the addresses it reaches them at (the base's own copies on 127.0.0.2).
generate = ["registry.toml"]
`, shellQuote(o.Binary))
	service := "# The example service's perf config, rendered per arm.\nname = \"example\"\n# The services this arm runs over, as perfgate wrote them for it.\nregistry = \"@DIR@/registry.toml\"\n"
	if o.Image != "" {
		gateFile += "compose = [\"compose.yaml\"]\n"
		service += fmt.Sprintf("# The dependency this arm reads its settings from at start; the base's\n# copy of it is moved to 127.0.0.2.\nsettings_url = \"http://127.0.0.1:%d/settings\"\n", o.DependencyPort)
		out["compose.yaml"] = fmt.Sprintf(`# The service's dependency: a settings server (the perfgate binary in a
# FROM scratch image) seeded from perf/settings.txt.
services:
  settings:
    image: %s
    command: ["demo-dependency", "--addr", "0.0.0.0:8080", "--settings", "/seed/settings.txt"]
    volumes:
      - ./perf/settings.txt:/seed/settings.txt:ro
    ports:
      - "127.0.0.1:%d:8080"
`, o.Image, o.DependencyPort)
	}
	// The controls prove on every run that the gate can still fail
	// (docs/controls.md); they live in the gate file, naming the plan's
	// counter and the idle control's plan from the tree's root.
	gateFile += `
# The counter still catches an uncached lane: the head without its cache,
# started as a third arm beside it, must fail it.
[[control]]
kind = "variant"
overrides = ["EXAMPLED_TOKEN_CACHE=false"]
counter = "exchanges"
`
	if o.Store {
		// The idle control plants its poller on the head's store.
		gateFile += `
# The gate still catches a busy loop: a store poller that never waits,
# beside perf/busy-loop.toml's idle phase, must fail the idle limits.
[[control]]
kind = "idle"
plan = "perf/busy-loop.toml"
`
	}
	out["perf/gate.toml"] = gateFile
	out["perf/service.toml"] = service
	env := "# The arm's overrides: the example service's knobs (docs/example-service.md).\nEXAMPLED_CPU_WORK=200\n"
	latency := "2ms"
	if head && o.Regression {
		latency = "4ms"
	}
	env += "EXAMPLED_LATENCY=" + latency + "\n"
	if o.Store {
		env += "EXAMPLED_STORE_FILE=@DIR@/store.dsn\n"
	}
	out["perf/arm.env"] = env
	return out, nil
}

const readme = "# example service\n\nThe bundled example service of perfgate, gated on performance (perf/).\n"

func writeTree(dir string, fs map[string]string) error {
	for name, body := range fs {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("demo: writing %s: %w", name, err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return fmt.Errorf("demo: writing %s: %w", name, err)
		}
	}
	return nil
}

// shellQuote quotes a path for bash -c.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// gitRunner runs the git CLI with no user or system config and a fixed
// identity and clock, so the demo's commits never depend on the machine.
type gitRunner struct {
	dir  string
	tick int
}

func (g *gitRunner) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	date := strconv.Itoa(1767225600+g.tick*3600) + " +0000"
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=perfgate demo", "GIT_AUTHOR_EMAIL=demo@perfgate.invalid",
		"GIT_COMMITTER_NAME=perfgate demo", "GIT_COMMITTER_EMAIL=demo@perfgate.invalid",
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date, "LC_ALL=C")
}

func (g *gitRunner) out(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = g.dir
	cmd.Env = g.env()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("demo: git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(b)), nil
}

func (g *gitRunner) run(ctx context.Context, args ...string) error {
	_, err := g.out(ctx, args...)
	return err
}

func (g *gitRunner) commit(ctx context.Context, msg string) error {
	g.tick++
	if err := g.run(ctx, "add", "-A"); err != nil {
		return err
	}
	return g.run(ctx, "commit", "-q", "-m", msg)
}
