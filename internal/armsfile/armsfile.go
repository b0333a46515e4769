// Package armsfile reads the small file that may describe the two arms of
// perfgate ab (docs/ab.md) into the gate's arm specs, refusing each mistake
// with its line before any arm starts.
package armsfile

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/redact"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// File is the small file that may describe the two arms (docs/ab.md):
// its [base] and [head] tables are the arms of those roles. A variant arm
// is not written here: it is the head's, started again for the plan's
// variant control (gate.VariantOf).
// Everything in it is checked when it is read, each mistake refused with
// its line, before any arm starts.
type File struct {
	Store bool
	Base  Arm
	Head  Arm
}

// Arm is one of the file's [base] and [head] tables.
type Arm struct {
	Command []string
	Env     map[string]string
	Dir     string
	Port    int
	URL     string
	Ready   string
	CAFile  string
	Commit  string
}

// maxArmsFile bounds the arms file; a real one is a few hundred bytes.
const maxArmsFile = 1 << 20

var (
	armKeys   = []string{"command", "env", "dir", "port", "url", "ready", "ca_file", "commit"}
	topKeys   = []string{"store", "base", "head"}
	envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Read reads and checks the arms file at path; every refusal is exit 2,
// naming the file and the line.
func Read(path string) (*File, error) {
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
	return Parse(path, data)
}

// parser reads one arms file with the strict TOML reader, refusing at the
// first mistake in the file.
type parser struct {
	tomlpos.Reader
	path   string
	failed bool
	line   int
	msg    string
}

func (p *parser) refuse(line int, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	sep := "; "
	if strings.HasSuffix(msg, "?") { // a near miss asks; the pointer to the docs follows the question
		sep = " "
	}
	return exit.Refusef("%s:%d: %s%sdocs/ab.md shows an arms file", p.path, max(line, 1), msg, sep)
}

// err is the first problem the reader reported, as the refusal.
func (p *parser) err() error {
	if !p.failed {
		return nil
	}
	return p.refuse(p.line, "%s", p.msg)
}

func (p *parser) at(path []string, format string, a ...any) error {
	return p.refuse(p.Line(path), format, a...)
}

// Parse checks an arms file's text; path names it in refusals.
func Parse(path string, data []byte) (*File, error) {
	p := &parser{path: path}
	raw, pos, err := tomlpos.Read(string(data))
	if line, msg, ok := tomlpos.Refusal(err); ok {
		return nil, p.refuse(line, "%s", msg)
	} else if err != nil {
		return nil, p.refuse(1, "%v", err)
	}
	p.Reader = tomlpos.Reader{Pos: pos, Report: func(line int, msg string) {
		if !p.failed {
			p.failed, p.line, p.msg = true, line, msg
		}
	}}
	p.Known(raw, nil, "the arms file", topKeys...)
	f := &File{}
	f.Store, _ = p.Bool(raw, nil, "store", "store = true")
	if err := p.err(); err != nil {
		return nil, err
	}
	for _, a := range []struct {
		name string
		arm  *Arm
	}{{"base", &f.Base}, {"head", &f.Head}} {
		if _, ok := raw[a.name]; !ok {
			return nil, p.refuse(1, "the arms file has no [%s] table; add [%s] with command = [\"./bin/service\", \"--port\", \"@PORT@\"]", a.name, a.name)
		}
		t, _ := p.Table(raw, nil, a.name, "["+a.name+"] with command = [...]")
		if err := p.err(); err != nil {
			return nil, err
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

func (p *parser) arm(name string, t map[string]any) (Arm, error) {
	var a Arm
	path := []string{name}
	key := func(k string) []string { return []string{name, k} }
	str := func(k, example string) (string, error) {
		s, _ := p.Str(t, path, k, example)
		return s, p.err()
	}
	const cmdExample = `command = ["./bin/service", "--addr", "127.0.0.1:@PORT@"]`
	p.Known(t, path, "["+name+"]", armKeys...)
	p.Need(t, path, "command", "this arm", "command", cmdExample, "["+name+"]")
	if err := p.err(); err != nil {
		return a, err
	}
	switch v := t["command"].(type) {
	case []any:
		if len(v) == 0 {
			return a, p.at(key("command"), "command is empty; write %s", cmdExample)
		}
		for i, w := range v {
			s, isStr := w.(string)
			switch {
			case !isStr:
				return a, p.at(key("command"), "%s", tomlpos.WrongKind(fmt.Sprintf("command's word %d", i+1), "a string", w, cmdExample))
			case i == 0 && s == "":
				return a, p.at(key("command"), "command's first word is empty; name the program to run: %s", cmdExample)
			}
			if ph := contract.UnknownPlaceholder(s, contract.PortPlaceholder, contract.DirPlaceholder); ph != "" {
				return a, p.at(key("command"), "command uses the placeholder %s; only @PORT@ and @DIR@ are filled in", ph)
			}
			a.Command = append(a.Command, s)
		}
	default:
		return a, p.at(key("command"), "%s", tomlpos.WrongKind("command", "an array of words", v, cmdExample))
	}
	if env, ok := p.Table(t, path, "env", `env = { NAME = "value" }`); ok {
		a.Env = map[string]string{}
		ep := key("env")
		for _, k := range p.SortedKeys(env, ep) { // refuse the first in the file
			ev := env[k]
			s, isStr := ev.(string)
			switch {
			case !envNameRe.MatchString(k):
				return a, p.at(tomlpos.Join(ep, k), "env name %q is not a variable name; use letters, digits and _", k)
			case !isStr:
				return a, p.at(tomlpos.Join(ep, k), "%s", tomlpos.WrongKind("env "+k, "a string", ev, k+` = "value"`))
			}
			if ph := contract.UnknownPlaceholder(s, contract.PortPlaceholder, contract.DirPlaceholder); ph != "" {
				return a, p.at(tomlpos.Join(ep, k), "env %s uses the placeholder %s; only @PORT@ and @DIR@ are filled in", k, ph)
			}
			a.Env[k] = s
		}
	}
	if err := p.err(); err != nil {
		return a, err
	}
	var err error
	if a.Dir, err = str("dir", `dir = "target/perf-run/`+name+`"`); err != nil {
		return a, err
	}
	if ph := contract.UnknownPlaceholder(a.Dir); ph != "" {
		return a, p.at(key("dir"), "dir uses the placeholder %s; write the folder itself", ph)
	}
	// Any whole number is read, so one out of range gets the port's own words.
	if n, ok := p.Int(t, path, "port", "port = 8080", math.MinInt64, math.MaxInt64); ok {
		if n < 1 || n > 65535 {
			return a, p.at(key("port"), "port %d is not a TCP port (1-65535); write port = 8080, or leave port out for a free one", n)
		}
		a.Port = int(n)
	}
	if err := p.err(); err != nil {
		return a, err
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

func (p *parser) checkURL(name string, a Arm) error {
	k := []string{name, "url"}
	if ph := contract.UnknownPlaceholder(a.URL, contract.PortPlaceholder); ph != "" {
		return p.at(k, "url uses the placeholder %s; only @PORT@ is filled in", ph)
	}
	if err := contract.LoopbackURL(a.URL, "http", "https"); err != nil {
		return p.at(k, "url %q %v", redact.URL(a.URL, contract.PortPlaceholder), err)
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

func (p *parser) checkReady(name, ready string) error {
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
		return p.at(k, "ready %q %v (or write a path such as \"/healthz\")", redact.URL(ready, contract.PortPlaceholder), err)
	}
	return nil
}

// mentionsPort reports whether the arm can learn the port perfgate picks.
func mentionsPort(a Arm) bool {
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
func fixedAddr(a Arm) string {
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
