package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/base"
	"github.com/perfgate/perfgate/internal/base/gittest"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/demo"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
)

// checkFixture reads testdata/check/repo, the fixture repository's head
// tree, as path -> content.
func checkFixture(t *testing.T) map[string]string {
	t.Helper()
	return gittest.Files(t, filepath.Join("..", "..", "testdata", "check", "repo"))
}

// fault changes one file of a commit: the head's, or the base's.
type fault struct {
	name, inBase, file, old, new string
	want                         string // the file and line the refusal must name
}

// checkRepo builds the fixture's history: v0.1.0, a tree from before
// perf/arm.env whose overrides come from its legacy gate script; the base,
// which adds arm.env and pins postgres:14; and the head, tagged v0.2.0,
// which moves to postgres:15 (so the base gets its own copy of the db).
// f, when set, breaks one file of the head or the base.
func checkRepo(t *testing.T, f *fault) string {
	t.Helper()
	return checkRepoFrom(t, nil, f)
}

// checkStarts is checkRepo's history up to the commit a fault breaks,
// made once for many faults and copied for each: after v0.1.0 (a base's
// fault) and after the base's commit (a head's). Each copy costs no git
// process, where its history took eight, a third of a subtest's time
// on a machine whose processes start slowly.
type checkStarts struct{ afterLegacy, afterBase *gittest.Repo }

func newCheckStarts(t *testing.T) *checkStarts {
	t.Helper()
	files := checkFixture(t)
	r := gittest.New(t)
	commitLegacy(t, r, files, nil)
	s := &checkStarts{afterLegacy: r.Copy(t)}
	commitBase(t, r, files, nil)
	s.afterBase = r
	return s
}

// checkRepoFrom is checkRepo, starting from a copy of s's history where
// the fault leaves it whole (s may be nil).
func checkRepoFrom(t *testing.T, s *checkStarts, f *fault) string {
	t.Helper()
	files := checkFixture(t)
	var r *gittest.Repo
	switch {
	case s != nil && f != nil && f.inBase == "head":
		r = s.afterBase.Copy(t)
	case s != nil && f != nil && f.inBase == "base":
		r = s.afterLegacy.Copy(t)
		commitBase(t, r, files, f)
	default:
		r = gittest.New(t)
		commitLegacy(t, r, files, f)
		commitBase(t, r, files, f)
	}
	headFiles := map[string]string{"compose.yaml": files["compose.yaml"]}
	if f != nil {
		// The head carries the fixture's own copy of the file: broken
		// when the fault is the head's, whole again when it was the base's.
		headFiles[f.file] = files[f.file]
		if f.inBase == "head" {
			breakFile(t, f, headFiles, "head")
		}
	}
	r.Commit("head: postgres 15", headFiles)
	r.Tag("v0.2.0", "HEAD", true)
	return r.Dir
}

// breakFile applies f to m when f is a fault of commit which.
func breakFile(t *testing.T, f *fault, m map[string]string, which string) map[string]string {
	t.Helper()
	if f == nil || f.inBase != which {
		return m
	}
	old, ok := m[f.file]
	if !ok || !strings.Contains(old, f.old) {
		t.Fatalf("fault %s: %s does not hold %q", f.name, f.file, f.old)
	}
	m[f.file] = strings.Replace(old, f.old, f.new, 1)
	return m
}

// commitLegacy commits v0.1.0: the fixture without perf/arm.env.
func commitLegacy(t *testing.T, r *gittest.Repo, files map[string]string, f *fault) {
	t.Helper()
	legacy := map[string]string{}
	for p, c := range files {
		if p != "perf/arm.env" {
			legacy[p] = c
		}
	}
	r.Commit("v0.1.0: the legacy gate", breakFile(t, f, legacy, "legacy"))
	r.Tag("v0.1.0", "HEAD", true)
}

