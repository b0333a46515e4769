package plan

import (
	"reflect"
	"strings"
	"testing"
)

func TestPositions(t *testing.T) {
	src := `top = 1 # comment with [brackets] and key = 2
"quoted.key" = 'x'
[a.b]
c = """
fake = 1
[fake]
"""
d = [
  1,
  { e = 2, 'f.g' = 3 },
]
[[arr]]
x = 1
[[arr]]
y = { z = "}" }
[arr.sub]
w = 'it''s'
[[arr.list]]
v = 1
[[arr]]
`
	p := scanPositions(src)
	for path, want := range map[string]int{
		"top": 1, "quoted.key": 2, "a": 3, "a/b": 3, "a/b/c": 4, "a/b/d": 8, "a/b/d/0": 9, "a/b/d/1": 10,
		"a/b/d/1/e": 10, "a/b/d/1/f.g": 10, "arr/0": 12, "arr/0/x": 13, "arr/1": 14, "arr/1/y/z": 15,
		"arr/1/sub": 16, "arr/1/sub/w": 17, "arr/1/list/0": 18, "arr/1/list/0/v": 19, "arr/2": 20,
	} {
		if got := p.line(strings.Split(path, "/")); got != want {
			t.Errorf("%s: line %d, want %d", path, got, want)
		}
	}
	for _, absent := range []string{"fake", "a/b/fake"} {
		if _, ok := p.lines[pathKey(strings.Split(absent, "/"))]; ok {
			t.Errorf("%s was recorded from inside a multi-line string", absent)
		}
	}
}

func TestTemplates(t *testing.T) {
	for _, tc := range []struct {
		in    string
		names []string
		lits  string
	}{
		{"/items/{id}?q={q_2}", []string{"id", "q_2"}, "/items/?q="},
		{`{"a": {"b": {}}, "c": "{ x }"}`, nil, `{"a": {"b": {}}, "c": "{ x }"}`},
		{"{{id}} {id} {{ {}", []string{"id"}, "{id}  {{ {}"},
		{"{9x}{", nil, "{9x}{"},
		{"", nil, ""},
	} {
		tm := parseTemplate(tc.in)
		if got := tm.names(); !reflect.DeepEqual(got, tc.names) {
			t.Errorf("%q: names %v, want %v", tc.in, got, tc.names)
		}
		var lits strings.Builder
		for _, s := range tm {
			lits.WriteString(s.lit)
		}
		if lits.String() != tc.lits {
			t.Errorf("%q: literal text %q, want %q", tc.in, lits.String(), tc.lits)
		}
	}
}
