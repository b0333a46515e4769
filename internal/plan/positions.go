package plan

import (
	"strconv"
	"strings"
)

// positions maps a key path to the line it is written on. BurntSushi/toml
// keeps key positions private, and keys under [[array]] tables share one
// name there, so the second [[group]]'s expect would be reported at the last
// group's line. This light scanner runs only after the TOML parser accepted
// the file, so it can assume well-formed input; it still never loops or
// panics on anything, because the fuzz target feeds it whatever parsed.
type positions struct {
	lines map[string]int
}

// pathKey joins a path the way both the scanner and the validator build it;
// NUL cannot appear in a TOML key, so quoted keys holding dots stay apart.
func pathKey(path []string) string { return strings.Join(path, "\x00") }

// line returns the line of path, or of its nearest written ancestor (an
// inline value inside an array has no line of its own), or 1.
func (p *positions) line(path []string) int {
	for n := len(path); n > 0; n-- {
		if l, ok := p.lines[pathKey(path[:n])]; ok {
			return l
		}
	}
	return 1
}

type posScanner struct {
	s      string
	i      int
	line   int
	out    map[string]int
	arrays map[string]int // concrete path of an array of tables -> last index
}

func scanPositions(src string) *positions {
	sc := &posScanner{s: src, line: 1, out: map[string]int{}, arrays: map[string]int{}}
	sc.document()
	return &positions{lines: sc.out}
}

func (sc *posScanner) eof() bool { return sc.i >= len(sc.s) }

func (sc *posScanner) peek(off int) byte {
	if sc.i+off < len(sc.s) {
		return sc.s[sc.i+off]
	}
	return 0
}

func (sc *posScanner) advance() {
	if sc.s[sc.i] == '\n' {
		sc.line++
	}
	sc.i++
}

func (sc *posScanner) record(path []string, line int) {
	k := pathKey(path)
	if _, ok := sc.out[k]; !ok {
		sc.out[k] = line
	}
}

// skipSpace skips blanks and comments, and newlines when nl is set.
func (sc *posScanner) skipSpace(nl bool) {
	for !sc.eof() {
		c := sc.s[sc.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			sc.i++
		case c == '\n' && nl:
			sc.advance()
		case c == '#':
			for !sc.eof() && sc.s[sc.i] != '\n' {
				sc.i++
			}
		default:
			return
		}
	}
}

func (sc *posScanner) document() {
	var table []string
	for {
		sc.skipSpace(true)
		if sc.eof() {
			return
		}
		start := sc.i
		line := sc.line
		if sc.s[sc.i] == '[' {
			array := sc.peek(1) == '['
			if array {
				sc.i += 2
			} else {
				sc.i++
			}
			sc.skipSpace(false)
			key := sc.key()
			if array && len(key) > 0 {
				// The array's own name is not resolved: [[group]] after
				// [[group]] adds an element, it does not nest in the last.
				table = append(sc.resolve(key[:len(key)-1]), key[len(key)-1])
			} else {
				table = sc.resolve(key)
			}
			if array {
				k := pathKey(table)
				idx, seen := sc.arrays[k]
				if seen {
					idx++
				}
				sc.arrays[k] = idx
				sc.recordPrefixes(table, line)
				table = append(table, strconv.Itoa(idx))
			}
			sc.recordPrefixes(table, line)
			sc.toLineEnd()
		} else {
			key := sc.key()
			sc.skipSpace(false)
			if !sc.eof() && sc.s[sc.i] == '=' {
				sc.i++
				full := append(append([]string{}, table...), key...)
				sc.recordPrefixes(full, line)
				sc.skipSpace(false)
				sc.value(full)
			}
			sc.toLineEnd()
		}
		if sc.i == start { // never stall on input the scanner does not know
			sc.advance()
		}
	}
}

// resolve turns a header's key into a concrete path: a prefix naming an
// array of tables means its latest element, as TOML defines.
func (sc *posScanner) resolve(key []string) []string {
	var out []string
	for _, k := range key {
		out = append(out, k)
		if idx, ok := sc.arrays[pathKey(out)]; ok {
			out = append(out, strconv.Itoa(idx))
		}
	}
	return out
}

