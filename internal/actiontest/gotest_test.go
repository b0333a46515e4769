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
