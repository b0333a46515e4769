package report_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
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
		{name: "future version", content: `{"version": 3, "tool": "perfgate v9.0.0", "input": {"metrics": "changed"}}`,
			want: "it is a version 3 report (written by perfgate v9.0.0) and this perfgate reads up to version 2: judge it with that perfgate or a newer one"},
		{name: "bad histogram", content: `{"version": 2, "input": {"base": [{"groups": [{"name": "g", "latency_histogram": "bm90IGEgaGlzdG9ncmFt"}]}]}}`,
			want: "reading a latency histogram: "},
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

// Reports from before version 2 keep no histograms: they still read, and
// judged again (what `perfgate compare` does) their verdict and failures
// are their own, the tails judged phase by phase as they were, with a
// note that says so.
func TestReadVersion1ReportJudgesTailsPhaseByPhase(t *testing.T) {
	for _, name := range []string{"v1-paired-pass.json", "v1-paired-regression.json"} {
		t.Run(name, func(t *testing.T) {
			r, err := report.Read(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			if r.Version != 1 || r.Input.Rule != judge.RulePaired {
				t.Fatalf("version %d rule %q, want a version 1 report of the paired rule", r.Version, r.Input.Rule)
			}
			v := judge.Judge(r.Input)
			if v.Code != r.Verdict.Code || !reflect.DeepEqual(v.Failures, r.Verdict.Failures) {
				t.Errorf("judged again: %v %q, the report's own: %v %q", v.Code, v.Failures, r.Verdict.Code, r.Verdict.Failures)
			}
			for _, m := range v.Metrics {
				if m.Tail != nil {
					t.Errorf("%s judged pooled from a report without histograms", m.ID)
				}
			}
			want := "p95.search, p95.patient, p95.metadata, p99.search, p99.patient, p99.metadata judged phase by phase, not pooled over the pairs: " + judge.NoHistograms
			if !slices.Contains(v.Notes, want) {
				t.Errorf("notes %q, want one saying %q", v.Notes, want)
			}
		})
	}
}

// A version 2 report keeps each phase's histograms, client side and
// server side, and reads them back as they were recorded.
func TestHistogramsRoundTrip(t *testing.T) {
	r := reporttest.Pass()
	client, server := load.NewHistogram(), load.NewHistogram()
	for i := range 300 {
		client.RecordValue(int64(900 + 7*i))
		server.RecordValue(int64(400 + 3*i))
	}
	g := &r.Input.Base[0].Groups[0]
	g.Latency, g.Server = judge.NewHistogram(client), judge.NewHistogram(server)
	path := filepath.Join(t.TempDir(), "latest.json")
	if err := report.Write(path, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"latency_histogram": "HISTFAA`) || !strings.Contains(string(b), `"server_histogram": "HISTFAA`) {
		t.Errorf("the histograms are not kept as HdrHistogram's base64 V2 encoding:\n%.2000s", b)
	}
	got, err := report.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	rg := got.Input.Base[0].Groups[0]
	for _, p := range []float64{50, 95, 99, 100} {
		if rg.Latency.Percentile(p) != g.Latency.Percentile(p) || rg.Server.Percentile(p) != g.Server.Percentile(p) {
			t.Errorf("p%v read back as %v and %v ms, written %v and %v", p, rg.Latency.Percentile(p), rg.Server.Percentile(p), g.Latency.Percentile(p), g.Server.Percentile(p))
		}
	}
	if rg.Latency.Count() != 300 || got.Input.Base[1].Groups[0].Latency != nil {
		t.Errorf("read back %d answers in the kept histogram (want 300) and a histogram where none was written", rg.Latency.Count())
	}
}

// A version 2 report judged again (perfgate compare) reads its histograms
// back and judges its tails pooled, as the gate did: the same verdict, the
// same figures.
func TestVersion2ReportJudgesTailsPooledAgain(t *testing.T) {
	r := reporttest.PooledTail()
	path := filepath.Join(t.TempDir(), "latest.json")
	if err := report.Write(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := report.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	v := judge.Judge(got.Input)
	if v.Code != judge.Regression || !reflect.DeepEqual(v.Failures, r.Verdict.Failures) {
		t.Fatalf("judged again: %v %q, the gate's own: %v %q", v.Code, v.Failures, r.Verdict.Code, r.Verdict.Failures)
	}
	for i, m := range v.Metrics {
		want := r.Verdict.Metrics[i]
		if (m.Tail == nil) != (want.Tail == nil) || m.Tail != nil && (m.Worse != want.Worse || m.Floor != want.Floor || m.CI != want.CI) {
			t.Errorf("%s judged again: tail %+v, the gate's own %+v", m.ID, m.Tail, want.Tail)
		}
	}
	if p99 := v.Metrics[3]; p99.ID != "p99.search" || p99.Tail == nil || !p99.Fail {
		t.Errorf("p99.search judged again: %+v", p99)
	}
}
