package cli

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/pairs"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// armsFile is the small file that may describe the two arms (docs/ab.md):
// its [base] and [head] tables are the arms of those roles. A variant arm
// is not written here: it is the head's, started again for the plan's
// variant control (gate.VariantOf).
// Everything in it is checked when it is read, each mistake refused with
// its line, before any arm starts.
type armsFile struct {
	Store bool
	Base  armsFileArm
	Head  armsFileArm
}

type armsFileArm struct {
	Command []string
	Env     map[string]string
	Dir     string
	Port    int
	URL     string
	Ready   string
	CAFile  string
	Commit  string
}

// spec is the arm's spec, tagged with its role (the table it came from).
func (a armsFileArm) spec(role pairs.Role) gate.ArmSpec {
	s := gate.ArmSpec{Role: role, Command: a.Command, Dir: a.Dir, Port: a.Port, URL: a.URL, Ready: a.Ready, CAFile: a.CAFile,
		Info: report.Build{Name: string(role), Commit: a.Commit}}
	keys := make([]string, 0, len(a.Env))
	for k := range a.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same environment order on every run
	for _, k := range keys {
		s.Env = append(s.Env, k+"="+a.Env[k])
	}
	return s
}

// maxArmsFile bounds the arms file; a real one is a few hundred bytes.
const maxArmsFile = 1 << 20

var (
	armKeys   = []string{"command", "env", "dir", "port", "url", "ready", "ca_file", "commit"}
	topKeys   = []string{"store", "base", "head"}
	envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func readArmsFile(path string) (*armsFile, error) {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, exit.Refusef("%s: cannot read the arms file (%v); write --arms FILE naming one (docs/ab.md shows one)", path, errors.Unwrap(err))
	case !st.Mode().IsRegular() || st.Size() > maxArmsFile:
		return nil, exit.Refusef("%s: the arms file is not a regular file under 1 MiB; docs/ab.md shows one", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, exit.Refusef("%s: cannot read the arms file (%v)", path, err)
	}
	return parseArmsFile(path, data)
}

// armsParser reads one arms file, refusing at the first mistake.
type armsParser struct {
	path string
	pos  *tomlpos.Positions
}

func (p *armsParser) refuse(line int, format string, a ...any) error {
	return exit.Refusef("%s:%d: %s; docs/ab.md shows an arms file", p.path, max(line, 1), fmt.Sprintf(format, a...))
}

func (p *armsParser) at(path []string, format string, a ...any) error {
	return p.refuse(p.pos.Line(path...), format, a...)
}

func parseArmsFile(path string, data []byte) (*armsFile, error) {
	p := &armsParser{path: path}
	pos, err := tomlpos.Scan(string(data))
	var deep *tomlpos.TooDeep
	if errors.As(err, &deep) {
		return nil, p.refuse(deep.Line, "%v", err)
	}
	p.pos = pos
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		line, msg, _ := tomlpos.DecodeError(err)
		return nil, p.refuse(line, "this is not valid TOML (%s)", msg)
	}
	if err := p.known(raw, nil, "the arms file", topKeys); err != nil {
		return nil, err
	}
	f := &armsFile{}
	if v, ok := raw["store"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return nil, p.at([]string{"store"}, "store must be true or false, not %s; write store = true", tomlpos.Kind(v))
		}
		f.Store = b
	}
	for _, a := range []struct {
		name string
		arm  *armsFileArm
	}{{"base", &f.Base}, {"head", &f.Head}} {
		v, ok := raw[a.name]
		if !ok {
			return nil, p.refuse(1, "the arms file has no [%s] table; add [%s] with command = [\"./bin/service\", \"--port\", \"@PORT@\"]", a.name, a.name)
		}
		t, isTable := v.(map[string]any)
		if !isTable {
			return nil, p.at([]string{a.name}, "%s must be a table, not %s; write [%s] with command = [...]", a.name, tomlpos.Kind(v), a.name)
		}
		arm, err := p.arm(a.name, t)
		if err != nil {
			return nil, err
		}
		*a.arm = arm
	}
	if f.Base.Port != 0 && f.Base.Port == f.Head.Port {
		return nil, p.at([]string{"head", "port"}, "both arms have port %d, and two services cannot listen on one port; give each arm its own port, or leave port out for a free one", f.Head.Port)
	}
	if f.Base.Dir != "" && filepath.Clean(f.Base.Dir) == filepath.Clean(f.Head.Dir) {
		return nil, p.at([]string{"head", "dir"}, "both arms have dir %q, where each arm's store.dsn and files would overwrite the other's; give each arm its own folder", f.Head.Dir)
	}
	if b, h := fixedAddr(f.Base), fixedAddr(f.Head); b != "" && b == h {
		return nil, p.at([]string{"head", "url"}, "both arms' url point at %s, so both arms' load would reach one service; give each arm its own port", h)
	}
	return f, nil
}

