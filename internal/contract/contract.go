// Package contract reads a tree's gate contract (perf/gate.toml and the files
// it names) and turns it into what one arm needs to build, check and start.
// Each arm reads its own tree's contract, so a key the change renames is read
// by the head alone and the base keeps the keys its binary knows.
package contract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/redact"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// GateFile is where a tree declares its contract, relative to the tree's root.
const GateFile = "perf/gate.toml"

// Defaults for keys a gate file may leave out.
const (
	DefaultOverrides = "perf/arm.env"
	DefaultPlan      = "perf/plan.toml"
)

// Contract is one tree's gate contract. Paths are relative to Tree.
type Contract struct {
	Tree      string              // absolute folder the contract was read from
	Build     string              // shell command (bash -c) that builds the arm in Tree
	Binary    string              // the built binary, relative to Tree
	Start     string              // argv (shell-word split) that starts the service
	Check     string              // argv that checks the rendered config, exits non-zero on refusal
	Config    string              // the service config rendered per arm
	ConfigEnv string              // variable that points the service at its rendered config; may be empty when Start names @CONFIG@
	Overrides string              // NAME=VALUE file, every NAME starting with Prefix
	Prefix    string              // the overrides' variable prefix, e.g. FERROFED__
	Env       map[string]string   // fixed environment of every arm
	Ready     string              // a path ("/health") or a loopback URL with @PORT@
	Compose   []string            // compose files that start the arm's services
	Seeds     map[string][]string // service -> files it is seeded from (compose cannot know them)
	Plan      string              // the load plan
	Legacy    *Legacy             // where overrides come from in a tree without the override file
	// Generate names the files perfgate writes into each arm's work
	// directory with the addresses of the arm's services (generate.go);
	// the config must read each as @DIR@/<name>.
	Generate []string
	// Prepare is the [prepare] step's commands (argv each), run before the
	// arms start (RunPrepare): FerroFED's gate mints its keys and tokens there.
	Prepare [][]string
	// Controls are the [[control]] tables (controls.go); an idle
	// control's plan is read by ResolveControls.
	Controls plan.Controls

	// BuildImage, when set, is the docker image the build runs in, with
	// the tree mounted at its own path (build.go); empty: on this machine.
	BuildImage string

	// Bin is the built binary's absolute path when it no longer sits in
	// the tree (LoadArm sets it); empty means Tree/Binary.
	Bin string

	// gate is the gate file's text (load); gateFromHead says it is the
	// head's, read over a legacy tree without one (legacytree.go).
	gate         []byte
	gateFromHead bool

	startArgv []string
	checkArgv []string
	lines     map[string]int // key ("env.X", "legacy.script") -> line in the gate file
}

// Legacy names a shell function whose output (or exported variables) gives
// the overrides of a tree that predates the override file.
type Legacy struct {
	Script   string   `toml:"script"`
	Function string   `toml:"function"`
	Args     []string `toml:"args"` // passed to the function; @PORT@ and @DIR@ are filled in
}

type gateTOML struct {
	Build     string              `toml:"build"`
	Binary    string              `toml:"binary"`
	Start     string              `toml:"start"`
	Check     string              `toml:"check"`
	Config    string              `toml:"config"`
	ConfigEnv string              `toml:"config_env"`
	Overrides string              `toml:"overrides"`
	Prefix    string              `toml:"prefix"`
	Ready     string              `toml:"ready"`
	Compose   []string            `toml:"compose"`
	Seeds     map[string][]string `toml:"seeds"`
	Plan      string              `toml:"plan"`
	Env       map[string]string   `toml:"env"`
	Legacy    *Legacy             `toml:"legacy"`
	Prepare   *prepareTOML        `toml:"prepare"`
	Generate  []string            `toml:"generate"`
	// Control is read by plan.ParseControls; decoding it here only marks
	// its keys as known.
	Control []map[string]any `toml:"control"`

	BuildImage string `toml:"build_image"`
}

// prepareTOML is the [prepare] table.
type prepareTOML struct {
	Commands []string `toml:"commands"`
}

