package report_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/report/reporttest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run `go test ./internal/report -update` to make it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run with -update if the change is meant.\n--- got ---\n%s", path, got)
	}
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *report.Report
		code judge.Code
	}{
		{"pass", reporttest.Pass(), 0},
		{"regression", reporttest.Regression(), 1},
		{"cannot-judge", reporttest.CannotJudge(), 2},
		{"pooled-tail", reporttest.PooledTail(), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.r.Verdict.Code != tc.code {
				t.Fatalf("fixture verdict %d, want %d: %+v", tc.r.Verdict.Code, tc.code, tc.r.Verdict)
			}
			var md, txt bytes.Buffer
			if err := report.Markdown(&md, tc.r); err != nil {
				t.Fatal(err)
			}
			if err := report.Text(&txt, tc.r); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".md", md.Bytes())
			golden(t, tc.name+".txt", txt.Bytes())
		})
	}
}

// markdown renders r's job summary.
func markdown(t *testing.T, r *report.Report) string {
	t.Helper()
	var md bytes.Buffer
	if err := report.Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	return md.String()
}

func text(t *testing.T, r *report.Report) string {
	t.Helper()
	var txt bytes.Buffer
	if err := report.Text(&txt, r); err != nil {
		t.Fatal(err)
	}
	return txt.String()
}

