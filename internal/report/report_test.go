package report_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/report/reporttest"
)

// TestJSONGolden pins the report format: the fixtures as Write stores them,
// and Read giving back exactly what was written.
func TestJSONGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *report.Report
	}{{"pass", reporttest.Pass()}, {"regression", reporttest.Regression()}, {"cannot-judge", reporttest.CannotJudge()}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "report.json")
			if err := report.Write(path, tc.r); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".json", b)
			got, err := report.Read(filepath.Join("testdata", tc.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.r) {
				t.Errorf("read back differs from what was written:\n got %+v\nwant %+v", got, tc.r)
			}
		})
	}
}

func TestWriteSetsVersionAndLeavesNoTempFile(t *testing.T) {
	dir := t.TempDir()
	r := reporttest.Pass()
	r.Version = 0
	path := filepath.Join(dir, "latest.json")
	if err := report.Write(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := report.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != report.Version {
		t.Errorf("version %d, want %d", got.Version, report.Version)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only the report", len(entries))
	}
	if err := report.Write(filepath.Join(dir, "missing", "x.json"), r); err == nil || !strings.Contains(err.Error(), "writing report") {
		t.Errorf("writing into a missing folder: %v", err)
	}
}

func TestReadRefuses(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{name: "future version", content: `{"version": 2, "tool": "perfgate v9.0.0", "input": {"metrics": "changed"}}`,
			want: "it is a version 2 report (written by perfgate v9.0.0) and this perfgate reads up to version 1: judge it with that perfgate or a newer one"},
		{name: "no version", content: `{"tool": "x"}`, want: `no "version" field, so this is not a perfgate report`},
		{name: "version zero", content: `{"version": 0}`, want: "version 0 is no report version"},
		{name: "not JSON", content: "pairs = 4\n", want: "line 1: invalid character"},
		{name: "cut short", content: "{\n  \"version\": 1,\n  \"input\": {\n", want: "unexpected end of JSON input"},
		{name: "wrong type", content: "{\n  \"version\": 1,\n  \"settings\": {\"pairs\": \"four\"}\n}", want: "line 3: json: cannot unmarshal string"},
		{name: "bad duration", content: `{"version": 1, "settings": {"warmup": "ten"}}`, want: `duration "ten": write it like 10s`},
		{name: "empty", content: "", want: "unexpected end of JSON input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.json")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := report.Read(path)
			if err == nil || exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("err %v (exit %d), want exit 2 naming %s and holding %q", err, exit.Code(err), path, tc.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, err := report.Read(filepath.Join(t.TempDir(), "nope.json"))
		if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), "nope.json") {
			t.Errorf("err %v", err)
		}
	})
}

// A report written before the paired rule names no rule; the medians rule
// (FerroFED's gate's) judged it, so reading it keeps that rule and judging
// it again gives its own verdict back (perfgate compare on an old report).
func TestReadOldReportKeepsTheMediansRule(t *testing.T) {
	r, err := report.Read(filepath.Join("testdata", "v1-seed-rule.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Input.Rule != judge.RuleMedians {
		t.Fatalf("rule %q, want %q for a report that names none", r.Input.Rule, judge.RuleMedians)
	}
	v := judge.Judge(r.Input)
	if v.Code != r.Verdict.Code || !reflect.DeepEqual(v.Failures, r.Verdict.Failures) {
		t.Errorf("judged again: %v %q, the report's own: %v %q", v.Code, v.Failures, r.Verdict.Code, r.Verdict.Failures)
	}
}

// A report with a variant arm and the controls' outcome reads back as it
// was written, its summaries name the variant arm, and a report without
// them (every report before them) still reads, with no controls to apply.
func TestVariantAndControlsRoundTrip(t *testing.T) {
	r := reporttest.Pass()
	r.Variant = &report.Build{Name: "variant", Commit: r.Head.Commit, Overrides: []string{"EXAMPLED_TOKEN_CACHE=false"}}
	counter := judge.CounterResult{Counter: "exchanges", Arm: "variant", Sent: 200, Before: 3, After: 203, MaxPerRequest: 0.05, Fail: true}
	r.Controls = &judge.Controls{Variant: &counter, Writes: []judge.WritesResult{{Group: "create", Table: "items", Answers: 40, Writes: 44}}}
	r.Controls.AddControl(counter.Fail, "variant control: "+counter.Line())
	path := filepath.Join(t.TempDir(), "latest.json")
	if err := report.Write(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := report.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Variant, r.Variant) || !reflect.DeepEqual(got.Controls, r.Controls) {
		t.Fatalf("read back: variant %+v, controls %+v", got.Variant, got.Controls)
	}
	var text, md strings.Builder
	if err := report.Text(&text, got); err != nil {
		t.Fatal(err)
	}
	if err := report.Markdown(&md, got); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{text.String(), md.String()} {
		if !strings.Contains(out, "variant") || !strings.Contains(out, "EXAMPLED_TOKEN_CACHE=false") {
			t.Errorf("the summary does not name the variant arm:\n%s", out)
		}
	}
	old, err := report.Read(filepath.Join("testdata", "pass.json"))
	if err != nil {
		t.Fatal(err)
	}
	if old.Variant != nil || old.Controls != nil {
		t.Errorf("a report from before the controls reads as %+v / %+v", old.Variant, old.Controls)
	}
}

// One sign per exit code, for the job summary and the verdict job's summary
// alike; a code no verdict has gets none.
func TestMark(t *testing.T) {
	for _, tc := range []struct {
		code int
		want string
	}{
		{exit.Pass, "✅"}, {exit.Regression, "❌"}, {exit.CannotJudge, "⚠️"}, {7, ""},
	} {
		if got := report.Mark(tc.code); got != tc.want {
			t.Errorf("Mark(%d) = %q, want %q", tc.code, got, tc.want)
		}
	}
}