var (
	envNameRe   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	placeholder = regexp.MustCompile(`@[A-Za-z_][A-Za-z0-9_]*@`)
	shellFuncRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_:.-]*$`)
)

// commandPlaceholders are what start and check may name.
var commandPlaceholders = map[string]bool{BinPlaceholder: true, PortPlaceholder: true, DirPlaceholder: true, ConfigPlaceholder: true}

// Load reads treeDir's gate file and checks that the files it names exist
// and that its override file is valid, so `perfgate prepare` refuses what
// would otherwise fail only once the services have started. Bad input is
// refused with exit 2 naming file and line.
func Load(treeDir string) (*Contract, error) { return load(treeDir, true) }

// loadKept reads a contract prepare kept beside an arm's build: it holds
// the gate file, config and overrides but not the compose files, which the
// services stage reads from the tree itself.
func loadKept(dir string) (*Contract, error) { return load(dir, false) }

func load(treeDir string, withCompose bool) (*Contract, error) {
	abs, err := filepath.Abs(treeDir)
	if err != nil {
		return nil, fmt.Errorf("reading the gate contract of %s: %w", treeDir, err)
	}
	data, err := os.ReadFile(filepath.Join(abs, filepath.FromSlash(GateFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, exit.Refusef("%s: not found in %s: add a gate file (see docs/contract.md)", GateFile, abs)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", GateFile, err)
	}
	c, err := parse(data)
	if err != nil {
		return nil, err
	}
	c.Tree, c.gate = abs, data
	if err := c.checkFiles(withCompose); err != nil {
		return nil, err
	}
	return c, nil
}

// parse reads a gate file's text; it touches no file system, so InCommit can
// use it on a blob.
func parse(data []byte) (*Contract, error) {
	var g gateTOML
	md, lines, err := decodeGate(data, &g)
	if err != nil {
		return nil, err
	}
	if und := md.Undecoded(); len(und) > 0 {
		// unknownKey (tomlpos.go) knows every table a gate file has; this
		// catches a key of a table added to gateTOML but not to it.
		sort.Slice(und, func(i, j int) bool { return lines[und[i].String()] < lines[und[j].String()] })
		k := und[0].String()
		return nil, exit.Refusef("%s:%d: %s; see docs/contract.md", GateFile, max(lines[k], 1), tomlpos.UnknownKey(k, "the gate file", gateKeys))
	}
	c := &Contract{
		Build: g.Build, Binary: g.Binary, Start: g.Start, Check: g.Check,
		Config: g.Config, ConfigEnv: g.ConfigEnv, Overrides: g.Overrides, Prefix: g.Prefix,
		Env: g.Env, Ready: g.Ready, Compose: g.Compose, Seeds: g.Seeds, Plan: g.Plan,
		Legacy: g.Legacy, BuildImage: g.BuildImage, Generate: g.Generate, lines: lines,
	}
	if c.Overrides == "" {
		c.Overrides = DefaultOverrides
	}
	if c.Plan == "" {
		c.Plan = DefaultPlan
	}
	if c.Env == nil {
		c.Env = map[string]string{}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	if err := c.prepareArgv(g.Prepare); err != nil {
		return nil, err
	}
	if err := c.validateGenerate(); err != nil {
		return nil, err
	}
	if err := c.parseControls(data); err != nil {
		return nil, err
	}
	return c, nil
}

// prepareArgv splits the [prepare] commands; only @DIR@ (the run's
// folder) is filled in.
func (c *Contract) prepareArgv(p *prepareTOML) error {
	if p == nil {
		return nil
	}
	if len(p.Commands) == 0 {
		return c.refuse("prepare", "[prepare] has no commands: write commands = [\"mint-keys @DIR@\"] or remove the table")
	}
	for i, cmd := range p.Commands {
		key := fmt.Sprintf("prepare.commands.%d", i)
		if _, ok := c.lines[key]; !ok {
			key = "prepare.commands"
		}
		argv, err := SplitWords(cmd)
		if err != nil {
			return c.refuse(key, "[prepare] command %q: %v", cmd, err)
		}
		if len(argv) == 0 {
			return c.refuse(key, "[prepare] command %d is empty: name the program to run", i+1)
		}
		for _, a := range argv {
			for _, ph := range placeholder.FindAllString(a, -1) {
				if ph != DirPlaceholder {
					return c.refuse(key, "[prepare] command %q uses the placeholder %s: only @DIR@ (the run's folder) is filled in", cmd, ph)
				}
			}
		}
		c.Prepare = append(c.Prepare, argv)
	}
	return nil
}

// RunPrepare runs the [prepare] commands in order in tree (the head's
// checkout), @DIR@ filled with dir (the run's folder, made first), before
// any arm starts. A command that fails stops the run with exit 2, naming
// it and quoting the end of its output.
func (c *Contract) RunPrepare(ctx context.Context, tree, dir string, log io.Writer) error {
	if len(c.Prepare) == 0 {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("preparing the run: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("preparing the run: making %s: %w", abs, err)
	}
	for i, argv := range c.Prepare {
		args := make([]string, len(argv))
		for k, a := range argv {
			args[k] = strings.ReplaceAll(a, DirPlaceholder, abs)
		}
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = tree
		out, err := cmd.CombinedOutput()
		if err != nil {
			return exit.Refusef("%s: [prepare] command %d (%s) failed: %v; its output ends: %s", GateFile, i+1, redact.URLsIn(strings.Join(argv, " ")), err, tailOf(out, 400))
		}
		if log != nil {
			fmt.Fprintf(log, "prepare: %s\n", strings.Join(argv, " "))
		}
	}
	return nil
}

// tailOf quotes the end of a command's output, without any URL's password.
func tailOf(b []byte, n int) string {
	s := strings.TrimSpace(redact.URLsIn(string(b)))
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return strings.ReplaceAll(s, "\n", " / ")
}

// refuse names key's line, or line 1 for a key the file does not write
// (a missing key is added at the top as well as anywhere).
func (c *Contract) refuse(key, format string, a ...any) error {
	return exit.Refusef("%s:%d: %s", GateFile, max(c.lines[key], 1), fmt.Sprintf(format, a...))
}

func (c *Contract) validate() error {
	for _, r := range []struct{ key, val, what string }{
		{"build", c.Build, `the command that builds the service, e.g. build = "go build -o bin/svc ./cmd/svc"`},
		{"binary", c.Binary, `the built binary relative to the tree, e.g. binary = "bin/svc"`},
		{"start", c.Start, `how to start it, e.g. start = "@BIN@ serve"`},
		{"check", c.Check, `the config check, e.g. check = "@BIN@ config check"`},
		{"config", c.Config, `the service config to render, e.g. config = "perf/service.toml"`},
		{"prefix", c.Prefix, `the overrides' variable prefix, e.g. prefix = "SVC__"`},
		{"ready", c.Ready, `the ready probe, e.g. ready = "/health"`},
	} {
		if strings.TrimSpace(r.val) == "" {
			return c.refuse(r.key, "%s is missing: add %s", r.key, r.what)
		}
	}
	paths := []struct{ key, val string }{{"binary", c.Binary}, {"config", c.Config}, {"overrides", c.Overrides}, {"plan", c.Plan}}
	for i := range c.Compose {
		paths = append(paths, struct{ key, val string }{"compose", c.Compose[i]})
	}
	for svc, files := range c.Seeds {
		for _, f := range files {
			paths = append(paths, struct{ key, val string }{"seeds." + svc, f})
		}
	}
	if c.Legacy != nil {
		paths = append(paths, struct{ key, val string }{"legacy.script", c.Legacy.Script})
	}
	for i, f := range c.Compose {
		// An empty entry names the tree's root, which exists: it would pass
		// the check that every compose file does and fail only at run.
		if strings.TrimSpace(f) == "" {
			return c.refuse(fmt.Sprintf("compose.%d", i), "compose names an empty path: name a compose file (e.g. \"compose.yaml\") or drop the entry")
		}
	}
	for _, p := range paths {
		if err := treePath(p.val); err != nil {
			return c.refuse(p.key, "%s = %q: %v", p.key, p.val, err)
		}
	}
	if !envNameRe.MatchString(c.Prefix) {
		return c.refuse("prefix", "prefix = %q is not the start of a variable name: use letters, digits and _ (e.g. SVC__)", c.Prefix)
	}
	if c.ConfigEnv != "" && !envNameRe.MatchString(c.ConfigEnv) {
		return c.refuse("config_env", "config_env = %q is not a variable name: use letters, digits and _", c.ConfigEnv)
	}
	if c.ConfigEnv != "" && strings.HasPrefix(c.ConfigEnv, c.Prefix) {
		return c.refuse("config_env", "config_env = %q starts with the overrides' prefix %q: name a variable outside it", c.ConfigEnv, c.Prefix)
	}
	var err error
	if c.startArgv, err = c.commandArgv("start", c.Start); err != nil {
		return err
	}
	if c.checkArgv, err = c.commandArgv("check", c.Check); err != nil {
		return err
	}
	if c.ConfigEnv == "" && !strings.Contains(c.Start, ConfigPlaceholder) {
		return c.refuse("start", "the service cannot find its rendered config: set config_env (e.g. config_env = \"SVC_CONFIG\") or name @CONFIG@ in start")
	}
	names := make([]string, 0, len(c.Env))
	for k := range c.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		key := "env." + k
		if !envNameRe.MatchString(k) {
			return c.refuse(key, "[env] %q is not a variable name: use letters, digits and _", k)
		}
		if k == c.ConfigEnv {
			return c.refuse(key, "[env] sets %s, which perfgate points at the rendered config itself: remove it", k)
		}
		if ph := badPlaceholder(c.Env[k], renderPlaceholders); ph != "" {
			return c.refuse(key, "[env] %s uses the placeholder %s: only @PORT@ and @DIR@ are filled in", k, ph)
		}
	}
	if err := c.validateReady(); err != nil {
		return err
	}
	if c.Legacy != nil {
		if c.Legacy.Script == "" || c.Legacy.Function == "" {
			return c.refuse("legacy", "[legacy] needs both script and function, e.g. script = \"scripts/perf/gate.sh\" and function = \"gateway_env\"")
		}
		if !shellFuncRe.MatchString(c.Legacy.Function) {
			return c.refuse("legacy.function", "function = %q is not a shell function name", c.Legacy.Function)
		}
		for _, a := range c.Legacy.Args {
			if ph := badPlaceholder(a, renderPlaceholders); ph != "" {
				return c.refuse("legacy.args", "args uses the placeholder %s: only @PORT@ and @DIR@ are filled in", ph)
			}
		}
	}
	return nil
}