func TestMarkdownHolds(t *testing.T) {
	s := markdown(t, reporttest.Regression())
	for _, want := range []string{
		"## ❌ perfgate: regression (exit 1)",
		"p50.search: the head is worse by 34.2 % over the pairs (medians 5.312 vs 3.921 ms; threshold 7.8 %), breaching in 4 of 4 pairs",
		"| rule | paired: the pairs' ratios head/base",
		"| groups compared | all 3 |",
		"| p95.search (ms) | 9.87 | 13.2 | 1.33 | +32.7 % |",
		"400 (20 beyond)",
		"| base | `4f1c2a9e8d7b` (main): the merge base",
		"| CPU | 0.40 % of one core | under 2.00 % | ok |",
		"| p50.search (ms) |",
		"4 of 4",
		"```mermaid\nxychart-beta",
		"bar [",
		"line [",
		"6 pairs reach 95 %",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
}

func TestRenderEdges(t *testing.T) {
	r := reporttest.Pass()
	in := &r.Input
	for i := range in.Base {
		in.Base[i].Values["tx_per_request"] = 0
		in.Head[i].Values["tx_per_request"] = 0.5
	}
	in.Base[3].Values["peak_memory"] *= 1.6
	in.Tolerance = map[string]float64{"latency": 0.25, "p99.search": 0.4}
	in.Idle = nil
	in.Metrics[1].ID = "p50.a|b"
	for i := range in.Base {
		in.Base[i].Values["p50.a|b"] = in.Base[i].Values["p50.search"]
		in.Head[i].Values["p50.a|b"] = in.Head[i].Values["p50.search"]
	}
	r.Verdict = judge.Judge(*in)
	r.Rejudged = true
	r.Attempt, r.CPUModel = 0, ""

	var md, txt bytes.Buffer
	if err := report.Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := report.Text(&txt, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## ❌ perfgate: regression (exit 1)",
		"_Judged again offline by `perfgate compare`, tolerances: latency 25 %, p99.search 40 %._",
		"- tx_per_request: the head rose from 0 to 0.5 tx, breaching in 4 of 4 pairs",
		"| tx_per_request (tx) | 0 | 0.500 | new (from 0) |",
		"tx_per_request: the base's median is 0, so there is no ratio; any rise from 0 breaches",
		"peak_memory: the pairs' ratios scatter so much",
		"so the threshold is that noise floor",
		"p99.search: tolerance 40 % set for this metric",
		"No idle phase ran.",
		`| p50.a\|b (ms) |`,
		`"a|b 1"`,
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if strings.Contains(md.String(), "latency: tolerance") || strings.Contains(md.String(), "p50.search: tolerance 25 %") {
		t.Errorf("a tolerance equal to the default got a note:\n%s", md.String())
	}
	if strings.Contains(md.String(), "| attempt |") {
		t.Error("attempt row without an attempt")
	}
	for _, want := range []string{"perfgate: regression (exit 1)", "judged again offline", "new (from 0)", "tx_per_request: the head rose from 0"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	for _, line := range strings.Split(txt.String(), "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("trailing space in %q", line)
		}
	}
}

// A wrong status stands over phases that cannot be judged: the summary says
// both without calling the run meaningless.
func TestMarkdownRegressionOverCannotJudge(t *testing.T) {
	r := reporttest.CannotJudge()
	r.Input.Head[2].Groups[0].Unexpected = map[string]uint64{"500": 20}
	r.Verdict = judge.Judge(r.Input)
	if r.Verdict.Code != judge.Regression || len(r.Verdict.CannotJudge) == 0 {
		t.Fatalf("verdict %d with cannot-judge reasons %q, want a regression that keeps them", r.Verdict.Code, r.Verdict.CannotJudge)
	}
	s := markdown(t, r)
	for _, want := range []string{
		"## ❌ perfgate: regression (exit 1)",
		"**The load phases cannot be judged**, but the failures below stand whatever the runner did:",
		"answers the plan does not name (500 x20)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if strings.Contains(s, "this run says nothing about the code") {
		t.Error("a regression's summary says the run says nothing about the code")
	}
}

// The summary always lists the groups left out, and the thresholds with
// their outcome; the terminal summary too.
func TestRenderLeftOutAndThresholds(t *testing.T) {
	r := reporttest.Pass()
	in := &r.Input
	for i := range in.Base {
		g := &in.Base[i].Groups[2]
		g.WrongStatus, g.Halves = map[int]uint64{404: g.Requests}, [2]judge.Half{}
	}
	var ms []judge.Metric
	for _, m := range in.Metrics {
		if _, g, ok := judge.SplitLatencyID(m.ID); !ok || g != "metadata" {
			ms = append(ms, m)
		}
	}
	in.Metrics = ms
	in.Thresholds = []judge.Threshold{{Line: 31, Metric: "p90", Group: "search", Side: "client", BelowMS: 5, Value: 7.5, Samples: 1600}}
	r.Verdict = judge.Judge(*in)
	md, txt := markdown(t, r), text(t, r)
	for _, want := range []string{
		"| groups compared | 2 of 3; 1 left out (below) |",
		"### Groups left out\n\n- group metadata not compared: base had no answer as the plan says in 4 of 4 phases (answered 404 x1600)",
		"### Thresholds",
		"| 31 | threshold (plan line 31): p90 of group search is 7.5 ms over 1600 answers, must be under 5 ms | **FAIL** |",
		"- head: threshold (plan line 31)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	for _, want := range []string{"groups compared  2 of 3", "groups left out:\n  - group metadata not compared", "thresholds:\n  - threshold (plan line 31)"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
}

// An adaptive gate whose pairs already failed it skips its idle phase:
// the run line still gives the plan's idle time, and says it did not run.
func TestIdlePhaseNotRunSaysSo(t *testing.T) {
	r := reporttest.Regression()
	r.Settings.Idle = report.Duration(time.Minute)
	for _, ran := range []bool{false, true} {
		r.Verdict.Idle = nil
		if ran {
			r.Verdict.Idle = &judge.IdleResult{Idle: judge.Idle{Seconds: 60, CPULimit: judge.DefaultIdleCPU, TxLimit: judge.DefaultIdleTx}}
		}
		var md, txt bytes.Buffer
		if err := report.Markdown(&md, r); err != nil {
			t.Fatal(err)
		}
		if err := report.Text(&txt, r); err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]string{"markdown": md.String(), "text": txt.String()} {
			if got := strings.Contains(out, "idle phase 60s (not run: see the notes)"); got == ran || !strings.Contains(out, "idle phase 60s") {
				t.Errorf("idle ran %v: the %s run line says %q", ran, name, lineWith(out, "idle phase"))
			}
		}
	}
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
