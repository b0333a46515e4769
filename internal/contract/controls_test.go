package contract

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/plan"
)

// The gate file's [[control]] tables are refused on their own lines: the
// plan package's words (an unknown kind), and what only the contract
// knows (the overrides' prefix, [env], placeholders, the tree's bounds).
func TestGateFileControlRefusals(t *testing.T) {
	cases := []struct {
		name, control string
		want          []string
	}{
		{"unknown kind", "[[control]]\nkind = \"idel\"\n", []string{GateFile + ":17:", `control kind "idel" is not known; write kind = "idle"`}},
		{"a table, not an array", "[control]\nkind = \"idle\"\n", []string{GateFile + ":16:", "control must be an array, not a table"}},
		{"idle plan outside the tree", "[[control]]\nkind = \"idle\"\nplan = \"../busy.toml\"\n", []string{GateFile + ":18:", `the idle control's plan "../busy.toml" leaves the tree`}},
		{"override without the prefix", "[[control]]\nkind = \"variant\"\noverrides = [\"CACHE=false\"]\ncounter = \"exchanges\"\n", []string{GateFile + ":18:", "the variant's override CACHE=false sets no SVC__ variable"}},
		{"override of what [env] fixes", "[[control]]\nkind = \"variant\"\noverrides = [\"SVC__USAGE__ENABLED=true\"]\ncounter = \"exchanges\"\n", []string{GateFile + ":18:", "which [env] on line 14 fixes"}},
		{"override with an unknown placeholder", "[[control]]\nkind = \"variant\"\noverrides = [\"SVC__HOST=@HOST@\"]\ncounter = \"exchanges\"\n", []string{GateFile + ":18:", "uses the placeholder @HOST@"}},
		{"variant without a counter", "[[control]]\nkind = \"variant\"\noverrides = [\"SVC__CACHE=false\"]\n", []string{GateFile + ":16:", "the variant control names no counter"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse([]byte(serviceTreeGate + "\n" + c.control))
			wantRefusal(t, err, c.want...)
		})
	}
}

const controlsPlan = `[[group]]
name = "onward"
path = "/onward/1"
expect = 200

[[counter]]
name = "exchanges"
group = "onward"
url = "/calls"
max_per_request = 5
`

// ResolveControls reads the idle control's plan from the tree's root and
// finds the variant's counter in the run's plan; a plan's own [[control]]
// is refused with its line and where it belongs.
func TestResolveControls(t *testing.T) {
	gate := serviceTreeGate + `
[[control]]
kind = "idle"
plan = "perf/busy.toml"

[[control]]
kind = "variant"
overrides = ["SVC__CACHE=false"]
counter = "%COUNTER%"
`
	cases := []struct {
		name, counter, busy, plan string
		want                      []string // nil: resolves
	}{
		{"both resolve", "exchanges", "[ab]\nidle = \"5s\"\n\n[[group]]\nname = \"hello\"\npath = \"/hello\"\nexpect = 200\n", controlsPlan, nil},
		{"counter the plan lacks", "exchange", "[ab]\nidle = \"5s\"\n\n[[group]]\nname = \"hello\"\npath = \"/hello\"\nexpect = 200\n", controlsPlan,
			[]string{GateFile + ":23:", `counter "exchange" is not declared in`, `write counter = "exchanges"`}},
		{"idle plan without an idle phase", "exchanges", "[ab]\nidle = \"0s\"\n\n[[group]]\nname = \"hello\"\npath = \"/hello\"\nexpect = 200\n", controlsPlan,
			[]string{GateFile + ":18:", "the idle control's plan perf/busy.toml has no idle phase"}},
		{"a plan's own control", "exchanges", "[ab]\nidle = \"5s\"\n\n[[group]]\nname = \"hello\"\npath = \"/hello\"\nexpect = 200\n", controlsPlan + "\n[[control]]\nkind = \"idle\"\nplan = \"busy.toml\"\n",
			[]string{"plan.toml:12:", "[[control]] belongs in the gate file when a contract drives the run: move it to perf/gate.toml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := serviceTree(t, "server.port", "[server]\nport = @PORT@\n", "SVC__A=1\n")
			files[GateFile] = strings.ReplaceAll(gate, "%COUNTER%", c.counter)
			files["perf/busy.toml"] = c.busy
			files["perf/plan.toml"] = c.plan
			tree := writeTree(t, files)
			k, err := Load(tree)
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.ParseFile(filepath.Join(tree, "perf/plan.toml"))
			if err != nil {
				t.Fatal(err)
			}
			cs, err := k.ResolveControls(p)
			if c.want != nil {
				wantRefusal(t, err, c.want...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			idle, ok := cs.Of(plan.ControlIdle)
			if !ok || idle.Plan == nil || idle.Plan.AB.Idle.Seconds() != 5 || idle.File != GateFile || idle.Line != 16 {
				t.Errorf("idle control %+v", idle)
			}
			if v, ok := cs.Of(plan.ControlVariant); !ok || v.Counter != "exchanges" || !slices.Equal(v.Overrides, []string{"SVC__CACHE=false"}) {
				t.Errorf("variant control %+v", v)
			}
			if kept := k.controlFiles(); !slices.Equal(kept, []string{"perf/busy.toml"}) {
				t.Errorf("the files kept for the controls are %v, want the idle plan", kept)
			}
		})
	}
}

// The variant arm is rendered like the head, with the control's overrides
// laid over the head's own: one it shares replaces the head's value.
func TestRenderExtraOverrides(t *testing.T) {
	files := serviceTree(t, "server.port", "[server]\nport = @PORT@\n", "SVC__A=1\nSVC__B=@DIR@/b\n")
	k, err := Load(writeTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a, err := k.Render(context.Background(), RenderOptions{Port: 8070, Dir: dir, Extra: []string{"SVC__A=2", "SVC__C=@PORT@"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"SVC__USAGE__ENABLED=false", "SVC__A=2", "SVC__B=" + dir + "/b", "SVC__C=8070", "SVC_CONFIG=" + a.ConfigPath}
	if !slices.Equal(a.Env, want) {
		t.Errorf("env %q, want %q", a.Env, want)
	}
	if _, err := k.Render(context.Background(), RenderOptions{Port: 8070, Dir: dir, Extra: []string{"SVC__USAGE__ENABLED=true"}}); err == nil {
		t.Error("an extra override of what [env] fixes was rendered")
	}
}
