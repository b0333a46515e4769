package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/report"
)

const judgingGroups = "[[group]]\nname = \"hello\"\npath = \"/hello\"\nexpect = 200\n"

// The prepared gate judges with the base arm's kept plan where it has one
// and says so when it has none or this perfgate refuses it; the command
// line's profile reshapes both plans alike, so it is no change of the
// head's.
func TestJudgingPlan(t *testing.T) {
	for _, tc := range []struct {
		name      string
		basePlan  string // "" writes no plan
		latency   float64
		note      string
		changes   int
		basePlanK string
	}{
		{"a base plan judges", "[tolerance]\nlatency = 10\n\n" + judgingGroups, 0.10, "", 1, "perf/plan.toml"},
		{"no base plan", "", 10, "has no plan at perf/plan.toml: the head's settings judge this run", 0, ""},
		{"a refused base plan", "[tolerance]\nlatncy = 10\n\n" + judgingGroups, 10, "is refused by this perfgate", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := t.TempDir()
			if tc.basePlan != "" {
				if err := os.MkdirAll(filepath.Join(tree, "perf"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(tree, "perf", "plan.toml"), []byte(tc.basePlan), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			head, err := plan.Parse("perf/plan.toml", []byte("[ab]\npairs = 2\n\n[tolerance]\nlatency = 1000\n\n"+judgingGroups))
			if err != nil {
				t.Fatal(err)
			}
			profile := func(ab *plan.AB) error { ab.Pairs = 3; return nil }
			p, j, err := judgingPlan(head, &contract.Contract{Tree: tree, Plan: contract.DefaultPlan}, "4f1c2a9e8d7b6a5f", profile)
			if err != nil {
				t.Fatal(err)
			}
			if p.Tolerance["latency"] != tc.latency || p.AB.Pairs != 3 {
				t.Errorf("judged latency %v over %d pairs, want %v over the profile's 3", p.Tolerance["latency"], p.AB.Pairs, tc.latency)
			}
			if (tc.note == "") != (j.Note == "") || !strings.Contains(j.Note, tc.note) {
				t.Errorf("note %q, want one holding %q", j.Note, tc.note)
			}
			if len(j.Changed) != tc.changes || j.BasePlan != tc.basePlanK {
				t.Errorf("changes %+v from %q, want %d from %q", j.Changed, j.BasePlan, tc.changes, tc.basePlanK)
			}
		})
	}
}

// The base's control kinds judge, read from the base's tree; one the
// head's plan cannot answer (its counter is gone) is left out and listed.
func TestJudgingControls(t *testing.T) {
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "perf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "perf", "busy-loop.toml"), []byte("[ab]\nidle = \"60s\"\n\n"+judgingGroups), 0o644); err != nil {
		t.Fatal(err)
	}
	base := &contract.Contract{Tree: tree, Plan: contract.DefaultPlan, Controls: plan.Controls{
		{Kind: plan.ControlIdle, PlanFile: "perf/busy-loop.toml", File: "perf/gate.toml", Line: 3},
		{Kind: plan.ControlVariant, Counter: "exchanges", Overrides: []string{"SVC_CACHE=false"}, File: "perf/gate.toml", Line: 7},
	}}
	head := &contract.Contract{Tree: t.TempDir(), Plan: contract.DefaultPlan}
	judged, err := plan.Parse("perf/plan.toml", []byte(judgingGroups))
	if err != nil {
		t.Fatal(err)
	}
	j := &report.Judging{}
	ctls, err := judgingControls(judged, base, head, j)
	if err != nil {
		t.Fatal(err)
	}
	idle, ok := ctls.Of(plan.ControlIdle)
	if len(ctls) != 1 || !ok || idle.Plan == nil || idle.Plan.AB.Idle.Seconds() != 60 {
		t.Fatalf("controls %+v, want the base's idle control with its plan read from the base's tree", ctls)
	}
	if len(j.Changed) != 2 || j.Changed[0].Setting != "[[control]] variant" || !strings.Contains(j.Changed[0].Base, `counter "exchanges"`) || j.Changed[0].Judged != "absent" ||
		j.Changed[1].Setting != "[[control]] idle" || j.Changed[1].Head != "absent" {
		t.Errorf("changes %+v, want the refused variant, then the idle control the head lacks", j.Changed)
	}
}