// commitBase commits the base: arm.env, and postgres pinned to 14.
func commitBase(t *testing.T, r *gittest.Repo, files map[string]string, f *fault) {
	t.Helper()
	baseFiles := map[string]string{"perf/arm.env": files["perf/arm.env"], "compose.yaml": strings.Replace(files["compose.yaml"], "postgres:15", "postgres:14", 1)}
	if f != nil && f.inBase == "base" && baseFiles[f.file] == "" {
		// A fault of a file the base does not change: the base's commit
		// breaks the fixture's copy.
		baseFiles[f.file] = files[f.file]
	}
	r.Commit("base: arm.env, postgres 14", breakFile(t, f, baseFiles, "base"))
}

// fileLine is how a refusal names the file and line to fix.
var fileLine = regexp.MustCompile(`^[a-z][a-z0-9_./-]*\.(toml|env|yaml|sh):[0-9]+: `)

func runCheckCLI(t *testing.T, repo string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := RunIO(context.Background(), []string{"check", "--repo", repo}, &IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	return out.String() + errb.String(), err
}

// TestCheckPassesOnTheFixture is `gate.sh --self-test` over a repository
// whose contract is whole: every check has its line and passes.
func TestCheckPassesOnTheFixture(t *testing.T) {
	t.Parallel() // its own repository; its time is git's processes
	out, err := runCheckCLI(t, checkRepo(t, nil))
	if err != nil {
		t.Fatalf("perfgate check: %v\n%s", err, out)
	}
	for _, want := range []string{
		"ok    head gate file: perf/gate.toml",
		"ok    prepare: 1 command(s), run by perfgate run before the plan is read: openssl ecparam -name prime256v1 -genkey -noout -out @DIR@/dpop.pem",
		"ok    head config: perf/service.toml rendered on port 8080 with 3 override(s) SVC__USAGE__ENABLED SVC__LOG SVC__CACHE__ENABLED",
		"ok    plan: perf/plan.toml: 3 group(s), 4 pair(s) at 20/s; idle 1m0s, CPU under 2 % of a core, store under 1 tx/s",
		"ok    rate rule: emergency 6.67/s under 7/s",
		"ok    variant control: overrides SVC__CACHE__ENABLED=false, must fail counter exchanges",
		"ok    control plan: perf/busy-loop.toml: idle 1m0s, CPU under 2 % of a core, store under 1 tx/s",
		"ok    base for pull_request: The base is",
		"ok    base for merge_group: The base is",
		"the commit before the push.",
		"ok    base for workflow_dispatch: The base is",
		"the previous release v0.1.0.",
		"ok    base for release: The base is",
		"db: base copy on 127.0.0.2 (db: image differs",
		"config rewrite: 1 address(es) in perf/service.toml moved to 127.0.0.2, the rest unchanged",
		"overrides derived from scripts/perf/gate.sh's gateway_env()",
		"every check passed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "ok    ") && line != "every check passed" {
			t.Errorf("a line that is not a passing check: %q", line)
		}
	}
}

