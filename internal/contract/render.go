package contract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
)

// RenderOptions is what differs between the two arms of one run.
type RenderOptions struct {
	Port int    // the arm's port
	Dir  string // the arm's work directory; the rendered config is written here
	// Rewrite changes the rendered config after the placeholders are filled
	// (the base arm: its services' addresses moved to 127.0.0.2); nil = none.
	Rewrite func([]byte) []byte
	// Cwd is where the arm's check and start run (absolute after Render):
	// the checkout for both arms, as FerroFED's gate starts both from it,
	// so a relative path in either config reads the head's tree. Empty:
	// the arm's work directory.
	Cwd string
	// Services is what the arm's generated files list (generate.go):
	// service -> the addresses this arm reaches it at.
	Services map[string][]string
	// Extra are overrides laid over the arm's own (NAME=VALUE, @PORT@ and
	// @DIR@ filled in like theirs): the variant control's, which make the
	// variant arm the head with a difference. One of a name the arm's
	// overrides set replaces it.
	Extra []string
}

// Rendered is one arm ready to check and start.
type Rendered struct {
	ConfigPath string   // the rendered config, absolute
	Env        []string // KEY=VALUE: fixed env, then overrides, then ConfigEnv; add to Environ's base
	Command    []string // argv that starts the service
	Check      []string // argv that checks the rendered config
	Ready      string   // the probe URL
	Dir        string   // the arm's work directory, absolute
	Cwd        string   // where the check and the start run, absolute
}

// Render fills the tree's service config and overrides for one arm: @PORT@
// becomes o.Port and @DIR@ o.Dir. The overrides come from the override file,
// or, in a tree without it, from the legacy function. Anything else refused
// is exit 2 naming file and line.
func (c *Contract) Render(ctx context.Context, o RenderOptions) (*Rendered, error) {
	if o.Port <= 0 || o.Port > 65535 {
		return nil, fmt.Errorf("rendering %s: port %d is not a TCP port", c.Config, o.Port)
	}
	if o.Dir == "" {
		return nil, fmt.Errorf("rendering %s: no work directory given", c.Config)
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", c.Config, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("rendering %s: making the arm's work directory: %w", c.Config, err)
	}
	port := strconv.Itoa(o.Port)
	fill := strings.NewReplacer(PortPlaceholder, port, DirPlaceholder, dir)

	raw, err := os.ReadFile(c.path(c.Config))
	if err != nil {
		return nil, exit.Refusef("%s: cannot read the service config: %v", c.Config, err)
	}
	if err := c.checkReadsGenerated(raw); err != nil {
		return nil, err
	}
	if err := c.writeGenerated(dir, o.Services); err != nil {
		return nil, err
	}
	rendered, err := renderConfig(c.Config, raw, fill)
	if err != nil {
		return nil, err
	}
	if o.Rewrite != nil {
		rendered = o.Rewrite(rendered)
	}
	a := &Rendered{Dir: dir, Cwd: dir, ConfigPath: filepath.Join(dir, path.Base(filepath.ToSlash(c.Config)))}
	if o.Cwd != "" {
		if a.Cwd, err = filepath.Abs(o.Cwd); err != nil {
			return nil, fmt.Errorf("rendering %s: %w", c.Config, err)
		}
	}
	if err := os.WriteFile(a.ConfigPath, rendered, 0o600); err != nil {
		return nil, fmt.Errorf("writing the rendered %s: %w", c.Config, err)
	}

	overrides, src, err := c.overrides(ctx, fill)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(c.Env))
	for k := range c.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		a.Env = append(a.Env, k+"="+fill.Replace(c.Env[k]))
	}
	for _, kv := range overrides {
		name, _, _ := strings.Cut(kv, "=")
		if _, fixed := c.Env[name]; fixed {
			return nil, exit.Refusef("%s: sets %s, which [env] of %s:%d fixes for every arm: remove one of them", src(name), name, GateFile, c.lines["env."+name])
		}
		a.Env = append(a.Env, fill.Replace(kv))
	}
	for _, kv := range o.Extra {
		name, _, _ := strings.Cut(kv, "=")
		if _, fixed := c.Env[name]; fixed {
			return nil, exit.Refusef("%s: the variant's override sets %s, which [env] of %s:%d fixes for every arm: override another variable", GateFile, name, GateFile, c.lines["env."+name])
		}
		kv = fill.Replace(kv)
		replaced := false
		for i, have := range a.Env {
			if strings.HasPrefix(have, name+"=") {
				a.Env[i], replaced = kv, true
			}
		}
		if !replaced {
			a.Env = append(a.Env, kv)
		}
	}
	if c.ConfigEnv != "" {
		a.Env = append(a.Env, c.ConfigEnv+"="+a.ConfigPath)
	}

	argFill := strings.NewReplacer(PortPlaceholder, port, DirPlaceholder, dir, ConfigPlaceholder, a.ConfigPath, BinPlaceholder, c.BinPath())
	for _, w := range c.startArgv {
		a.Command = append(a.Command, argFill.Replace(w))
	}
	for _, w := range c.checkArgv {
		a.Check = append(a.Check, argFill.Replace(w))
	}
	a.Ready = strings.ReplaceAll(c.Ready, PortPlaceholder, port)
	if strings.HasPrefix(c.Ready, "/") {
		a.Ready = "http://127.0.0.1:" + port + a.Ready
	}
	return a, nil
}