func (sc *posScanner) recordPrefixes(path []string, line int) {
	for n := 1; n <= len(path); n++ {
		sc.record(path[:n], line)
	}
}

func (sc *posScanner) toLineEnd() {
	for !sc.eof() && sc.s[sc.i] != '\n' {
		c := sc.s[sc.i]
		if c == '"' || c == '\'' {
			sc.str()
			continue
		}
		if c == '#' {
			sc.skipSpace(false)
			continue
		}
		sc.i++
	}
}

// key reads a dotted key of bare and quoted parts.
func (sc *posScanner) key() []string {
	var parts []string
	for {
		sc.skipSpace(false)
		if sc.eof() {
			return parts
		}
		c := sc.s[sc.i]
		switch {
		case c == '"' || c == '\'':
			start := sc.i
			sc.str()
			raw := sc.s[start:sc.i]
			if c == '\'' {
				parts = append(parts, strings.Trim(raw, "'"))
			} else if u, err := strconv.Unquote(raw); err == nil {
				parts = append(parts, u)
			} else {
				parts = append(parts, strings.Trim(raw, `"`))
			}
		case isBare(c):
			start := sc.i
			for !sc.eof() && isBare(sc.s[sc.i]) {
				sc.i++
			}
			parts = append(parts, sc.s[start:sc.i])
		default:
			return parts
		}
		sc.skipSpace(false)
		if sc.eof() || sc.s[sc.i] != '.' {
			return parts
		}
		sc.i++
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// str skips one string of any of TOML's four kinds.
func (sc *posScanner) str() {
	q := sc.s[sc.i]
	if sc.peek(1) == q && sc.peek(2) == q {
		sc.i += 3
		for !sc.eof() {
			if q == '"' && sc.s[sc.i] == '\\' {
				sc.advance()
				if !sc.eof() {
					sc.advance()
				}
				continue
			}
			if sc.s[sc.i] == q && sc.peek(1) == q && sc.peek(2) == q {
				sc.i += 3
				for !sc.eof() && sc.s[sc.i] == q { // up to two quotes may end the content
					sc.i++
				}
				return
			}
			sc.advance()
		}
		return
	}
	sc.i++
	for !sc.eof() && sc.s[sc.i] != '\n' {
		c := sc.s[sc.i]
		if q == '"' && c == '\\' {
			sc.i += 2
			continue
		}
		sc.i++
		if c == q {
			return
		}
	}
	if sc.i > len(sc.s) {
		sc.i = len(sc.s)
	}
}

// value skips one value, recording the lines of inline tables' keys and of
// array elements.
func (sc *posScanner) value(path []string) {
	if sc.eof() {
		return
	}
	switch sc.s[sc.i] {
	case '"', '\'':
		sc.str()
	case '[':
		sc.i++
		for idx := 0; ; idx++ {
			sc.skipSpace(true)
			if sc.eof() {
				return
			}
			if sc.s[sc.i] == ']' {
				sc.i++
				return
			}
			el := append(append([]string{}, path...), strconv.Itoa(idx))
			sc.record(el, sc.line)
			start := sc.i
			sc.value(el)
			sc.skipSpace(true)
			if !sc.eof() && sc.s[sc.i] == ',' {
				sc.i++
			} else if sc.i == start && !sc.eof() {
				sc.advance()
			}
		}
	case '{':
		sc.i++
		for {
			sc.skipSpace(true)
			if sc.eof() {
				return
			}
			if sc.s[sc.i] == '}' {
				sc.i++
				return
			}
			start := sc.i
			line := sc.line
			key := sc.key()
			full := append(append([]string{}, path...), key...)
			sc.recordPrefixes(full, line)
			sc.skipSpace(false)
			if !sc.eof() && sc.s[sc.i] == '=' {
				sc.i++
				sc.skipSpace(false)
				sc.value(full)
			}
			sc.skipSpace(true)
			if !sc.eof() && sc.s[sc.i] == ',' {
				sc.i++
			} else if sc.i == start && !sc.eof() {
				sc.advance()
			}
		}
	default:
		for !sc.eof() {
			c := sc.s[sc.i]
			if c == ',' || c == ']' || c == '}' || c == '\n' || c == '#' || c == ' ' || c == '\t' || c == '\r' {
				return
			}
			sc.i++
		}
	}
}
