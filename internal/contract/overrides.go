package contract

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/exit"
)

// renderPlaceholders are the only ones the service config, the overrides and
// the fixed environment may name.
var renderPlaceholders = map[string]bool{PortPlaceholder: true, DirPlaceholder: true}

// badPlaceholder returns the first placeholder in s that allowed lacks.
func badPlaceholder(s string, allowed map[string]bool) string {
	for _, ph := range placeholder.FindAllString(s, -1) {
		if !allowed[ph] {
			return ph
		}
	}
	return ""
}

// ParseOverrides reads an override file: one NAME=VALUE a line, NAME starting
// with prefix; blank lines and lines starting with # are skipped; one pair of
// matching quotes around VALUE is removed. It returns NAME=VALUE pairs in file
// order, with @PORT@ and @DIR@ left for Render to fill. Any line that sets no
// prefixed variable, a name set twice or another placeholder is refused with
// exit 2 naming file and line.
func ParseOverrides(file string, data []byte, prefix string) ([]string, error) {
	if !envNameRe.MatchString(prefix) {
		return nil, exit.Refusef("%s: the prefix %q is not the start of a variable name: fix prefix in %s", file, prefix, GateFile)
	}
	if !utf8.Valid(data) {
		return nil, exit.Refusef("%s: is not UTF-8 text: save it as UTF-8", file)
	}
	var out []string
	seen := map[string]int{}
	for i, raw := range bytes.Split(data, []byte("\n")) {
		n := i + 1
		line := strings.TrimSuffix(string(raw), "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		name, value, ok := strings.Cut(trimmed, "=")
		if ok && name != strings.TrimSpace(name) && strings.HasPrefix(name, prefix) && envNameRe.MatchString(strings.TrimSpace(name)) {
			return nil, exit.Refusef("%s:%d: %s has a space before =: write %s=VALUE", file, n, quoteLine(trimmed, prefix), strings.TrimSpace(name))
		}
		if !ok || !strings.HasPrefix(name, prefix) || len(name) == len(prefix) || !envNameRe.MatchString(name) {
			return nil, exit.Refusef("%s:%d: %s sets no %s variable: write one %sNAME=VALUE a line (or a # comment)",
				file, n, quoteLine(trimmed, prefix), prefix, prefix)
		}
		value = unquoteValue(value)
		if strings.ContainsRune(value, 0) {
			return nil, exit.Refusef("%s:%d: the value of %s holds a NUL byte: remove it", file, n, name)
		}
		if ph := badPlaceholder(value, renderPlaceholders); ph != "" {
			return nil, exit.Refusef("%s:%d: %s uses the placeholder %s: only @PORT@ and @DIR@ are filled in", file, n, name, ph)
		}
		if first, dup := seen[name]; dup {
			return nil, exit.Refusef("%s:%d: %s is already set on line %d: keep one of them", file, n, name, first)
		}
		seen[name] = n
		out = append(out, name+"="+value)
	}
	return out, nil
}

// UnquoteOverrides returns NAME=VALUE lines with one pair of matching
// quotes around each VALUE removed, as ParseOverrides removes them from
// perf/arm.env's lines. The variant control's overrides in the gate file
// are written as arm.env's lines are, so they must reach the variant arm
// alike: SVC__A="a b" sets a b in both places, not "a b" in one.
func UnquoteOverrides(kvs []string) []string {
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		if name, value, ok := strings.Cut(kv, "="); ok {
			kv = name + "=" + unquoteValue(value)
		}
		out = append(out, kv)
	}
	return out
}

func unquoteValue(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// quoteLine shows a refused line by its name only: its value may be a
// secret, and so may a line that is no NAME=VALUE at all (a token pasted
// on a line of its own, or "NAME value" with the = left out). Such a line
// is quoted only as far as a name of the prefix goes, else not at all:
// the line number says which it is.
func quoteLine(s, prefix string) string {
	name, _, hasEq := strings.Cut(s, "=")
	lead := lineNameRe.FindString(s)
	bare := lead // without its export
	if f := strings.Fields(lead); len(f) == 2 {
		bare = f[1]
	}
	switch {
	case hasEq && lead != "" && strings.TrimRight(name, " \t") == lead:
		s = name + "=..."
	case strings.HasPrefix(bare, prefix):
		s = lead + "..."
	default:
		return "this line"
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// lineNameRe is the variable name a line starts with, after an optional
// export.
var lineNameRe = regexp.MustCompile(`^(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_]*`)
