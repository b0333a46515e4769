// Package tomlpos is how perfgate reads its TOML files (the plan, the gate
// contract, the arms file): Reader's strict getters and words.go's one
// wording for each refusal, so a mistake reads the same whichever file
// holds it. It also finds the line each key of a file is written on.
// BurntSushi/toml keeps key positions private, and keys under [[array]]
// tables share one name there, so the second [[group]]'s expect would be
// reported at the last group's line; a refusal must name the line to fix.
//
// Scan runs before the TOML library sees a file, so it also guards it: the
// library's time grows with the square of inline nesting (a 19 KB file of
// 3,200 nested inline tables took it over a second, and perfgate's older
// scanner 42 s), while no file perfgate reads nests more than a few levels.
// Scan is linear and refuses nesting deeper than MaxDepth. It assumes
// nothing about its input: on text that is not TOML it records what it can
// and never loops or panics.
package tomlpos

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxDepth bounds how deep keys and values may nest: the parts of a key
// path (table header, dotted key and inline tables together, an array
// element counting as a part) and the brackets open at once. The deepest
// path a plan writes, group.0.headers.Name, has four parts.
const MaxDepth = 16

// TooDeep is Scan's refusal of a file nesting deeper than MaxDepth.
type TooDeep struct {
	Line int
}

func (e *TooDeep) Error() string {
	return fmt.Sprintf("keys and values nest more than %d levels deep here, more than any perfgate file needs; write the tables out flat", MaxDepth)
}

// Positions maps key paths to the line each is first written on.
type Positions struct {
	lines map[string]int
}

// pathKey joins a path; NUL cannot appear in a TOML key, so quoted keys
// holding dots stay apart.
func pathKey(path []string) string { return strings.Join(path, "\x00") }

// Lookup returns the line path is written on, when it is.
func (p *Positions) Lookup(path ...string) (int, bool) {
	if p == nil {
		return 0, false
	}
	l, ok := p.lines[pathKey(path)]
	return l, ok
}

// Line returns the line of path, or of its nearest written ancestor (an
// inline value inside an array has no line of its own), or 1.
func (p *Positions) Line(path ...string) int {
	for n := len(path); n > 0; n-- {
		if l, ok := p.Lookup(path[:n]...); ok {
			return l
		}
	}
	return 1
}

type scanner struct {
	s      string
	i      int
	line   int
	depth  int // brackets open in the value being read
	deep   int // line where nesting passed MaxDepth; 0 while it has not
	out    map[string]int
	arrays map[string]int // concrete path of an array of tables -> last index
}

// Scan reads src's key positions; a *TooDeep error names the line where
// nesting passed MaxDepth.
func Scan(src string) (*Positions, error) {
	sc := &scanner{s: src, line: 1, out: map[string]int{}, arrays: map[string]int{}}
	sc.document()
	if sc.deep > 0 {
		return nil, &TooDeep{Line: sc.deep}
	}
	return &Positions{lines: sc.out}, nil
}

func (sc *scanner) eof() bool { return sc.i >= len(sc.s) || sc.deep > 0 }

func (sc *scanner) peek(off int) byte {
	if sc.i+off < len(sc.s) {
		return sc.s[sc.i+off]
	}
	return 0
}

func (sc *scanner) advance() {
	if sc.s[sc.i] == '\n' {
		sc.line++
	}
	sc.i++
}

// tooDeep records the first line where a path or the brackets passed
// MaxDepth; scanning then stops.
func (sc *scanner) tooDeep(n, line int) bool {
	if n > MaxDepth && sc.deep == 0 {
		sc.deep = line
	}
	return sc.deep > 0
}

// record notes the line of path[:n] for every n from `from` on: the
// shorter prefixes were recorded by whoever scanned the enclosing table.
func (sc *scanner) record(path []string, from, line int) {
	for n := max(from, 1); n <= len(path); n++ {
		k := pathKey(path[:n])
		if _, ok := sc.out[k]; !ok {
			sc.out[k] = line
		}
	}
}

// skipSpace skips blanks and comments, and newlines when nl is set.
func (sc *scanner) skipSpace(nl bool) {
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

func (sc *scanner) document() {
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
				sc.record(table, 1, line)
				table = append(table, strconv.Itoa(idx))
			}
			if sc.tooDeep(len(table), line) {
				return
			}
			sc.record(table, 1, line)
			sc.toLineEnd()
		} else {
			key := sc.key()
			sc.skipSpace(false)
			if !sc.eof() && sc.s[sc.i] == '=' {
				sc.i++
				full := append(append(make([]string, 0, len(table)+len(key)), table...), key...)
				if sc.tooDeep(len(full), line) {
					return
				}
				sc.record(full, len(table)+1, line)
				sc.skipSpace(false)
				sc.value(full)
			}
			sc.toLineEnd()
		}
		if sc.i == start && !sc.eof() { // never stall on input the scanner does not know
			sc.advance()
		}
	}
}

// resolve turns a header's key into a concrete path: a prefix naming an
// array of tables means its latest element, as TOML defines.
func (sc *scanner) resolve(key []string) []string {
	out := make([]string, 0, 2*len(key))
	for _, k := range key {
		out = append(out, k)
		if idx, ok := sc.arrays[pathKey(out)]; ok {
			out = append(out, strconv.Itoa(idx))
		}
	}
	return out
}

func (sc *scanner) toLineEnd() {
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

// key reads a dotted key of bare and quoted parts; it stops reading parts
// past MaxDepth, whose caller then refuses the line.
func (sc *scanner) key() []string {
	var parts []string
	for {
		sc.skipSpace(false)
		if sc.eof() || len(parts) > MaxDepth {
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
func (sc *scanner) str() {
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
// array elements. Every bracket it enters counts towards MaxDepth, so its
// recursion is bounded whatever the input.
func (sc *scanner) value(path []string) {
	if sc.eof() {
		return
	}
	switch sc.s[sc.i] {
	case '"', '\'':
		sc.str()
	case '[':
		sc.depth++
		defer func() { sc.depth-- }()
		if sc.tooDeep(max(sc.depth, len(path)+1), sc.line) {
			return
		}
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
			el := append(append(make([]string, 0, len(path)+1), path...), strconv.Itoa(idx))
			sc.record(el, len(el), sc.line)
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
		sc.depth++
		defer func() { sc.depth-- }()
		if sc.tooDeep(sc.depth, sc.line) {
			return
		}
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
			full := append(append(make([]string, 0, len(path)+len(key)), path...), key...)
			if sc.tooDeep(len(full), line) {
				return
			}
			sc.record(full, len(path)+1, line)
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

// Dotted returns every recorded path joined with dots ("env.NAME",
// "legacy.script") and its line, for files whose keys hold no dots.
func (p *Positions) Dotted() map[string]int {
	out := make(map[string]int, len(p.lines))
	for k, l := range p.lines {
		out[strings.ReplaceAll(k, "\x00", ".")] = l
	}
	return out
}
