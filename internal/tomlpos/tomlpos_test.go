package tomlpos

import (
	"errors"
	"strings"
	"testing"
	"time"
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
	p, err := Scan(src)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		"top": 1, "quoted.key": 2, "a": 3, "a/b": 3, "a/b/c": 4, "a/b/d": 8, "a/b/d/0": 9, "a/b/d/1": 10,
		"a/b/d/1/e": 10, "a/b/d/1/f.g": 10, "arr/0": 12, "arr/0/x": 13, "arr/1": 14, "arr/1/y/z": 15,
		"arr/1/sub": 16, "arr/1/sub/w": 17, "arr/1/list/0": 18, "arr/1/list/0/v": 19, "arr/2": 20,
	} {
		if got := p.Line(strings.Split(path, "/")...); got != want {
			t.Errorf("%s: line %d, want %d", path, got, want)
		}
	}
	for _, absent := range []string{"fake", "a/b/fake"} {
		if _, ok := p.Lookup(strings.Split(absent, "/")...); ok {
			t.Errorf("%s was recorded from inside a multi-line string", absent)
		}
	}
	if got := p.Line("nowhere", "at", "all"); got != 1 {
		t.Errorf("an unwritten path: line %d, want 1", got)
	}
}

func TestTooDeep(t *testing.T) {
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	for _, tc := range []struct {
		name string
		src  string
		line int // 0: accepted
	}{
		{"inline tables at the limit", "\na = " + nest("{b = ", "}", MaxDepth-1) + "\n", 0},
		{"inline tables past it", "\n\na = " + nest("{b = ", "}", MaxDepth) + "\n", 3},
		{"arrays past it", "x = 1\na = " + nest("[", "]", MaxDepth+1) + "\n", 2},
		{"a dotted key past it", "a" + strings.Repeat(".a", MaxDepth) + " = 1\n", 1},
		{"a table header past it", "\n[a" + strings.Repeat(".a", MaxDepth) + "]\n", 2},
		{"keyless braces", "a = " + strings.Repeat("{= ", 40) + "\n", 1},
		{"a plan's deepest", "[[group]]\nheaders = { Accept = \"x\" }\nexpect = [200, [1]]\n", 0},
	} {
		_, err := Scan(tc.src)
		var deep *TooDeep
		switch {
		case tc.line == 0 && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.line > 0 && !errors.As(err, &deep):
			t.Errorf("%s: accepted (%v)", tc.name, err)
		case tc.line > 0 && deep.Line != tc.line:
			t.Errorf("%s: refused at line %d, want %d", tc.name, deep.Line, tc.line)
		}
	}
}

// TestLinear: 3,200 nested inline tables (a 19 KB file) once took the
// plan's scanner 42 s and 505 MB; now it is refused at once, and a large
// flat file is scanned in time proportional to its size.
func TestLinear(t *testing.T) {
	deep := "a = " + strings.Repeat("{b = ", 3200) + "1" + strings.Repeat("}", 3200) + "\n"
	began := time.Now()
	if _, err := Scan(deep); err == nil {
		t.Fatal("3,200 nested inline tables were accepted")
	}
	if took := time.Since(began); took > time.Second {
		t.Fatalf("refusing 3,200 nested tables took %s", took)
	}
	var flat strings.Builder
	for i := 0; i < 20000; i++ {
		flat.WriteString("[[group]]\nname = \"g\"\nheaders = { A = \"1\", B = { c = [1, 2, { d = 3 }] } }\n")
	}
	began = time.Now()
	p, err := Scan(flat.String())
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	t.Logf("scanned %d bytes (20,000 groups) in %s", flat.Len(), took)
	if took > 5*time.Second {
		t.Fatalf("scanning %d bytes took %s", flat.Len(), took)
	}
	if got := p.Line("group", "19999", "headers", "B", "c", "2", "d"); got != 3*19999+3 {
		t.Errorf("the last group's d: line %d, want %d", got, 3*19999+3)
	}
}

// FuzzScan: any text scans without a panic or a stall, and a refusal names
// a line of the text.
func FuzzScan(f *testing.F) {
	f.Add("a = {b = {c = 1}}\n[[x]]\ny = [1, [2]]\n")
	f.Add("a = \"\"\"\n[x]\n\"\"\"\n")
	f.Add("a = " + strings.Repeat("[", 20) + "\n")
	f.Fuzz(func(t *testing.T, src string) {
		_, err := Scan(src)
		var deep *TooDeep
		if err != nil && (!errors.As(err, &deep) || deep.Line < 1 || deep.Line > strings.Count(src, "\n")+1) {
			t.Fatalf("refusal %v for a text of %d lines", err, strings.Count(src, "\n")+1)
		}
	})
}
