package plan

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

// TestDeepPlanRefused: a plan of 3,200 nested inline tables (19 KB) took
// 42 s and 505 MB to read; it is now refused at once, naming its line,
// before the TOML library (whose time grows with the square of the
// nesting) sees it.
func TestDeepPlanRefused(t *testing.T) {
	src := "[[group]]\nname = \"a\"\npath = \"/\"\nexpect = 200\nheaders = " +
		strings.Repeat("{b = ", 3200) + "1" + strings.Repeat("}", 3200) + "\n"
	began := time.Now()
	_, err := Parse("perf/plan.toml", []byte(src))
	took := time.Since(began)
	t.Logf("a %d-byte plan nested 3,200 deep refused in %s", len(src), took)
	if err == nil || exit.Code(err) != exit.CannotJudge {
		t.Fatalf("a plan nested 3,200 deep: %v", err)
	}
	if want := "perf/plan.toml:5: keys and values nest more than 16 levels deep here"; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("refusal %q, want it to start %q", err, want)
	}
	if took > time.Second {
		t.Fatalf("refusing it took %s", took)
	}
	if p, err := Parse("perf/plan.toml", []byte("[[group]]\nname = \"a\"\npath = \"/\"\nexpect = [200]\nheaders = { A = \"b\" }\n")); err != nil || p.Line("group", "0", "headers", "A") != 5 {
		t.Fatalf("a plain plan: %v", err)
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
