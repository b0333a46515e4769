package contract

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/perfgate/perfgate/internal/plan"
)

// A plan that reads a data file, a body file and a variable file, and the
// gate file's idle control's plan (with a data file of its own): prepare keeps them beside
// the plan, pack carries them and, after unpack, the kept plan parses and
// its variable resolves, so `perfgate run` works on an attempt that has
// only the archive.
func TestPackCarriesThePlansFiles(t *testing.T) {
	ctx := context.Background()
	files := serviceTree(t, "server.port,usage.enabled", "[server]\nport = @PORT@\n", "SVC__A=1\n")
	files["perf/plan.toml"] = `[data.id]
file = "data/ids.txt"
draw = "zipf"
exponent = 1.1

[vars.token]
file = "token.txt"

[[group]]
name = "create"
method = "POST"
path = "/items/{id}"
body_file = "bodies/create.json"
expect = 201
`
	// The idle control's plan is the gate file's, named from the tree's root.
	files[GateFile] += "\n[[control]]\nkind = \"idle\"\nplan = \"perf/controls/busy.toml\"\n"
	files["perf/data/ids.txt"] = values(50)
	files["perf/bodies/create.json"] = `{"name": "widget"}`
	files["perf/token.txt"] = "s3cret\n"
	files["perf/controls/busy.toml"] = `[ab]
idle = "5s"

[data.n]
file = "n.txt"
draw = "zipf"
exponent = 1.1

[[group]]
name = "hello"
path = "/hello/{n}"
expect = 200
`
	files["perf/controls/n.txt"] = values(50)
	if _, err := plan.ParseFile(filepath.Join(writeTree(t, files), "perf/plan.toml")); err != nil {
		t.Fatalf("the test's plan: %v", err)
	}
	build := t.TempDir()
	for _, arm := range []string{BaseArm, HeadArm} {
		c, err := Load(writeTree(t, files))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.BuildArm(ctx, filepath.Join(build, arm), new(discard)); err != nil {
			t.Fatal(err)
		}
	}
	attempt := packAndUnpack(t, build)
	for _, arm := range []string{BaseArm, HeadArm} {
		c, err := LoadArm(filepath.Join(attempt, arm))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"perf/data/ids.txt", "perf/bodies/create.json", "perf/token.txt", "perf/controls/busy.toml", "perf/controls/n.txt"} {
			if _, err := os.Stat(filepath.Join(c.Tree, filepath.FromSlash(f))); err != nil {
				t.Errorf("%s: the unpacked contract lacks %s: %v", arm, f, err)
			}
		}
		p, err := plan.ParseFile(filepath.Join(c.Tree, c.Plan))
		if err != nil {
			t.Fatalf("%s: the unpacked plan: %v", arm, err)
		}
		v, err := plan.ResolveVars(p, nil, func(string) string { return "" })
		if err != nil {
			t.Fatalf("%s: the unpacked plan's variables: %v", arm, err)
		}
		if got, _ := v.Get("token"); got != "s3cret" {
			t.Errorf("%s: the variable file reads %q after unpack, want s3cret", arm, got)
		}
	}
}

// A plan this perfgate refuses (an old base's) keeps only itself: prepare
// never fails on a plan the run does not read.
func TestRefusedPlanKeepsOnlyItself(t *testing.T) {
	tree := writeTree(t, map[string]string{"perf/plan.toml": "[[group]]\nname = 3\n"})
	if got := planFiles(tree, "perf/plan.toml"); len(got) != 0 {
		t.Errorf("a refused plan lists %v", got)
	}
}

