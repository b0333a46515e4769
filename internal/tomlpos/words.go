package tomlpos

import (
	"fmt"
	"strings"
)

// The wordings every TOML file of perfgate refuses with (the plan, the gate
// contract, the arms file), written once so a user reads one language
// whichever file holds the mistake.

// UnknownKey refuses a key where allowed are the keys: it names the near
// miss when the key looks like a typo of one, else every key.
func UnknownKey(key, where string, allowed []string) string {
	if n := Nearest(key, allowed); n != "" {
		return fmt.Sprintf("unknown key %q in %s; did you mean %q?", key, where, n)
	}
	return fmt.Sprintf("unknown key %q in %s; the keys are %s", key, where, strings.Join(allowed, ", "))
}

// WrongKind refuses a value of the wrong kind: "port must be a whole
// number, not a string; write port = 8080". want is one of Kind's words
// or a fuller phrase ("an array of words"); example may be empty.
func WrongKind(key, want string, v any, example string) string {
	msg := fmt.Sprintf("%s must be %s, not %s", key, want, Kind(v))
	if example != "" {
		msg += "; write " + example
	}
	return msg
}

// Missing refuses a table that lacks a key it needs: "this stage has no
// duration; write duration = "30s" under its [[load.stage]]". what names
// the key's meaning (a target rate), where the table's header.
func Missing(subject, what, example, where string) string {
	return fmt.Sprintf("%s has no %s; write %s under its %s", subject, what, example, where)
}

// Nearest suggests the known word closest to w, when one is close enough
// to be the typo it probably is; "" otherwise.
func Nearest(w string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(strings.ToLower(w), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" && bestD >= len(w) {
		return ""
	}
	return best
}

// OneOf names the fix for an unknown word: the near miss, or every
// choice, each written with format ("%s" or `"%s"`).
func OneOf(w string, known []string, format string) string {
	if n := Nearest(w, known); n != "" {
		return fmt.Sprintf(format, n)
	}
	quoted := make([]string, len(known))
	for i, k := range known {
		quoted[i] = fmt.Sprintf(format, k)
	}
	return "one of " + strings.Join(quoted, ", ")
}

// distance is the edit distance of a and b; words longer than any key
// are never near (the cost stays linear in the input).
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// OneLine escapes control characters a message quotes from the input, so
// a refusal stays one line whatever the file held.
func OneLine(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u2028' || r == '\u2029'
}
