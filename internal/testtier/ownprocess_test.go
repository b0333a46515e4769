package testtier

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// fixtureEnv makes TestOwnProcessFixture's body fail or skip, for
// TestOwnProcessReportsTheChild.
const fixtureEnv = "PERFGATE_TESTTIER_FIXTURE"

// Run plainly, the fixture's body runs in a child of the test binary: the
// child's parent is this binary, and the child runs no other test.
func TestOwnProcessFixture(t *testing.T) {
	if !OwnProcess(t) {
		return
	}
	switch os.Getenv(fixtureEnv) {
	case "fail":
		t.Fatal("the fixture fails as asked")
	case "skip":
		// Only TestOwnProcessReportsTheChild asks for it, in the short
		// tier and out of it, to see the parent relay or refuse the skip.
		t.Skip("the fixture skips as asked")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", os.Getppid()))
	if err != nil {
		t.Fatal(err)
	}
	if parent != self {
		t.Errorf("the body ran in %s, a child of %s: want a child of the test binary", self, parent)
	}
	if got := os.Getenv(aloneEnv); got != t.Name() {
		t.Errorf("%s=%q in the child, want %q", aloneEnv, got, t.Name())
	}
}

// The parent test fails with the child's output when the child fails,
// and skips with the child's reason when it skips.
func TestOwnProcessReportsTheChild(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode   string
		short  bool
		failed bool
		want   []string
	}{
		{"", false, false, []string{"--- PASS: TestOwnProcessFixture"}},
		{"fail", false, true, []string{"the fixture fails as asked", "TestOwnProcessFixture failed in its own process", "--- FAIL: TestOwnProcessFixture"}},
		{"skip", true, false, []string{"--- SKIP: TestOwnProcessFixture", "in its own process: ", "the fixture skips as asked"}},
		// Outside the short tier a skip is a test that did not run.
		{"skip", false, true, []string{"skipped in its own process outside the short tier", "the fixture skips as asked", "--- FAIL: TestOwnProcessFixture"}},
	} {
		t.Run(fmt.Sprintf("mode %s short %v", tc.mode, tc.short), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run", "^TestOwnProcessFixture$", "-test.v", "-test.count", "1", fmt.Sprintf("-test.short=%v", tc.short))
			cmd.Env = append(os.Environ(), fixtureEnv+"="+tc.mode)
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.failed {
				t.Errorf("the test binary's error %v, want failed %v:\n%s", err, tc.failed, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
