package actiontest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// .ci/gotest links every test binary once and runs them as go test would:
// in the package's folder, two packages of one name apart, a package
// without tests named so, a failing one's output and FAIL, and exit 1 when
// any failed. The suite's verdict rests on it.
func TestGotestRunsBinariesAsGoTest(t *testing.T) {
	t.Parallel() // go and bash processes on a module of its own, beside the others
	// .ci/gotest prints each package's output under flock(1), as .ci/test
	// already waits on the demo's slots with it: a machine without it
	// cannot run the suite, so the test fails there rather than skip.
	if _, err := exec.LookPath("flock"); err != nil {
		t.Fatalf("flock(1) (util-linux) is not installed: .ci/gotest needs it: %v", err)
	}
	script := filepath.Join(moduleRoot(t), ".ci", "gotest")
	// A folder with a space, as a clone's may have.
	mod := filepath.Join(t.TempDir(), "a module")
	files := map[string]string{
		"go.mod": "module example.test/m\n\ngo 1.22\n",
		// Passes only in its own folder, where its testdata is.
		"a/x/x_test.go": `package x
import ("os"; "testing")
func TestReadsItsTestdata(t *testing.T) {
	b, err := os.ReadFile("testdata/in.txt")
	if err != nil || string(b) != "here\n" { t.Fatalf("not run in its folder: %v %q", err, b) }
}
func TestSkipped(t *testing.T) { t.Fatal("-test.skip did not reach the binary") }
`,
		"a/x/testdata/in.txt": "here\n",
		// The same last element as a/x: go test -c -o dir/ refuses both.
		"b/x/x_test.go": `package x
import "testing"
func TestFails(t *testing.T) { t.Log("said before failing"); t.Fatal("b/x fails") }
`,
		"c/c.go": "package c\n",
	}
	for name, text := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bins := filepath.Join(t.TempDir(), "bins")
	run := func(args ...string) (string, error) {
		cmd := exec.Command("bash", append([]string{script}, args...)...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "PERFGATE_TEST_LINK_CACHE=off")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("link", bins, "--", "./..."); err != nil {
		t.Fatalf("link: %v\n%s", err, out)
	}
	for _, p := range []string{"example.test/m/a/x/x.test", "example.test/m/b/x/x.test"} {
		if _, err := os.Stat(filepath.Join(bins, p)); err != nil {
			t.Errorf("no binary %s: %v", p, err)
		}
	}
	out, err := run("run", bins, "2", "-test.skip=^TestSkipped$", "--", "./...")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("a failing package's run ended %v, want exit 1\n%s", err, out)
	}
	for _, want := range []string{
		`(?m)^ok  \texample\.test/m/a/x\t[0-9]+\.[0-9]{3}s$`,
		`(?m)^FAIL\texample\.test/m/b/x\t[0-9]+\.[0-9]{3}s$`,
		`(?m)^\?   \texample\.test/m/c\t\[no test files\]$`,
		`said before failing`, `b/x fails`, `(?m)^FAIL$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("the run's output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "-test.skip did not reach") || strings.Contains(out, "not run in its folder") {
		t.Errorf("the flags or the folder did not reach a binary:\n%s", out)
	}
	// Without -test.skip, TestSkipped runs and fails the package.
	out, err = run("run", bins, "1", "--", "./a/...")
	if err == nil {
		t.Errorf("TestSkipped ran and should have failed the run:\n%s", out)
	}
	// A passing run exits 0 and prints only the ok line, as go test does.
	out, err = run("run", bins, "1", "-test.run=^TestReadsItsTestdata$", "--", "./a/...")
	if err != nil || !regexp.MustCompile(`^ok  \texample\.test/m/a/x\t\S+$`).MatchString(strings.TrimSpace(out)) {
		t.Errorf("a passing run: %v\n%s", err, out)
	}
	// A package go list cannot find ends the run, as it ends go test.
	if out, err := run("run", bins, "1", "--", "./nope"); err == nil {
		t.Errorf("a missing package passed:\n%s", out)
	}
}

// .ci/gotest link takes a test binary from the machine's cache only where
// every input of its link is the same: a change in a package the test
// only imports, or in the link flags, links it again, and the new binary
// is the one that runs. A stale binary there would pass the suite on code
// it never tested.
func TestGotestReusesALinkOnlyForTheSameInputs(t *testing.T) {
	t.Parallel()
	script := filepath.Join(moduleRoot(t), ".ci", "gotest")
	mod := filepath.Join(t.TempDir(), "m")
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.test/m\n\ngo 1.22\n")
	write("d/d.go", "package d\n\nvar v = \"one\"\n\nfunc V() string { return v }\n")
	write("a/a_test.go", `package a
import ("testing"; "example.test/m/d")
func TestV(t *testing.T) { t.Log("V=" + d.V()) }
`)
	cache := filepath.Join(t.TempDir(), "cache")
	// link links a's test binary of the module in dir into a folder of its
	// own and returns what .ci/gotest said and what the binary says d.V()
	// is.
	link := func(dir string, build ...string) (said, v string) {
		t.Helper()
		bins := t.TempDir()
		cmd := exec.Command("bash", append(append([]string{script, "link", bins}, build...), "--", "./...")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PERFGATE_TEST_LINK_CACHE="+cache, "GOFLAGS=-trimpath")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("link %v: %v\n%s", build, err, out)
		}
		bin := filepath.Join(bins, "example.test/m/a/a.test")
		ran, err := exec.Command(bin, "-test.v").CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", bin, err, ran)
		}
		m := regexp.MustCompile(`V=(\w+)`).FindStringSubmatch(string(ran))
		if m == nil {
			t.Fatalf("%s printed no V=:\n%s", bin, ran)
		}
		return strings.TrimSpace(string(out)), m[1]
	}
	steps := []struct {
		what   string
		change func()
		build  []string
		said   string
		v      string
	}{
		{"the first link", nil, nil, "1 test binaries linked, 0 reused", "one"},
		{"the same code again", nil, nil, "0 test binaries linked, 1 reused", "one"},
		{"a change in a package the test imports", func() {
			write("d/d.go", "package d\n\nvar v = \"two\"\n\nfunc V() string { return v }\n")
		}, nil, "1 test binaries linked, 0 reused", "two"},
		{"other link flags", nil, []string{"-ldflags=-X=example.test/m/d.v=three"}, "1 test binaries linked, 0 reused", "three"},
		// Reused, and "two": the binary the change linked was kept, and
		// the other flags' did not replace it.
		{"the first flags again", nil, nil, "0 test binaries linked, 1 reused", "two"},
	}
	for _, s := range steps {
		if s.change != nil {
			s.change()
		}
		said, v := link(mod, s.build...)
		if !strings.Contains(said, "gotest: "+s.said+" from "+cache) || v != s.v {
			t.Errorf("%s: .ci/gotest said %q and the binary's V is %q; want %q and %q", s.what, said, v, s.said, s.v)
		}
	}
	// The same code in another folder and at other commits, as clean
	// clones of later commits are: reused. The main package go test
	// generates compiles to another action ID at each commit, even an
	// empty one, and to the same content.
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("cp", "-r", mod, clone).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.test"}, args...)...)
		cmd.Dir = clone
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	for _, commit := range []string{"the first commit", "an empty commit after it"} {
		if commit != "the first commit" {
			git("commit", "-q", "--allow-empty", "-m", "two")
		}
		if said, v := link(clone); !strings.Contains(said, "gotest: 0 test binaries linked, 1 reused") || v != "two" {
			t.Errorf("the same code in another folder, at %s: .ci/gotest said %q and the binary's V is %q; want it reused, and two", commit, said, v)
		}
	}
	// One binary a package and flags: the cache does not grow with every
	// change.
	kept, _ := filepath.Glob(filepath.Join(cache, "example.test/m/a", "*.test"))
	if len(kept) != 2 {
		t.Errorf("the cache holds %d binaries of a (%v), want 2: one for each set of flags", len(kept), kept)
	}
}
