package tomlpos

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Reader reads the tables of one TOML file strictly: each getter refuses a
// value of the wrong kind or out of range on its line, Known refuses a key
// the file does not know, Need a key a table must have. It keeps no
// problem itself: Report receives each, so a caller may gather them all
// (the plan reports the first in the file) or stop at the first (the arms
// file).
type Reader struct {
	Pos    *Positions
	Report func(line int, msg string)
}

// Read is a file's first step: its key positions (refusing nesting deeper
// than MaxDepth, before the TOML library sees it) and its tables. A
// *SyntaxError or *TooDeep error names the line to fix.
func Read(src string) (map[string]any, *Positions, error) {
	pos, err := Scan(src)
	if err != nil {
		return nil, nil, err
	}
	var raw map[string]any
	if _, err := toml.Decode(src, &raw); err != nil {
		line, msg, _ := DecodeError(err)
		return nil, pos, &SyntaxError{Line: max(line, 1), Msg: msg}
	}
	return raw, pos, nil
}

// SyntaxError is a file that is not TOML, with the TOML library's reason.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return "this is not valid TOML (" + e.Msg + ")" }

// Refusal is a problem of Read with the line it names: a *SyntaxError's
// or a *TooDeep's; ok is false for any other error.
func Refusal(err error) (line int, msg string, ok bool) {
	var se *SyntaxError
	var deep *TooDeep
	switch {
	case errors.As(err, &se):
		return se.Line, se.Error(), true
	case errors.As(err, &deep):
		return deep.Line, deep.Error(), true
	}
	return 0, "", false
}

// Join is path with key appended, in a new slice.
func Join(path []string, key string) []string {
	return append(append(make([]string, 0, len(path)+1), path...), key)
}

// Line is the line of path (Positions.Line), 1 when there are none.
func (r *Reader) Line(path []string) int { return r.Pos.Line(path...) }

// At reports a problem on the line of path+key (of path when key is "").
func (r *Reader) At(path []string, key string, format string, a ...any) {
	p := path
	if key != "" {
		p = Join(path, key)
	}
	r.Report(r.Line(p), fmt.Sprintf(format, a...))
}

// SortedKeys orders a table's keys by their line, so problems and
// declarations follow the file.
func (r *Reader) SortedKeys(m map[string]any, path []string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		li, lj := r.Line(Join(path, keys[i])), r.Line(Join(path, keys[j]))
		if li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// Known reports every key of m that is not in allowed, in UnknownKey's
// words, first in the file first; it says whether all were known.
func (r *Reader) Known(m map[string]any, path []string, where string, allowed ...string) bool {
	all := true
	for _, k := range r.SortedKeys(m, path) {
		if !contains(allowed, k) {
			r.At(path, k, "%s", UnknownKey(k, where, allowed))
			all = false
		}
	}
	return all
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// Need reports, on path's line, a table that lacks key, in Missing's
// words; it says whether the key is written (of any kind: a wrong kind is
// its getter's refusal).
func (r *Reader) Need(m map[string]any, path []string, key, subject, what, example, where string) bool {
	if _, ok := m[key]; ok {
		return true
	}
	r.At(path, "", "%s", Missing(subject, what, example, where))
	return false
}

// Str reads a string; ok is false when key is absent or refused.
func (r *Reader) Str(m map[string]any, path []string, key, example string) (string, bool) {
	v, ok := m[key]
	if !ok {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		r.At(path, key, "%s", WrongKind(key, "a string", v, example))
		return "", false
	}
	return s, true
}

// Bool reads true or false.
func (r *Reader) Bool(m map[string]any, path []string, key, example string) (bool, bool) {
	v, ok := m[key]
	if !ok {
		return false, false
	}
	b, isBool := v.(bool)
	if !isBool {
		r.At(path, key, "%s", WrongKind(key, "true or false", v, example))
		return false, false
	}
	return b, true
}

// Int reads a whole number from lo to hi.
func (r *Reader) Int(m map[string]any, path []string, key, example string, lo, hi int64) (int64, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	n, isInt := v.(int64)
	switch {
	case !isInt:
		r.At(path, key, "%s", WrongKind(key, "a whole number", v, example))
	case n < lo || n > hi:
		r.At(path, key, "%s must be from %d to %d, not %d; write %s", key, lo, hi, n, example)
	default:
		return n, true
	}
	return 0, false
}

// Num reads a number (whole or not) no lower than lo, strictly above it
// when open, and no higher than hi.
func (r *Reader) Num(m map[string]any, path []string, key, example string, lo float64, open bool, hi float64) (float64, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		r.At(path, key, "%s", WrongKind(key, "a number", v, example))
		return 0, false
	}
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		r.At(path, key, "%s must be a finite number; write %s", key, example)
	case f < 0 && lo >= 0:
		r.At(path, key, "%s is negative (%s); write %s", key, fnum(f), example)
	case open && f <= lo:
		r.At(path, key, "%s must be above %s, not %s; write %s", key, fnum(lo), fnum(f), example)
	case f < lo:
		r.At(path, key, "%s must be at least %s, not %s; write %s", key, fnum(lo), fnum(f), example)
	case f > hi:
		r.At(path, key, "%s %s is beyond the limit of %s; write %s", key, fnum(f), fnum(hi), example)
	default:
		return f, true
	}
	return 0, false
}

func fnum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Dur reads a duration written as a string with its unit ("10s",
// "1m30s"), longer than zero when positive, at most limit.
func (r *Reader) Dur(m map[string]any, path []string, key, example string, positive bool, limit time.Duration) (time.Duration, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	s, isStr := v.(string)
	if !isStr {
		r.At(path, key, "%s", WrongKind(key, "a duration string with its unit", v, example))
		return 0, false
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		r.At(path, key, "%s %q is not a duration; write %s", key, s, example)
	case d < 0:
		r.At(path, key, "%s is negative (%s); write %s", key, s, example)
	case positive && d == 0:
		r.At(path, key, "%s must be longer than zero; write %s", key, example)
	case d > limit:
		r.At(path, key, "%s %s is beyond the limit of %s; write %s", key, s, shortDur(limit), example)
	default:
		return d, true
	}
	return 0, false
}

// shortDur writes 24h rather than 24h0m0s.
func shortDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Table reads a table.
func (r *Reader) Table(m map[string]any, path []string, key, example string) (map[string]any, bool) {
	v, ok := m[key]
	if !ok {
		return nil, false
	}
	t, isTable := v.(map[string]any)
	if !isTable {
		r.At(path, key, "%s", WrongKind(key, "a table", v, example))
		return nil, false
	}
	return t, true
}

// Tables reads an array of tables, written [[key]] or key = [{...}].
func (r *Reader) Tables(m map[string]any, path []string, key, example string) []map[string]any {
	v, ok := m[key]
	if !ok {
		return nil
	}
	switch a := v.(type) {
	case []map[string]any:
		return a
	case []any:
		out := make([]map[string]any, 0, len(a))
		for i, e := range a {
			t, isTable := e.(map[string]any)
			if !isTable {
				r.At(Join(path, key), strconv.Itoa(i), "%s", WrongKind("each "+key, "a table", e, example))
				return nil
			}
			out = append(out, t)
		}
		return out
	}
	r.At(path, key, "%s", WrongKind(key, "an array of tables", v, example))
	return nil
}
