package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/redact"
)

// Vars holds the values of a plan's variables. It never prints a secret's
// value: String, GoString and every error say "***" or name where the value
// came from instead.
type Vars struct {
	values  map[string]string
	origin  map[string]string // "--var", "PERFGATE_VAR_X", "file ...", "the plan"
	secret  map[string]bool
	redacts *redact.Set // secret values and the forms they are sent in
}

// EnvPrefix is the prefix of the environment variables that give values:
// PERFGATE_VAR_API_TOKEN gives {api_token}.
const EnvPrefix = "PERFGATE_VAR_"

// ResolveVars gives each declared variable its value, from (first wins) a
// --var flag ("name=value", or "name=@path" to read a file), the
// environment variable PERFGATE_VAR_<NAME>, the variable's file in the plan,
// or its value in the plan (also when that file does not exist). A variable
// left without a value is refused, naming its line in the plan.
func ResolveVars(p *Plan, flagVars []string, getenv func(string) string) (*Vars, error) {
	v := &Vars{values: map[string]string{}, origin: map[string]string{}, secret: map[string]bool{}}
	var masks []string
	declared := map[string]*Var{}
	for i := range p.Vars {
		declared[p.Vars[i].Name] = &p.Vars[i]
		v.secret[p.Vars[i].Name] = p.Vars[i].Secret
	}
	fromFlag := map[string]string{}
	flagIndex := map[string]int{}
	for i, f := range flagVars {
		name, val, ok := strings.Cut(f, "=")
		if !ok {
			// The argument may be a pasted token: never echo it.
			return nil, exit.Refusef("--var argument %d has no '='; write --var NAME=VALUE or --var NAME=@FILE", i+1)
		}
		if _, isDeclared := declared[name]; !isDeclared {
			return nil, exit.Refusef("%s:%d: --var %s names no variable of the plan; declare it under [vars], such as %s = { secret = true }", p.Path, p.Line("vars"), safeName(name), safeName(name))
		}
		if _, twice := fromFlag[name]; twice {
			// Silently keeping the last would hide which one was measured.
			return nil, exit.Refusef("--var %s is given twice (arguments %d and %d); give each variable once", name, flagIndex[name], i+1)
		}
		flagIndex[name] = i + 1
		if file, isFile := strings.CutPrefix(val, "@"); isFile {
			b, err := readRegular(file, 1<<20)
			if err != nil {
				return nil, exit.Refusef("--var %s=@%s: cannot read the file (%w); write --var %s=@PATH naming a readable file", name, file, err, name)
			}
			val = trimNewline(string(b))
			v.origin[name] = "--var " + name + "=@" + file
		} else {
			v.origin[name] = "--var " + name
		}
		fromFlag[name] = val
	}
	for _, d := range p.Vars {
		val, ok := fromFlag[d.Name]
		if !ok {
			env := EnvPrefix + strings.ToUpper(d.Name)
			if getenv != nil {
				if e := getenv(env); e != "" {
					val, ok = e, true
					v.origin[d.Name] = env
				}
			}
		}
		if !ok && d.File != "" {
			path := d.File
			if !filepath.IsAbs(path) {
				path = filepath.Join(p.dir, path)
			}
			b, err := readRegular(path, 1<<20)
			switch {
			case err == nil:
				val, ok = trimNewline(string(b)), true
				v.origin[d.Name] = "file " + path
			case errors.Is(err, fs.ErrNotExist) && d.Has:
				// The plan's value is the default for when the file is not made.
			default:
				return nil, exit.Refusef("%s:%d: variable %s: cannot read %s (%w); write file = a readable path relative to the plan's folder, or pass --var %s=... or %s", p.Path, d.Line, d.Name, path, err, d.Name, EnvPrefix+strings.ToUpper(d.Name))
			}
		}
		if !ok && d.Has {
			val, ok = d.Value, true
			v.origin[d.Name] = "the plan"
		}
		if !ok {
			return nil, exit.Refusef("%s:%d: variable %s has no value; pass --var %s=VALUE (or =@FILE), or set %s", p.Path, d.Line, d.Name, d.Name, EnvPrefix+strings.ToUpper(d.Name))
		}
		if strings.IndexFunc(val, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) >= 0 {
			return nil, exit.Refusef("%s:%d: variable %s from %s holds a line break or control character, which cannot go into a request; give it a single-line value", p.Path, d.Line, d.Name, v.origin[d.Name])
		}
		v.values[d.Name] = val
		if d.Secret && val != "" {
			// The forms that leave perfgate: as written (headers, bodies)
			// and as the request line carries it (see targetSafe).
			masks = append(masks, val, targetSafe(val))
		}
	}
	v.redacts = redact.New(masks...)
	return v, nil
}

// safeName keeps a flag's name printable without echoing a long pasted value.
func safeName(s string) string {
	if len(s) > 40 || !isIdent(s) {
		return "(that name)"
	}
	return s
}

func trimNewline(s string) string {
	return strings.TrimRight(s, "\r\n")
}

// Get returns a variable's value.
func (v *Vars) Get(name string) (string, bool) {
	if v == nil {
		return "", false
	}
	s, ok := v.values[name]
	return s, ok
}

// Secret reports whether name is a secret variable.
func (v *Vars) Secret(name string) bool { return v != nil && v.secret[name] }

// Redact replaces every secret value in s, in each form it is sent in,
// with "***", for anything printed that may carry a request: errors, logs,
// reports.
func (v *Vars) Redact(s string) string {
	if v == nil {
		return s
	}
	return v.redacts.String(s)
}

// RedactError wraps err so its whole message, inner errors included (a
// host or URL quoted by the resolver), is redacted; its exit code stays.
func (v *Vars) RedactError(err error) error {
	if v == nil {
		return err
	}
	return v.redacts.Error(err)
}

// Redactor is the set of secrets, for a stream such as an arm's log.
func (v *Vars) Redactor() *redact.Set {
	if v == nil {
		return nil
	}
	return v.redacts
}

// String lists the variables and where each value came from, secrets as ***.
func (v *Vars) String() string {
	if v == nil {
		return "no variables"
	}
	names := make([]string, 0, len(v.values))
	for n := range v.values {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		val := v.values[n]
		if v.secret[n] {
			val = "***"
		}
		parts[i] = fmt.Sprintf("%s=%q (%s)", n, val, v.origin[n])
	}
	return strings.Join(parts, ", ")
}

// GoString keeps %#v from dumping the values map.
func (v *Vars) GoString() string { return "plan.Vars{" + v.String() + "}" }

// Secrets returns every secret value in each form it is sent in, so the
// GitHub Action can mask them in the job's log before anything is printed.
func (v *Vars) Secrets() []string {
	if v == nil {
		return nil
	}
	return v.redacts.Values()
}
