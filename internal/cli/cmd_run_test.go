package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/perfgate/perfgate/internal/base/gittest"
	"github.com/perfgate/perfgate/internal/exampleservice"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/testslot"
	"github.com/perfgate/perfgate/internal/testtier"
)

// useExampled builds the example service once for the test binary and
// points PERFGATE_TEST_EXAMPLED at it, the path exampleTree's build copies.
// It sets the process's environment rather than the test's (t.Setenv), to
// one value for the binary's whole life, so the measured gates that read
// it can run side by side (t.Parallel refuses a test that called
// t.Setenv); TestMain removes the folder.
func useExampled(t *testing.T) {
	t.Helper()
	exampled.Do(func() {
		if exampled.dir, exampled.err = os.MkdirTemp("", "perfgate-cli-exampled-"); exampled.err != nil {
			return
		}
		var bin string
		if bin, exampled.err = exampleservice.Build(context.Background(), exampled.dir); exampled.err == nil {
			exampled.err = os.Setenv("PERFGATE_TEST_EXAMPLED", bin)
		}
	})
	if exampled.err != nil {
		t.Fatalf("building the example service: %v", exampled.err)
	}
}

var exampled struct {
	sync.Once
	dir string
	err error
}

// exampleTree is a repository whose service is the example service, its
// knobs set through the overrides (EXAMPLED_ variables) of perf/arm.env.
func exampleTree(armEnv string) map[string]string {
	return map[string]string{
		"perf/gate.toml": `build = "mkdir -p bin && cp \"$PERFGATE_TEST_EXAMPLED\" bin/svc"
binary = "bin/svc"
start = "@BIN@ --addr 127.0.0.1:@PORT@"
check = "true"
config = "perf/service.toml"
config_env = "SVC_CONFIG"
prefix = "EXAMPLED_"
ready = "/healthz"
`,
		"perf/service.toml": "addr = \"127.0.0.1:@PORT@\"\n",
		"perf/arm.env":      armEnv,
		"perf/plan.toml": `[[group]]
name = "hello"
path = "/hello"
expect = 200

[[group]]
name = "item"
path = "/items/7"
expect = 200
`,
	}
}

// The whole gate over a real repository: prepare resolves the PR's merge
// base and builds both arms from their own trees; run boots each with its
// own overrides (the head's make it twice as slow: at this short profile a
// busy machine's scatter can hide 50 %) and fails naming p50.
func TestMeasuredRunOverPreparedArms(t *testing.T) {
	t.Parallel()
	// Before the repository and prepare: the short tier skips it at once.
	testtier.Heavy(t, testtier.Gate)
	useExampled(t)
	r := gittest.New(t)
	r.Git("checkout", "-q", "-b", "main")
	baseCommit := r.Commit("gate", exampleTree("EXAMPLED_LATENCY=4ms\n"))
	r.Git("checkout", "-q", "-b", "slow")
	r.Commit("slower", exampleTree("EXAMPLED_LATENCY=4ms\nEXAMPLED_LATENCY_FACTOR=2\n"))

	target := filepath.Join(t.TempDir(), "target")
	if _, stderr, err := runBaseCLI(t, nil, "prepare", "--event", "pull_request", "--base-ref", "main", "--repo", r.Dir, "--out", target); err != nil {
		t.Fatalf("perfgate prepare: %v\n%s", err, stderr)
	}
	// A run that cannot be judged (the shared runner stalled) says nothing
	// about the code and runs again, as the product's retry rule does.
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
	if !strings.Contains(err.Error(), "p50.") {
		t.Errorf("the regression does not name a p50 metric: %v", err)
	}
	if !strings.Contains(stdout, baseCommit[:12]) {
		t.Errorf("the summary does not name the base %s:\n%s", baseCommit, stdout)
	}
	for _, f := range []string{"latest.json", "summary.md", "base/service.toml", "head/service.toml"} {
		if _, err := os.Stat(filepath.Join(target, "perf-run", f)); err != nil {
			t.Errorf("run left no %s: %v", f, err)
		}
	}
}
