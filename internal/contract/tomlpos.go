package contract

import (
	"regexp"
	"strings"
)

var (
	tableRe = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9_."-]+)\s*\]`)
	keyRe   = regexp.MustCompile(`^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=`)
)

// keyLines maps each key of a gate file ("build", "env.NAME",
// "legacy.script", and "legacy" for a table header) to its line, because the
// TOML decoder reports lines for syntax errors only and a refusal must name
// the line to fix.
func keyLines(text string) map[string]int {
	lines := map[string]int{}
	table := ""
	inMulti := ""
	for i, l := range strings.Split(text, "\n") {
		n := i + 1
		if inMulti != "" {
			if strings.Contains(l, inMulti) {
				inMulti = ""
			}
			continue
		}
		if m := tableRe.FindStringSubmatch(l); m != nil {
			table = unquoteKey(m[1])
			if _, ok := lines[table]; !ok {
				lines[table] = n
			}
			continue
		}
		m := keyRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		key := unquoteKey(m[1])
		if table != "" {
			key = table + "." + key
		}
		if _, ok := lines[key]; !ok {
			lines[key] = n
		}
		// A dotted key also locates its parent, so "legacy" finds "legacy.script = ...".
		if j := strings.IndexByte(key, '.'); j > 0 {
			if _, ok := lines[key[:j]]; !ok {
				lines[key[:j]] = n
			}
		}
		rest := l[len(m[0]):]
		for _, q := range []string{`"""`, `'''`} {
			if strings.Count(rest, q) == 1 {
				inMulti = q
			}
		}
	}
	return lines
}

func unquoteKey(k string) string {
	parts := strings.Split(k, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}