// TestCheckNamesEachFault breaks the fixture in many ways, one each: the
// check exits 2 and its first failure names the file and the line.
func TestCheckNamesEachFault(t *testing.T) {
	t.Parallel()
	faults := []fault{
		{"unknown gate key", "head", "perf/gate.toml", `ready = "/health"`, "ready = \"/health\"\nreadyy = \"/x\"", "perf/gate.toml:11: unknown key \"readyy\""},
		{"prepare placeholder", "head", "perf/gate.toml", "-out @DIR@/dpop.pem", "-out @RUN@/dpop.pem", "perf/gate.toml:23: [prepare] command"},
		{"bad prefix", "head", "perf/gate.toml", `prefix = "SVC__"`, `prefix = "SVC-"`, "perf/gate.toml:9:"},
		{"override without the prefix", "head", "perf/arm.env", "SVC__CACHE__ENABLED=true", "LOG_LEVEL=debug", "perf/arm.env:3:"},
		{"override that is no assignment", "head", "perf/arm.env", "SVC__LOG=info", "SVC__LOG info", "perf/arm.env:2:"},
		{"unknown config placeholder", "head", "perf/service.toml", `listen = "127.0.0.1:@PORT@"`, `listen = "@HOST@:@PORT@"`, "perf/service.toml:1:"},
		{"rate rule", "head", "perf/plan.toml", "max_rate = 7", "max_rate = 5", "perf/plan.toml:3:"},
		{"unknown plan key", "head", "perf/plan.toml", `path = "/onward/1"`, "path = \"/onward/1\"\nmethd = \"GET\"", "perf/plan.toml:16: unknown key \"methd\""},
		{"control plan without idle", "head", "perf/busy-loop.toml", `idle = "60s"`, `idle = "0s"`, "perf/gate.toml:31: the idle control's plan perf/busy-loop.toml has no idle phase"},
		{"variant override without the prefix", "head", "perf/gate.toml", `overrides = ["SVC__CACHE__ENABLED=false"]`, `overrides = ["CACHE=false"]`, "perf/gate.toml:35: the variant's override CACHE=false sets no SVC__ variable"},
		{"control plan missing", "head", "perf/gate.toml", `plan = "perf/busy-loop.toml"`, `plan = "perf/busy.toml"`, "perf/gate.toml:31: the idle control's plan is refused: "},
		{"variant counter the plan lacks", "head", "perf/gate.toml", `counter = "exchanges"`, `counter = "exchange"`, "perf/gate.toml:36: counter \"exchange\" is not declared in "},
		{"control left in the plan", "head", "perf/plan.toml", "max_per_request = 5", "max_per_request = 5\n\n[[control]]\nkind = \"idle\"\nplan = \"busy-loop.toml\"", "perf/plan.toml:31: [[control]] belongs in the gate file when a contract drives the run: move it to perf/gate.toml"},
		{"the base's own override without the prefix", "base", "perf/arm.env", "SVC__LOG=info", "LOG=info", "perf/arm.env:2:"},
		{"base service beyond loopback", "base", "compose.yaml", `"127.0.0.1:16379:6379"`, `"0.0.0.0:16379:6379"`, "compose.yaml:9: the base tree's service \"cache\" publishes port 16379 on 0.0.0.0"},
		{"compose depends_on an undefined service", "head", "compose.yaml", "    image: redis:7\n", "    image: redis:7\n    depends_on: [queue]\n", "compose.yaml:8: loading the head tree's compose file: service \"cache\" depends on undefined service \"queue\""},
		{"compose key the specification lacks", "base", "compose.yaml", "    image: postgres:14\n", "    image: postgres:14\n    imagee: postgres:15\n", "compose.yaml:4: loading the base tree's compose file: validating compose.yaml: services.db.imagee"},
		{"compose port that does not parse", "base", "compose.yaml", `"127.0.0.1:16379:6379"`, `"127.0.0.1:16x79:6379"`, "compose.yaml:9: loading the base tree's compose file: Invalid hostPort: 16x79"},
		{"compose YAML syntax", "head", "compose.yaml", "    image: redis:7\n", "    image: redis:7\n   bad: 1\n", "compose.yaml:8: loading the head tree's compose file: failed to parse compose.yaml: yaml:"},
		{"compose top-level key", "head", "compose.yaml", "services:\n", "servicess: {}\nservices:\n", "compose.yaml:1: loading the head tree's compose file: validating compose.yaml:  additional properties 'servicess' not allowed"},
		{"control plan's own fault", "head", "perf/busy-loop.toml", "idle_cpu = 2", `idle_cpu = "2%"`, "perf/busy-loop.toml:5: idle_cpu must be a number"},
		{"base address the rewrite cannot move", "base", "perf/service.toml", `"postgres://127.0.0.1:15432/app"`, `"postgres://db.internal:15432/app"`, "perf/service.toml:3: names db's port 15432 as db.internal:15432, which the rewrite to 127.0.0.2 cannot move"},
		{"base config without the copied service's address", "base", "perf/service.toml", "database = \"postgres://127.0.0.1:15432/app\"\n", "", "compose.yaml:5: the base's copy of db publishes port 15432 on 127.0.0.2, but perf/service.toml names no 127.0.0.1:15432"},
		{"base override naming the copied service", "base", "perf/arm.env", "SVC__LOG=info\n", "SVC__LOG=info\nSVC__DATABASE=postgres://localhost:15432/app\n", "perf/arm.env:3: SVC__DATABASE names localhost:15432, the address of db, whose base copy runs on 127.0.0.2:15432"},
	}
	starts := newCheckStarts(t)
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			out, err := runCheckCLI(t, checkRepoFrom(t, starts, &f))
			if err == nil {
				t.Fatalf("the broken copy passed:\n%s", out)
			}
			if exit.Code(err) != exit.CannotJudge {
				t.Fatalf("exit %d, want 2: %v", exit.Code(err), err)
			}
			if !strings.Contains(err.Error(), f.want) {
				t.Fatalf("the refusal %q does not name %q\n%s", err, f.want, out)
			}
			if !strings.Contains(out, "FAIL  ") {
				t.Fatalf("no FAIL line:\n%s", out)
			}
			t.Logf("refused: %v", err)
			if !fileLine.MatchString(err.Error()) {
				t.Errorf("the refusal names no file:line: %q", err)
			}
		})
	}
}

