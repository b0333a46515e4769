package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/report/reporttest"
)

// The -update flag may be registered by another test file of this
// package; package variables initialise before init, so this only adds it
// when nobody did.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// compareFixture is the path of a committed report, rewritten from
// reporttest with -update, so compare is tested on files as a gate wrote
// them rather than on structs that never touched the disk.
func compareFixture(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join("testdata", "compare", name+".json")
	if updating() {
		r := map[string]*report.Report{"pass": reporttest.Pass(), "regression": reporttest.Regression(), "cannot-judge": reporttest.CannotJudge()}[name]
		if err := report.Write(path, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("fixture missing (run `go test ./internal/cli -run Compare -update`): %v", err)
	}
	return path
}

func runCompareCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCommand(t, nil, append([]string{"compare"}, args...)...)
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		args    []string
		code    int
		out     []string
		stderr  string
	}{
		{name: "pass", fixture: "pass", code: 0, out: []string{"perfgate: pass (exit 0)", "judged again offline; tolerances: the defaults", "cpu_per_request     ms   1.57   1.88   1.20"}},
		{name: "regression", fixture: "regression", code: 1,
			out:    []string{"perfgate: regression (exit 1)", "p50.search: the head is worse by 35.5 %", "FAIL"},
			stderr: "perfgate: regression: p50.search: the head is worse by 35.5 %"},
		{name: "cannot judge", fixture: "cannot-judge", code: 2,
			out:    []string{"perfgate: cannot judge (exit 2)", "pair 2: the head stalled"},
			stderr: "perfgate: cannot judge: pair 2: the head stalled"},
		{name: "looser latency flips a regression to a pass", fixture: "regression", args: []string{"--tolerance", "latency=40"}, code: 0,
			out: []string{"perfgate: pass (exit 0)", "tolerances: latency 40 %", "The report's own verdict was regression (exit 1); judged again it is pass (exit 0).", "p50.search: tolerance 40 % set for this class (latency)"}},
		{name: "one metric tighter flips a pass to a regression", fixture: "pass", args: []string{"--tolerance", "cpu_per_request=10%"}, code: 1,
			out:    []string{"perfgate: regression (exit 1)", "cpu_per_request: the head is worse by 20.1 %", "judged again it is regression (exit 1)"},
			stderr: "cpu_per_request"},
		{name: "metric beats class", fixture: "regression", args: []string{"--tolerance", "latency=40", "--tolerance", "p95.search=30"}, code: 1,
			out: []string{"p95.search: the head is worse by 33.3 %", "tolerances: latency 40 %, p95.search 30 %"}},
		{name: "tolerances do not clear a cannot judge", fixture: "cannot-judge", args: []string{"--tolerance", "latency=100"}, code: 2,
			out: []string{"perfgate: cannot judge (exit 2)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runCompareCmd(t, append([]string{"--report", compareFixture(t, tc.fixture)}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, stderr)
			}
			for _, want := range tc.out {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			if tc.stderr != "" && !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tc.stderr)
			}
		})
	}
}

func TestCompareWritesSummaryAndReport(t *testing.T) {
	dir := t.TempDir()
	md, js := filepath.Join(dir, "summary.md"), filepath.Join(dir, "again.json")
	_, _, code := runCompareCmd(t, "--report", compareFixture(t, "regression"), "--tolerance", "latency=40", "--summary", md, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## ✅ perfgate: pass (exit 0)", "_Judged again offline by `perfgate compare`, tolerances: latency 40 %._", "| p50.search (ms) | 3.92 | 5.31 | 1.35 | +35.5 % | 40 % |", "xychart-beta"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary lacks %q:\n%s", want, b)
		}
	}
	r, err := report.Read(js)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Rejudged || r.Verdict.Code != 0 || r.Input.Tolerance["latency"] != 0.4 {
		t.Errorf("written report: rejudged %v code %d tolerance %v", r.Rejudged, r.Verdict.Code, r.Input.Tolerance)
	}
	// Judging the written report again with no override keeps its tolerances.
	out, _, code := runCompareCmd(t, "--report", js)
	if code != 0 || !strings.Contains(out, "tolerances: latency 40 %") {
		t.Errorf("second compare exit %d:\n%s", code, out)
	}
}

func TestCompareRefuses(t *testing.T) {
	future := filepath.Join(t.TempDir(), "future.json")
	if err := os.WriteFile(future, []byte(`{"version": 7, "tool": "perfgate v3.1.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	loadReport := filepath.Join(t.TempDir(), "load.json")
	if err := os.WriteFile(loadReport, []byte(`{"version": 1, "kind": "perfgate.load", "target": "http://127.0.0.1:1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "a load report", args: []string{"--report", loadReport}, want: "is a `perfgate load` report (kind \"perfgate.load\"): it measured one target and holds no base and head to judge"},
		{name: "no report", args: nil, want: "give the report to judge: perfgate compare --report target/perf/latest.json"},
		{name: "missing file", args: []string{"--report", "testdata/compare/nope.json"}, want: "nope.json: no such file"},
		{name: "future version", args: []string{"--report", future}, want: "it is a version 7 report (written by perfgate v3.1.0) and this perfgate reads up to version 2"},
		{name: "tolerance without value", args: []string{"--report", "testdata/compare/pass.json", "--tolerance", "latency"}, want: "write KEY=PERCENT"},
		{name: "tolerance not a number", args: []string{"--report", "testdata/compare/pass.json", "--tolerance", "latency=lots"}, want: "the tolerance is a percentage of 0 or more, e.g. latency=30"},
		{name: "negative tolerance", args: []string{"--report", "testdata/compare/pass.json", "--tolerance", "cpu=-5"}, want: "percentage of 0 or more"},
		{name: "unknown key", args: []string{"--report", "testdata/compare/pass.json", "--tolerance", "p99.serch=40"}, want: `"p99.serch" is no class and no metric of this report; the classes are throughput, latency, cpu, memory, transactions and the metrics throughput, p50.search`},
		{name: "stray argument", args: []string{"--report", "testdata/compare/pass.json", "extra"}, want: `unexpected argument "extra"`},
		{name: "unknown flag", args: []string{"--tolerances", "x"}, want: "flag provided but not defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runCompareCmd(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d stderr %q, want exit 2 holding %q", code, stderr, tc.want)
			}
			if out != "" {
				t.Errorf("printed a summary on refused input:\n%s", out)
			}
		})
	}
}
