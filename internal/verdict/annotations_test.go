package verdict_test

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/report/reporttest"
	"github.com/perfgate/perfgate/internal/verdict"
)

// annotatedPlan sets a tolerance for p99.search (line 3) and a threshold
// (line 5); the search group's header is line 20.
const annotatedPlan = `[tolerance]
cpu = 30
"p99.search" = 20

[[threshold]]
group = "search"
metric = "p90"
below = "150ms"

[[group]]
name = "patient"
path = "/patient"
expect = 200

[[group]]
name = "metadata"
path = "/metadata"
expect = 200

[[group]]
name = "search"
path = "/search"
expect = 200
`

// publishedAnnotations ingests r as the only, regressing attempt of a run
// and returns the annotations the check was completed with.
func publishedAnnotations(t *testing.T, run int64, r *report.Report) []verdict.Annotation {
	t.Helper()
	f := newService(t, verdict.Config{})
	s := pr(run, 1, epyc, 1)
	s.Report = reportJSON(t, r)
	if rc := f.ingest(t, s); rc.Attempt.Decision.Verdict != verdict.WordRegression || !rc.Published {
		t.Fatalf("the regression: %+v", rc)
	}
	if len(f.pub.outcomes) != 1 {
		t.Fatalf("%d outcomes published, want 1", len(f.pub.outcomes))
	}
	return f.pub.outcomes[0].Annotations
}

// TestAnnotationsOnPlanLines: a breaching metric is annotated on the plan
// line its judgement came from, in the plan's repository path: p99.search
// on its tolerance key, the other search percentiles on the search group's
// header, and the failed threshold on its [[threshold]] line.
func TestAnnotationsOnPlanLines(t *testing.T) {
	p, err := plan.Parse("perf/plan.toml", []byte(annotatedPlan))
	if err != nil {
		t.Fatal(err)
	}
	r := reporttest.Regression()
	r.Settings.Plan = "/home/runner/work/api/api/services/api/perf/plan.toml"
	r.Settings.PlanPath = "services/api/perf/plan.toml"
	r.PlanLines = p.MetricLines(r.Input.Metrics)
	r.Verdict.Thresholds = append(r.Verdict.Thresholds, judge.JudgeThreshold(judge.Threshold{
		Line: p.Thresholds[0].Line, Metric: "p90", Group: "search", Side: "client", BelowMS: 150, Value: 210, Samples: 1600}))
	want := map[string]int{"p50.search": 20, "p95.search": 20, "p99.search": 3, "threshold p90 of search": 5}
	got := map[string]int{}
	for _, a := range publishedAnnotations(t, 9, r) {
		if a.Path != "services/api/perf/plan.toml" {
			t.Errorf("annotation %q on %s, want services/api/perf/plan.toml", a.Title, a.Path)
		}
		name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(a.Title, "perfgate: "), " regressed"), " not met")
		got[name] = a.Line
		if _, ok := want[name]; !ok {
			t.Errorf("an annotation %q at line %d the fixture does not breach", a.Title, a.Line)
		}
		if strings.HasPrefix(name, "threshold") && !strings.Contains(a.Message, "(plan line 5)") {
			t.Errorf("the threshold's message %q", a.Message)
		}
	}
	for name, line := range want {
		if got[name] != line {
			t.Errorf("%s annotated at line %d, want %d (all: %v)", name, got[name], line, got)
		}
	}
}

// TestAnnotationsOfOldReports: a report from before plan_lines and
// plan_path still gets its annotations, on line 1 of its plan, and an
// absolute plan path, which names no file to GitHub, gives way to
// perf/plan.toml.
func TestAnnotationsOfOldReports(t *testing.T) {
	for i, tc := range []struct{ plan, want string }{
		{"perf/plan.toml", "perf/plan.toml"},
		{"./bench/plan.toml", "bench/plan.toml"},
		{"/home/runner/work/api/api/perf/plan.toml", "perf/plan.toml"},
		{"../elsewhere/plan.toml", "perf/plan.toml"},
		{"", "perf/plan.toml"},
	} {
		r := reporttest.Regression()
		r.Settings.Plan = tc.plan
		as := publishedAnnotations(t, int64(20+i), r)
		if len(as) == 0 {
			t.Fatalf("plan %q: no annotations", tc.plan)
		}
		for _, a := range as {
			if a.Path != tc.want || a.Line != 1 {
				t.Errorf("plan %q: annotation %q on %s:%d, want %s:1", tc.plan, a.Title, a.Path, a.Line, tc.want)
			}
		}
	}
}

// TestAnnotationsOfTheArmsCopy: a gate from before issue 20 reported the
// exported head arm's copy of the plan as its plan_path; the annotation
// names the plan's path in the repository, which GitHub shows.
func TestAnnotationsOfTheArmsCopy(t *testing.T) {
	for i, tc := range []struct{ plan, planPath, want string }{
		{"target/perf-run/arms/perf-head/contract/perf/plan.toml", "target/perf-run/arms/perf-head/contract/perf/plan.toml", "perf/plan.toml"},
		{"/home/runner/work/api/api/target/perf-run/arms/perf-head/contract/perf/search.toml", "", "perf/search.toml"},
		{"target/perf-run/arms/perf-head/contract/perf/plan.toml", "", "perf/plan.toml"},
		{"perf/plan.toml", "perf/plan.toml", "perf/plan.toml"},
	} {
		r := reporttest.Regression()
		r.Settings.Plan, r.Settings.PlanPath = tc.plan, tc.planPath
		for _, a := range publishedAnnotations(t, int64(40+i), r) {
			if a.Path != tc.want {
				t.Errorf("plan %q, plan_path %q: annotation %q on %s, want %s", tc.plan, tc.planPath, a.Title, a.Path, tc.want)
			}
		}
	}
}