// TestCheckResolvesBasesAsPrepareDoes builds a history like FerroFED's: a
// release (v0.1.0) from before any contract, then a commit from before
// perf/gate.toml whose overrides come from scripts/perf/gate.sh's
// gateway_env() alone, then the head, tagged v0.2.0, whose gate file
// declares how to read such trees ([legacy]). check resolves each base
// with prepare's own function, so the legacy commit is the release base
// (which plain contract.InCommit would not pick) and is checked as the
// head's gate file over its tree; prepare then builds that same base.
func TestCheckResolvesBasesAsPrepareDoes(t *testing.T) {
	t.Parallel() // its own repository; its time is git's processes
	files := checkFixture(t)
	r := gittest.New(t)
	r.Commit("v0.1.0: the service alone", map[string]string{"svc.sh": files["svc.sh"]})
	r.Tag("v0.1.0", "HEAD", true)
	legacy := map[string]string{}
	for p, c := range files {
		if p != contract.GateFile && p != "perf/arm.env" {
			legacy[p] = c
		}
	}
	legacyCommit := r.Commit("the legacy gate: scripts/perf/gate.sh", legacy)
	r.Commit("head: the gate contract", map[string]string{contract.GateFile: files[contract.GateFile], "perf/arm.env": files["perf/arm.env"]})
	r.Tag("v0.2.0", "HEAD", true)

	// Without the head's [legacy] the release base would be another
	// commit: the gap this test keeps closed.
	ev := &event.Event{Name: event.Release, Tag: "v0.2.0"}
	plain, err := base.Resolve(context.Background(), r.Dir, ev, contract.InCommit)
	if err == nil && plain.Commit == legacyCommit {
		t.Fatalf("plain InCommit already picks the legacy commit %s: the history does not exercise [legacy]", legacyCommit)
	}

	out, err := runCheckCLI(t, r.Dir)
	if err != nil {
		t.Fatalf("perfgate check: %v\n%s", err, out)
	}
	legacyShort := event.ShortSHA(legacyCommit)
	for _, want := range []string{
		"ok    base for release: The base is `" + legacyCommit + "`, the oldest commit after v0.1.0 that carries the gate contract, since v0.1.0 carries no perf/gate.toml",
		"ok    base for push: The base is `" + legacyCommit + "`, the commit before the push.",
		"ok    base " + legacyShort + " gate file: no perf/gate.toml of its own: the head's, read over this tree ([legacy]): ",
		"overrides derived from scripts/perf/gate.sh's gateway_env()",
		"ok    base " + legacyShort + " config: perf/service.toml rendered on port 8070 with 3 override(s) SVC__USAGE__ENABLED SVC__LOG SVC__CACHE__ENABLED",
		"ok    compose plan (base " + legacyShort + "): 2 group(s): cache: shared; db: shared",
		"every check passed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}

	// prepare, given the release event, builds the base check named.
	target := t.TempDir()
	var pout, perr bytes.Buffer
	if err := RunIO(context.Background(), []string{"prepare", "--event", "release", "--tag", "v0.2.0", "--repo", r.Dir, "--out", target},
		&IO{Out: &pout, Err: &perr, Getenv: func(string) string { return "" }}); err != nil {
		t.Fatalf("perfgate prepare: %v\n%s%s", err, pout.String(), perr.String())
	}
	md, err := os.ReadFile(filepath.Join(target, contract.BaseArm, "base.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), legacyCommit) {
		t.Errorf("prepare's base.md names another base than check's %s:\n%s", legacyCommit, md)
	}
	// perfgate base, which the release workflow quotes, names it too.
	bmd := filepath.Join(t.TempDir(), "base.md")
	pout.Reset()
	if err := RunIO(context.Background(), []string{"base", "--event", "release", "--tag", "v0.2.0", "--repo", r.Dir, "--out", bmd},
		&IO{Out: &pout, Err: &perr, Getenv: func(string) string { return "" }}); err != nil {
		t.Fatalf("perfgate base: %v\n%s%s", err, pout.String(), perr.String())
	}
	if md, err := os.ReadFile(bmd); err != nil || !strings.Contains(string(md), legacyCommit) {
		t.Errorf("perfgate base's base.md names another base than prepare's %s (%v):\n%s", legacyCommit, err, md)
	}
}

// TestCheckPassesOnTheDemoRepository checks the repository perfgate demo
// builds (internal/demo), with its compose dependency and without one.
func TestCheckPassesOnTheDemoRepository(t *testing.T) {
	t.Parallel() // its own repository; its time is git's processes
	// The arms' builds copy this binary; check builds nothing, so any
	// path does, and this test's own is at hand.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		o    demo.Options
		want []string
	}{
		{"with its compose dependency", demo.Options{Binary: self, Regression: true, Store: true, Image: "perfgate-demo-dependency:check", DependencyPort: 18181},
			[]string{"base copy on 127.0.0.2", "moved to 127.0.0.2", "ok    control plan: perf/busy-loop.toml"}},
		{"without a docker engine or a store", demo.Options{Binary: self, Regression: true},
			[]string{"skip  compose plan", "skip  control plan"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "repo")
			if _, err := demo.Build(context.Background(), dir, c.o); err != nil {
				t.Fatal(err)
			}
			out, err := runCheckCLI(t, dir)
			if err != nil {
				t.Fatalf("perfgate check on the demo repository: %v\n%s", err, out)
			}
			for _, want := range append(c.want, "ok    variant control: ", "ok    base for workflow_dispatch: ", "every check passed") {
				if !strings.Contains(out, want) {
					t.Errorf("the output lacks %q", want)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// TestCheckReadsTheHeadsComposeWithoutABase: a repository of one commit
// has no base to diff the compose files with; the head's are still read
// and a fault in them named on its line.
func TestCheckReadsTheHeadsComposeWithoutABase(t *testing.T) {
	t.Parallel() // its own repository; its time is git's processes
	cases := []struct {
		name, old, new string
		want           string // "" passes
	}{
		{"whole", "", "", ""},
		{"depends_on an undefined service", "    image: redis:7\n", "    image: redis:7\n    depends_on: [queue]\n", "compose.yaml:8: loading the head tree's compose file: service \"cache\" depends on undefined service \"queue\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := checkFixture(t)
			files["compose.yaml"] = strings.Replace(files["compose.yaml"], c.old, c.new, 1)
			r := gittest.New(t)
			r.Commit("the only commit", files)
			out, err := runCheckCLI(t, r.Dir)
			if c.want == "" {
				if err != nil || !strings.Contains(out, "ok    compose plan (head): no base to diff with; compose.yaml load: services cache, db") {
					t.Fatalf("perfgate check: %v\n%s", err, out)
				}
				return
			}
			if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("perfgate check = %v (exit %d), want exit 2 naming %q\n%s", err, exit.Code(err), c.want, out)
			}
		})
	}
}
