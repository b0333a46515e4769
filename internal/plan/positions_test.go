package plan

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
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

// TestMetricLine: a breaching metric's annotation points at the plan line
// its judgement came from: the tolerance key that applied (the metric's
// own before its class's), else its group's [[group]] header, else 0 for
// the caller's fallback; a threshold keeps its own [[threshold]] line.
func TestMetricLine(t *testing.T) {
	src := `[tolerance]
cpu = 30
"p99.search" = 40

[[threshold]]
group = "search"
metric = "p90"
below = "150ms"

[[group]]
name = "hello"
path = "/hello"
expect = 200

[[group]]
name = "search"
path = "/search"
expect = 200
`
	p, err := Parse("perf/plan.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id    string
		class judge.Class
		line  int
	}{
		{"p99.search", judge.Latency, 3},    // its own tolerance key
		{"p50.search", judge.Latency, 15},   // no key: the search group's header
		{"p99.hello", judge.Latency, 10},    // the hello group's header
		{"cpu_per_request", judge.CPU, 2},   // its class's key
		{"peak_memory", judge.Memory, 0},    // nothing written: the caller's fallback
		{"p99.gone", judge.Latency, 0},      // a group the plan does not have
		{"throughput", judge.Throughput, 0}, // "throughput" is no group
	} {
		if got := p.MetricLine(tc.id, tc.class); got != tc.line {
			t.Errorf("MetricLine(%s) = %d, want %d", tc.id, got, tc.line)
		}
	}
	lines := p.MetricLines([]judge.Metric{{ID: "p99.search", Class: judge.Latency}, {ID: "peak_memory", Class: judge.Memory}})
	if !reflect.DeepEqual(lines, map[string]int{"p99.search": 3}) {
		t.Errorf("MetricLines = %v", lines)
	}
	if len(p.Thresholds) != 1 || p.Thresholds[0].Line != 5 {
		t.Errorf("thresholds %+v, want one at line 5", p.Thresholds)
	}
	// A plan with no tolerance table and no positions (Default) has no
	// line for anything.
	if got := Default().MetricLine("p99.search", judge.Latency); got != 0 {
		t.Errorf("Default().MetricLine = %d", got)
	}
}