// generate: each arm's work directory gets the file with the addresses of
// its own services; a config that reads no such file is refused, naming
// the config and the gate file's line.
func TestGeneratedRegistry(t *testing.T) {
	ctx := context.Background()
	withGenerate := func(line string) string {
		return strings.Replace(serviceTreeGate, "plan = \"perf/plan.toml\"\n", "plan = \"perf/plan.toml\"\n"+line+"\n", 1)
	}
	gate := withGenerate(`generate = ["registry.toml"]`)
	files := serviceTree(t, "server.port,usage.enabled,registry", "[server]\nport = @PORT@\nregistry = \"@DIR@/registry.toml\"\n", "SVC__A=1\n")
	files[GateFile] = gate
	c, err := Load(writeTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := c.Render(ctx, RenderOptions{Port: 8070, Dir: dir, Services: map[string][]string{
		"pix": {"127.0.0.2:5432"}, "node-a": {"127.0.0.1:8081", "127.0.0.1:8082"},
	}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "registry.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		Services map[string]struct {
			Address   string
			Addresses []string
		}
	}
	if _, err := toml.Decode(string(b), &reg); err != nil {
		t.Fatalf("the registry is not TOML: %v\n%s", err, b)
	}
	if got := reg.Services["pix"].Address; got != "127.0.0.2:5432" {
		t.Errorf("pix at %q, want 127.0.0.2:5432:\n%s", got, b)
	}
	if got := reg.Services["node-a"].Addresses; len(got) != 2 || got[1] != "127.0.0.1:8082" {
		t.Errorf("node-a at %v:\n%s", got, b)
	}

	// A config that reads no generated file is refused before anything
	// starts: by prepare (Load), and by run when it reads the kept
	// contract (LoadArm), which it does before the compose services start.
	armDir := filepath.Join(t.TempDir(), "perf-head")
	if err := c.BuildArm(ctx, armDir, new(discard)); err != nil {
		t.Fatal(err)
	}
	bad := "[server]\nport = @PORT@\n"
	if err := os.WriteFile(filepath.Join(armDir, ArmContractDir, "perf", "service.toml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadArm(armDir)
	wantRefusal(t, err, "perf/service.toml", "reads no @DIR@/registry.toml", GateFile+":12")
	files["perf/service.toml"] = bad
	_, err = Load(writeTree(t, files))
	wantRefusal(t, err, "perf/service.toml", "reads no @DIR@/registry.toml", GateFile+":12")

	for _, bad := range []string{`generate = ["../x"]`, `generate = ["a", "a"]`, `generate = ["@DIR@/x"]`} {
		files[GateFile] = withGenerate(bad)
		_, err := Load(writeTree(t, files))
		wantRefusal(t, err, GateFile+":12", "generate")
	}
}

// values is n distinct values, one a line, as a data file wants them.
func values(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d\n", i+1)
	}
	return b.String()
}

// Both arms start from the checkout, as FerroFED's gate does: the base's
// config check (and its start, which the gate runs in the same Cwd)
// reads a relative path from the head's tree, not from the base's work
// directory.
func TestRelativePathsReadTheHeadsTree(t *testing.T) {
	ctx := context.Background()
	files := serviceTree(t, "server.port,usage.enabled", "[server]\nport = @PORT@\n", "SVC__A=1\n")
	files[GateFile] = strings.Replace(serviceTreeGate, `check = "@BIN@ check"`, `check = "cat perf/head-only.txt"`, 1)
	base, err := Load(writeTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	files["perf/head-only.txt"] = "the head's tree\n"
	head := writeTree(t, files)

	a, err := base.Render(ctx, RenderOptions{Port: 8070, Dir: t.TempDir(), Cwd: head})
	if err != nil {
		t.Fatal(err)
	}
	if a.Cwd != head {
		t.Errorf("the arm starts in %s, want the head's tree %s", a.Cwd, head)
	}
	if err := base.CheckConfig(ctx, a, "base1234"); err != nil {
		t.Errorf("the base's check did not read perf/head-only.txt from the head's tree: %v", err)
	}
	// Without a Cwd the arm starts in its own work directory, where the
	// file is not: the same check is refused.
	a, err = base.Render(ctx, RenderOptions{Port: 8070, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, base.CheckConfig(ctx, a, "base1234"), "base1234")
}

// packAndUnpack packs the built arms under build and unpacks them into a
// fresh folder, as an attempt job gets them; it returns that folder.
func packAndUnpack(t *testing.T, build string) string {
	t.Helper()
	archive := filepath.Join(t.TempDir(), "arms.tar.gz")
	if err := Pack(build, archive); err != nil {
		t.Fatal(err)
	}
	attempt := t.TempDir()
	if err := Unpack(archive, attempt); err != nil {
		t.Fatal(err)
	}
	return attempt
}