// known refuses a key of m that is not one of allowed, on its line.
func (p *armsParser) known(m map[string]any, path []string, where string, allowed []string) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	line := func(k string) int { return p.pos.Line(append(append([]string{}, path...), k)...) }
	sort.Slice(keys, func(i, j int) bool { // refuse the first in the file
		return line(keys[i]) < line(keys[j]) || line(keys[i]) == line(keys[j]) && keys[i] < keys[j]
	})
	for _, k := range keys {
		found := false
		for _, a := range allowed {
			found = found || a == k
		}
		if !found {
			return p.at(append(append([]string{}, path...), k), "unknown key %q in %s; the keys are %s", k, where, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func (p *armsParser) arm(name string, t map[string]any) (armsFileArm, error) {
	var a armsFileArm
	key := func(k string) []string { return []string{name, k} }
	if err := p.known(t, []string{name}, "["+name+"]", armKeys); err != nil {
		return a, err
	}
	str := func(k, example string) (string, error) {
		v, ok := t[k]
		if !ok {
			return "", nil
		}
		s, isStr := v.(string)
		if !isStr {
			return "", p.at(key(k), "%s must be a string, not %s; write %s", k, tomlpos.Kind(v), example)
		}
		return s, nil
	}
	const cmdExample = `command = ["./bin/service", "--addr", "127.0.0.1:@PORT@"]`
	switch v := t["command"].(type) {
	case nil:
		return a, p.at([]string{name}, "[%s] has no command; write %s", name, cmdExample)
	case []any:
		if len(v) == 0 {
			return a, p.at(key("command"), "command is empty; write %s", cmdExample)
		}
		for i, w := range v {
			s, isStr := w.(string)
			switch {
			case !isStr:
				return a, p.at(key("command"), "command's word %d must be a string, not %s; write %s", i+1, tomlpos.Kind(w), cmdExample)
			case i == 0 && s == "":
				return a, p.at(key("command"), "command's first word is empty; name the program to run: %s", cmdExample)
			}
			if ph := contract.UnknownPlaceholder(s, contract.PortPlaceholder, contract.DirPlaceholder); ph != "" {
				return a, p.at(key("command"), "command uses the placeholder %s; only @PORT@ and @DIR@ are filled in", ph)
			}
			a.Command = append(a.Command, s)
		}
	default:
		return a, p.at(key("command"), "command must be an array of words, not %s; write %s", tomlpos.Kind(v), cmdExample)
	}
	if v, ok := t["env"]; ok {
		env, isTable := v.(map[string]any)
		if !isTable {
			return a, p.at(key("env"), "env must be a table, not %s; write env = { NAME = \"value\" }", tomlpos.Kind(v))
		}
		a.Env = map[string]string{}
		names := make([]string, 0, len(env))
		for k := range env {
			names = append(names, k)
		}
		sort.Slice(names, func(i, j int) bool { // refuse the first in the file
			li, lj := p.pos.Line(name, "env", names[i]), p.pos.Line(name, "env", names[j])
			return li < lj || li == lj && names[i] < names[j]
		})
		for _, k := range names {
			ev := env[k]
			s, isStr := ev.(string)
			switch {
			case !envNameRe.MatchString(k):
				return a, p.at([]string{name, "env", k}, "env name %q is not a variable name; use letters, digits and _", k)
			case !isStr:
				return a, p.at([]string{name, "env", k}, "env %s must be a string, not %s; write %s = \"value\"", k, tomlpos.Kind(ev), k)
			}
			if ph := contract.UnknownPlaceholder(s, contract.PortPlaceholder, contract.DirPlaceholder); ph != "" {
				return a, p.at([]string{name, "env", k}, "env %s uses the placeholder %s; only @PORT@ and @DIR@ are filled in", k, ph)
			}
			a.Env[k] = s
		}
	}
	var err error
	if a.Dir, err = str("dir", `dir = "target/perf-run/`+name+`"`); err != nil {
		return a, err
	}
	if ph := contract.UnknownPlaceholder(a.Dir); ph != "" {
		return a, p.at(key("dir"), "dir uses the placeholder %s; write the folder itself", ph)
	}
	if v, ok := t["port"]; ok {
		n, isInt := v.(int64)
		switch {
		case !isInt:
			return a, p.at(key("port"), "port must be a whole number, not %s; write port = 8080", tomlpos.Kind(v))
		case n < 1 || n > 65535:
			return a, p.at(key("port"), "port %d is not a TCP port (1-65535); write port = 8080, or leave port out for a free one", n)
		}
		a.Port = int(n)
	}
	if a.URL, err = str("url", `url = "http://127.0.0.1:@PORT@"`); err != nil {
		return a, err
	}
	if a.URL != "" {
		if err := p.checkURL(name, a); err != nil {
			return a, err
		}
	}
	if a.Ready, err = str("ready", `ready = "/healthz"`); err != nil {
		return a, err
	}
	if err := p.checkReady(name, a.Ready); err != nil {
		return a, err
	}
	if a.CAFile, err = str("ca_file", `ca_file = "target/perf-run/ca.pem"`); err != nil {
		return a, err
	}
	if a.CAFile != "" {
		if st, err := os.Stat(a.CAFile); err != nil || !st.Mode().IsRegular() {
			return a, p.at(key("ca_file"), "ca_file %q is not a readable file; write the path of the CA certificate (PEM) that signs the arm's certificate", a.CAFile)
		}
	}
	if a.Commit, err = str("commit", `commit = "3f2a1c9"`); err != nil {
		return a, err
	}
	if a.Port == 0 && !mentionsPort(a) {
		return a, p.at([]string{name}, "[%s] names @PORT@ nowhere and sets no port, so the arm cannot know the free port perfgate picks for it; put @PORT@ in its command or env, or write port = 8080", name)
	}
	return a, nil
}

func (p *armsParser) checkURL(name string, a armsFileArm) error {
	k := []string{name, "url"}
	if ph := contract.UnknownPlaceholder(a.URL, contract.PortPlaceholder); ph != "" {
		return p.at(k, "url uses the placeholder %s; only @PORT@ is filled in", ph)
	}
	if err := contract.LoopbackURL(a.URL, "http", "https"); err != nil {
		return p.at(k, "url %q %v", a.URL, err)
	}
	if strings.Contains(a.URL, contract.PortPlaceholder) {
		return nil
	}
	u, _ := url.Parse(a.URL)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	switch {
	case a.Port == 0:
		return p.at(k, "url %q names port %s but the arm's port is left to perfgate; write port = %s, or @PORT@ in url", a.URL, port, port)
	case strconv.Itoa(a.Port) != port:
		return p.at(k, "url %q names port %s but the arm's port is %d; write @PORT@ in url", a.URL, port, a.Port)
	}
	return nil
}

func (p *armsParser) checkReady(name, ready string) error {
	k := []string{name, "ready"}
	if ready == "" {
		return nil
	}
	if ph := contract.UnknownPlaceholder(ready, contract.PortPlaceholder); ph != "" {
		return p.at(k, "ready uses the placeholder %s; only @PORT@ is filled in", ph)
	}
	if strings.HasPrefix(ready, "/") {
		return nil
	}
	if err := contract.LoopbackURL(ready, "http", "https", "tcp"); err != nil {
		return p.at(k, "ready %q %v (or write a path such as \"/healthz\")", ready, err)
	}
	return nil
}

// mentionsPort reports whether the arm can learn the port perfgate picks.
func mentionsPort(a armsFileArm) bool {
	for _, w := range a.Command {
		if strings.Contains(w, contract.PortPlaceholder) {
			return true
		}
	}
	for _, v := range a.Env {
		if strings.Contains(v, contract.PortPlaceholder) {
			return true
		}
	}
	return false
}

// fixedAddr is the host:port an arm's load goes to when it is fixed in the
// file, or "".
func fixedAddr(a armsFileArm) string {
	raw := a.URL
	if raw == "" {
		if a.Port == 0 {
			return ""
		}
		raw = contract.DefaultURL
	}
	raw = strings.ReplaceAll(raw, contract.PortPlaceholder, strconv.Itoa(a.Port))
	if a.Port == 0 && strings.Contains(a.URL, contract.PortPlaceholder) {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
