package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/base/gittest"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/testslot"
	"github.com/perfgate/perfgate/internal/testtier"
)

// judgedTree is exampleTree with plan settings written above its groups.
func judgedTree(armEnv, settings string) map[string]string {
	tree := exampleTree(armEnv)
	tree["perf/plan.toml"] = settings + "\n" + tree["perf/plan.toml"]
	return tree
}

// A pull request cannot loosen its own gate (issue 21): a head 3x slower
// whose plan raises the latency tolerance to 1000 % and drops the base's
// threshold still fails on latency, judged at the base's 10 %; a head that
// tightens the base's loose tolerance is judged at its own tighter one.
// The summary and the report name the setting with both values.
func TestMeasuredRunJudgesWithTheStricterPlan(t *testing.T) {
	t.Parallel()
	testtier.Heavy(t, testtier.Gate)
	useExampled(t)
	threshold := "[[threshold]]\ngroup = \"hello\"\nmetric = \"p99\"\nbelow = \"10ms\"\n"
	for _, tc := range []struct {
		name, base, head string
		rows             []string // summary rows the run must hold
	}{
		{"a loosened head", "[tolerance]\nlatency = 10\n\n" + threshold, "[tolerance]\nlatency = 1000\n",
			[]string{"| [tolerance] latency | 10 % | 1000 % | 10 % |", "| [[threshold]] p99 of group hello | below 10ms | absent | below 10ms |"}},
		{"a tightened head", "[tolerance]\nlatency = 1000\n", "[tolerance]\nlatency = 10\n",
			[]string{"| [tolerance] latency | 1000 % | 10 % | 10 % |"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Side by side: each holds a gate slot only around its run,
			// and one after the other they were the measured phase's
			// longest chain.
			t.Parallel()
			r := gittest.New(t)
			r.Git("checkout", "-q", "-b", "main")
			r.Commit("gate", judgedTree("EXAMPLED_LATENCY=4ms\n", tc.base))
			r.Git("checkout", "-q", "-b", "slow")
			r.Commit("slower, with its own plan", judgedTree("EXAMPLED_LATENCY=4ms\nEXAMPLED_LATENCY_FACTOR=3\n", tc.head))

			target := filepath.Join(t.TempDir(), "target")
			if _, stderr, err := runBaseCLI(t, nil, "prepare", "--event", "pull_request", "--base-ref", "main", "--repo", r.Dir, "--out", target); err != nil {
				t.Fatalf("perfgate prepare: %v\n%s", err, stderr)
			}
			// A run that cannot be judged (the shared runner stalled) runs
			// again, as the product's retry rule does.
			var stdout, stderr string
			var err error
			for attempt := 1; attempt <= 3; attempt++ {
				release := testslot.Hold(t)
				stdout, stderr, err = runBaseCLI(t, nil, "run", "--target", target, "--repo", r.Dir, "--store=false",
					"--pairs", "4", "--warmup", "500ms", "--measure", "3s", "--rate", strconv.Itoa(testslot.Rate), "--idle", "0")
				release()
				if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), "cannot judge") {
					break
				}
				testslot.Retry(t, fmt.Sprintf("attempt %d cannot be judged: %v", attempt, err))
			}
			if code := exit.Code(err); code != exit.Regression {
				t.Fatalf("perfgate run: exit %d (%v), want 1\n%s\n%s", code, err, stdout, stderr)
			}
			if !strings.Contains(err.Error(), "p50.hello") {
				t.Errorf("the regression does not name the latency the head loosened (p50.hello): %v", err)
			}
			summary, rerr := os.ReadFile(filepath.Join(target, "perf-run", "summary.md"))
			if rerr != nil {
				t.Fatal(rerr)
			}
			for _, row := range append([]string{"### Settings the head changed"}, tc.rows...) {
				if !strings.Contains(string(summary), row) {
					t.Errorf("the summary lacks %q:\n%s", row, summary)
				}
			}
			rep, rerr := report.Read(filepath.Join(target, "perf-run", "latest.json"))
			if rerr != nil {
				t.Fatal(rerr)
			}
			if rep.Judging == nil || rep.Judging.BasePlan != "perf/plan.toml" || len(rep.Judging.Changed) != len(tc.rows) {
				t.Errorf("the report's judging is %+v, want %d changes from the base's perf/plan.toml", rep.Judging, len(tc.rows))
			}
			for _, m := range rep.Verdict.Metrics {
				if m.ID == "p50.hello" && m.Tolerance != 0.10 {
					t.Errorf("p50.hello judged at tolerance %v, want the stricter 10 %%", m.Tolerance)
				}
			}
		})
	}
}