func (c *Contract) commandArgv(key, s string) ([]string, error) {
	argv, err := SplitWords(s)
	if err != nil {
		return nil, c.refuse(key, "%s = %q: %v", key, s, err)
	}
	if len(argv) == 0 {
		return nil, c.refuse(key, "%s is empty: name the program to run", key)
	}
	for _, a := range argv {
		for _, ph := range placeholder.FindAllString(a, -1) {
			if !commandPlaceholders[ph] {
				return nil, c.refuse(key, "%s uses the placeholder %s: only @BIN@, @PORT@, @DIR@ and @CONFIG@ are filled in", key, ph)
			}
		}
	}
	return argv, nil
}

func (c *Contract) validateReady() error {
	// A path is probed on the arm's port as a URL is: only @PORT@ is
	// filled in either, and @DIR@ (a folder) has no place in a probe.
	if ph := badPlaceholder(c.Ready, map[string]bool{PortPlaceholder: true}); ph != "" {
		return c.refuse("ready", "ready uses the placeholder %s: only @PORT@ is filled in", ph)
	}
	if strings.HasPrefix(c.Ready, "/") {
		return nil
	}
	// The rule every loopback URL of perfgate's follows: http(s), on
	// loopback, no user name or password (it would be printed).
	if err := LoopbackURL(c.Ready, "http", "https"); err != nil {
		return c.refuse("ready", "ready = %q %v (or write a path such as \"/health\")", redact.URL(c.Ready, PortPlaceholder), err)
	}
	return nil
}

