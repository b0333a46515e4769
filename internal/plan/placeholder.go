package plan

import "strings"

// A template is text cut at its {name} placeholders. Only {identifier} is a
// placeholder, so JSON bodies keep their braces as written; {{name}} writes
// a literal {name}.
type segment struct {
	lit    string // literal text, when name is ""
	name   string
	src    int  // the data source's index, once bound by Source
	inPath bool // the value goes into the request line: see targetSafe
}

type template []segment

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// parseTemplate cuts s at its placeholders. Literal segments are slices of
// s, never copies, so a large body (a body_file) is held once however many
// groups name it.
func parseTemplate(s string) template {
	var t template
	lit := 0 // start of the literal text not yet in t
	flush := func(end int) {
		if end > lit {
			t = append(t, segment{lit: s[lit:end]})
		}
	}
	for i := 0; i < len(s); {
		if s[i] != '{' {
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "{{") {
			if end := strings.Index(s[i+2:], "}}"); end >= 0 && isIdent(s[i+2:i+2+end]) {
				// {{name}} is the literal {name}: the slice without the
				// outer braces.
				flush(i)
				t = append(t, segment{lit: s[i+1 : i+3+end]})
				i += end + 4
				lit = i
				continue
			}
		}
		if end := strings.IndexByte(s[i+1:], '}'); end >= 0 && isIdent(s[i+1:i+1+end]) {
			flush(i)
			t = append(t, segment{name: s[i+1 : i+1+end]})
			i += end + 2
			lit = i
			continue
		}
		i++
	}
	flush(len(s))
	return t
}

// names lists the placeholders in order of first use.
func (t template) names() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range t {
		if s.name != "" && !seen[s.name] {
			seen[s.name] = true
			out = append(out, s.name)
		}
	}
	return out
}

// placeholderLine is the 1-based line of the first {name} in s, for body
// files whose refusals name their own lines.
func placeholderLine(s, name string) int {
	i := strings.Index(s, "{"+name+"}")
	if i < 0 {
		return 1
	}
	return strings.Count(s[:i], "\n") + 1
}

// targetSafe percent-encodes the bytes of a value that cannot stand in a
// request line (space, controls, non-ASCII, '#', quotes and the like), so a
// drawn identifier such as "Jane Doe" or "café" still makes a valid request.
// Everything RFC 3986 allows in a path or query, '/', '?', '&', '=' and '%'
// included, is kept: a data file of whole paths, or of values encoded
// already, is sent as written.
func targetSafe(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !targetByte(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		if c := s[i]; targetByte(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return string(b)
}

func targetByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~:/?[]@!$&'()*+,;=%", c) >= 0
}
