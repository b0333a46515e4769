package plan

import "strings"

// A template is text cut at its {name} placeholders. Only {identifier} is a
// placeholder, so JSON bodies keep their braces as written; {{name}} writes
// a literal {name}.
type segment struct {
	lit  string // literal text, when name is ""
	name string
	src  int // the data source's index, once bound by Source
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

func parseTemplate(s string) template {
	var t template
	var lit strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '{' {
			lit.WriteByte(s[i])
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "{{") {
			if end := strings.Index(s[i+2:], "}}"); end >= 0 && isIdent(s[i+2:i+2+end]) {
				lit.WriteString("{" + s[i+2:i+2+end] + "}")
				i += end + 4
				continue
			}
		}
		if end := strings.IndexByte(s[i+1:], '}'); end >= 0 && isIdent(s[i+1:i+1+end]) {
			if lit.Len() > 0 {
				t = append(t, segment{lit: lit.String()})
				lit.Reset()
			}
			t = append(t, segment{name: s[i+1 : i+1+end]})
			i += end + 2
			continue
		}
		lit.WriteByte(s[i])
		i++
	}
	if lit.Len() > 0 {
		t = append(t, segment{lit: lit.String()})
	}
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