// treePath refuses a path that leaves the tree, so one arm never reads the
// other's files through its contract.
func treePath(p string) error {
	if p == "" {
		return nil
	}
	if filepath.IsAbs(p) || path.IsAbs(p) {
		return errors.New("is absolute: name a path relative to the tree's root")
	}
	if c := path.Clean(filepath.ToSlash(p)); c == ".." || strings.HasPrefix(c, "../") {
		return errors.New("leaves the tree: name a path inside it")
	}
	return nil
}

func (c *Contract) path(rel string) string {
	return filepath.Join(c.Tree, filepath.FromSlash(rel))
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// checkFiles refuses a contract whose files are missing from the tree
// (its compose files too, withCompose) or whose override file is invalid.
func (c *Contract) checkFiles(withCompose bool) error {
	if !exists(c.path(c.Config)) {
		return c.refuse("config", "config = %q: the tree has no such file: add it or fix the path", c.Config)
	}
	// What Render would refuse in the config is refused here too: at
	// prepare, and at run before the compose services start for nothing.
	raw, err := os.ReadFile(c.path(c.Config))
	if err != nil {
		return exit.Refusef("%s: cannot read the service config: %v", c.Config, err)
	}
	if _, err := renderConfig(c.Config, raw, strings.NewReplacer()); err != nil {
		return err
	}
	if err := c.checkReadsGenerated(raw); err != nil {
		return err
	}
	if withCompose {
		for i, f := range c.Compose {
			if !exists(c.path(f)) {
				return c.refuse(fmt.Sprintf("compose.%d", i), "compose names %s, which the tree does not have: add it or fix the path", f)
			}
		}
	}
	if exists(c.path(c.Overrides)) {
		// Refused now, not once the services have started.
		_, _, err := c.fileOverrides()
		return err
	}
	if c.Legacy == nil {
		return exit.Refusef("%s: the tree carries neither %s nor a legacy script whose function sets %s overrides: add %s (one %sNAME=VALUE a line)",
			GateFile, c.Overrides, c.Prefix, c.Overrides, c.Prefix)
	}
	if !exists(c.path(c.Legacy.Script)) {
		return exit.Refusef("%s:%d: the tree carries neither %s nor %s: add %s (one %sNAME=VALUE a line)",
			GateFile, c.lines["legacy.script"], c.Overrides, c.Legacy.Script, c.Overrides, c.Prefix)
	}
	return nil
}

// BinPath is the absolute path of the arm's built binary.
func (c *Contract) BinPath() string {
	if c.Bin != "" {
		return c.Bin
	}
	return c.path(c.Binary)
}