// CheckOverrides derives the arm's overrides exactly as Render will for
// port and dir, and refuses what Render would refuse: an override file that
// sets nothing, a legacy function that sets nothing or fails, a variable
// that [env] fixes. A run calls it before any service starts, so such a
// tree is refused without a container started for nothing; the legacy
// function is then evaluated twice, which it must bear anyway (it only
// prints and assigns).
func (c *Contract) CheckOverrides(ctx context.Context, port int, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("checking the overrides of %s: %w", c.Tree, err)
	}
	fill := strings.NewReplacer(PortPlaceholder, strconv.Itoa(port), DirPlaceholder, abs)
	overrides, src, err := c.overrides(ctx, fill)
	if err != nil {
		return err
	}
	for _, kv := range overrides {
		name, _, _ := strings.Cut(kv, "=")
		if _, fixed := c.Env[name]; fixed {
			return exit.Refusef("%s: sets %s, which [env] of %s:%d fixes for every arm: remove one of them", src(name), name, GateFile, c.lines["env."+name])
		}
	}
	return nil
}

// renderConfig fills the placeholders line by line so a refusal names the line.
func renderConfig(file string, raw []byte, fill *strings.Replacer) ([]byte, error) {
	lines := bytes.SplitAfter(raw, []byte("\n"))
	var out bytes.Buffer
	out.Grow(len(raw))
	for i, l := range lines {
		if ph := badPlaceholder(string(l), renderPlaceholders); ph != "" {
			return nil, exit.Refusef("%s:%d: unknown placeholder %s: only @PORT@ (the arm's port) and @DIR@ (its work directory) are filled in", file, i+1, ph)
		}
		out.WriteString(fill.Replace(string(l)))
	}
	return out.Bytes(), nil
}

// overrides returns the arm's NAME=VALUE overrides, unfilled, and a function
// naming where a variable came from for refusals.
func (c *Contract) overrides(ctx context.Context, fill *strings.Replacer) ([]string, func(string) string, error) {
	kv, data, err := c.fileOverrides()
	if err == nil {
		return kv, func(name string) string { return fmt.Sprintf("%s:%d", c.Overrides, lineOf(data, name)) }, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	if c.Legacy == nil {
		return nil, nil, exit.Refusef("%s: the tree carries neither %s nor a legacy script whose function sets %s overrides: add %s (one %sNAME=VALUE a line)",
			GateFile, c.Overrides, c.Prefix, c.Overrides, c.Prefix)
	}
	l := *c.Legacy
	l.Args = make([]string, len(c.Legacy.Args))
	for i, a := range c.Legacy.Args {
		l.Args[i] = fill.Replace(a)
	}
	kv, err = Derive(ctx, c.Tree, l, c.Prefix)
	if err != nil {
		return nil, nil, err
	}
	return kv, func(string) string { return fmt.Sprintf("%s %s()", l.Script, l.Function) }, nil
}

// fileOverrides reads and checks the override file: its NAME=VALUE pairs
// and its text, or an error wrapping fs.ErrNotExist when the tree has none.
func (c *Contract) fileOverrides() ([]string, []byte, error) {
	data, err := os.ReadFile(c.path(c.Overrides))
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", c.Overrides, err)
	}
	kv, err := ParseOverrides(c.Overrides, data, c.Prefix)
	if err != nil {
		return nil, nil, err
	}
	if len(kv) == 0 {
		return nil, nil, exit.Refusef("%s: sets no %s variable: add one %sNAME=VALUE a line", c.Overrides, c.Prefix, c.Prefix)
	}
	for _, p := range kv {
		name, _, _ := strings.Cut(p, "=")
		if _, fixed := c.Env[name]; fixed {
			return nil, nil, exit.Refusef("%s:%d: sets %s, which [env] of %s:%d fixes for every arm: remove one of them", c.Overrides, lineOf(data, name), name, GateFile, c.lines["env."+name])
		}
	}
	return kv, data, nil
}

func lineOf(data []byte, name string) int {
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), name+"=") {
			return i + 1
		}
	}
	return 0
}

// Environ is the environment an arm's process runs with: base (usually
// os.Environ()) without any variable of the prefix or ConfigEnv, so nothing
// the CI job exported leaks into an arm, followed by the arm's own.
func (c *Contract) Environ(base []string, a *Rendered) []string {
	var drop []string
	if c.ConfigEnv != "" {
		drop = append(drop, c.ConfigEnv)
	}
	for k := range c.Env {
		drop = append(drop, k)
	}
	return append(withoutPrefix(base, c.Prefix, drop...), a.Env...)
}
