package contract

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A change renames [emergency] threshold to limit in both the service and its
// perf config. Each arm is built, checked and booted with its own tree's
// contract, so both start; the head's config given to the base binary is what
// the old gate did, and the check refuses it naming the key.
func TestRenamedKeyEachArmBootsWithItsOwnContract(t *testing.T) {
	ctx := context.Background()
	baseTree := writeTree(t, serviceTree(t, "server.port,emergency.threshold,usage.enabled",
		"[server]\nport = @PORT@\n\n[emergency]\nthreshold = 5\n",
		"# the base's overrides\nSVC__EMERGENCY__THRESHOLD=7\n"))
	headTree := writeTree(t, serviceTree(t, "server.port,emergency.limit,usage.enabled",
		"[server]\nport = @PORT@\n\n[emergency]\nlimit = 5\n",
		"SVC__EMERGENCY__LIMIT=\"9\"\n"))
	target := t.TempDir()

	arms := map[string]string{"perf-base": baseTree, "perf-head": headTree}
	for name, tree := range arms {
		c, err := Load(tree)
		if err != nil {
			t.Fatalf("loading %s: %v", name, err)
		}
		var log strings.Builder
		if err := c.BuildArm(ctx, filepath.Join(target, name), &log); err != nil {
			t.Fatalf("building %s: %v\n%s", name, err, log.String())
		}
	}
	// The trees are gone after the build, as on an attempt runner that only
	// unpacked the arms: everything comes from the kept contracts.
	for _, tree := range arms {
		if err := os.RemoveAll(tree); err != nil {
			t.Fatal(err)
		}
	}

	want := map[string][]string{
		"perf-base": {"emergency.threshold=7", "usage.enabled=false"},
		"perf-head": {"emergency.limit=9", "usage.enabled=false"},
	}
	rendered := map[string]*Rendered{}
	contracts := map[string]*Contract{}
	for name := range arms {
		c, err := LoadArm(filepath.Join(target, name))
		if err != nil {
			t.Fatal(err)
		}
		port := freePort(t)
		a, err := c.Render(ctx, RenderOptions{Port: port, Dir: filepath.Join(target, "run", name)})
		if err != nil {
			t.Fatalf("rendering %s: %v", name, err)
		}
		if err := c.CheckConfig(ctx, a, "abc123"); err != nil {
			t.Fatalf("%s refused its own config: %v", name, err)
		}
		startArm(t, c, a)
		values := get(t, strings.TrimSuffix(a.Ready, "/health")+"/values")
		for _, w := range append(want[name], "server.port="+strconv.Itoa(port)) {
			if !strings.Contains(values, w+"\n") {
				t.Errorf("%s serves values\n%s\nwant %s", name, values, w)
			}
		}
		rendered[name], contracts[name] = a, c
	}
	if strings.Contains(get(t, strings.TrimSuffix(rendered["perf-head"].Ready, "/health")+"/values"), "threshold") {
		t.Error("the head arm read the base's key")
	}

	// The old gate's mistake: the base binary over the head's contract.
	wrong := *contracts["perf-head"]
	wrong.Bin = contracts["perf-base"].Bin
	a, err := wrong.Render(ctx, RenderOptions{Port: freePort(t), Dir: filepath.Join(target, "run", "wrong")})
	if err != nil {
		t.Fatal(err)
	}
	err = wrong.CheckConfig(ctx, a, "abc123")
	wantRefusal(t, err, "the base at abc123 does not know the key(s) emergency.limit of its own perf/service.toml: the pair is not judged")
}
