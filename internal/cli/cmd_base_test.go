package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/base/gittest"
	"github.com/perfgate/perfgate/internal/exit"
)

func runBaseCLI(t *testing.T, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	return runCommandErr(context.Background(), env, args...)
}

// baseTestGate is a whole gate contract (docs/contract.md): the gate file,
// the service config it names and the override file.
var baseTestGate = map[string]string{
	"perf/gate.toml": `build = "make"
binary = "bin/svc"
start = "@BIN@ serve"
check = "@BIN@ check"
config = "perf/service.toml"
config_env = "SVC_CONFIG"
prefix = "SVC__"
ready = "/health"
plan = "perf/plan.toml"
`,
	"perf/service.toml": "listen = \"127.0.0.1:@PORT@\"\n",
	"perf/arm.env":      "SVC__LOG=info\n",
	"perf/plan.toml":    "# plan\n",
}

func TestBaseAndReleaseNote(t *testing.T) {
	r := gittest.New(t)
	r.Commit("0.0.16", map[string]string{"a": "1\n"})
	r.Tag("v0.0.16", "HEAD", true)
	r.Commit("fix", map[string]string{"a": "2\n"})
	withGate := r.Commit("gate", baseTestGate)
	r.Commit("0.0.17", map[string]string{"a": "3\n"})
	r.Tag("v0.0.17", "HEAD", true)
	out := filepath.Join(t.TempDir(), "target", "perf-base", "base.md")

	stdout, stderr, err := runBaseCLI(t, nil, "base", "--event", "release", "--tag", "v0.0.17", "--repo", r.Dir, "--out", out)
	if err != nil {
		t.Fatalf("perfgate base: %v\n%s", err, stderr)
	}
	reason := "The base is `" + withGate + "`, the oldest commit after v0.0.16 that carries the gate contract, since v0.0.16 carries no perf/gate.toml."
	if stdout != reason+"\nPerformance: "+reason+"\n" {
		t.Fatalf("perfgate base printed:\n%s", stdout)
	}
	md, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(md), "- commit: `"+withGate+"`") {
		t.Fatalf("base.md = %q, %v", md, err)
	}

	stdout, _, err = runBaseCLI(t, nil, "release-note", "--base-file", out)
	if err != nil || stdout != "Performance: "+reason+"\n" {
		t.Fatalf("perfgate release-note: %q, %v", stdout, err)
	}
}

func TestBaseFromActions(t *testing.T) {
	r := gittest.New(t)
	r.Commit("root", baseTestGate)
	before := r.Commit("before", map[string]string{"a": "1\n"})
	r.Commit("pushed 1", map[string]string{"a": "2\n"})
	after := r.Commit("pushed 2", map[string]string{"a": "3\n"})
	payload, err := json.Marshal(map[string]any{
		"ref": "refs/heads/main", "before": before, "after": after, "forced": false,
		"repository": map[string]any{"full_name": "octo-org/ferrofed", "default_branch": "main"},
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, payload, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": path, "GITHUB_SHA": after}
	out := filepath.Join(t.TempDir(), "base.md")
	stdout, stderr, err := runBaseCLI(t, env, "base", "--repo", r.Dir, "--out", out)
	if err != nil {
		t.Fatalf("perfgate base: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "The base is `"+before+"`, the commit before the push.\n") {
		t.Fatalf("perfgate base printed %q", stdout)
	}
}

func TestBaseRefusals(t *testing.T) {
	r := gittest.New(t)
	r.Commit("one", map[string]string{"a": "1\n"})
	r.Tag("v1.0.0", "HEAD", false)
	r.Commit("two", map[string]string{"a": "2\n"})
	r.Tag("v1.1.0", "HEAD", false)
	dir := t.TempDir()
	stale := filepath.Join(dir, "base.md")
	// A release payload that lacks release.tag_name.
	noTag := filepath.Join(dir, "release.json")
	if err := os.WriteFile(noTag, []byte(`{"release": {"name": "v1.1.0"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	actions := func(name, path string) map[string]string {
		return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": path}
	}

	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		says string
		// removes: the run names --out and fails, so the stale base.md
		// there must be gone, whatever step refused.
		removes bool
	}{
		{"no contract anywhere", nil, []string{"base", "--event", "release", "--tag", "v1.1.0", "--repo", r.Dir, "--out", stale}, "no commit carries the gate contract", true},
		{"not in Actions and no --event", nil, []string{"base", "--repo", r.Dir, "--out", stale}, "--event", true},
		{"local flags without --event", nil, []string{"base", "--base-ref", "origin/main", "--out", stale}, "add --event", true},
		{"unknown --event", nil, []string{"base", "--event", "schedule", "--repo", r.Dir, "--out", stale}, `event "schedule" is not one the gate judges`, true},
		{"release without --tag", nil, []string{"base", "--event", "release", "--repo", r.Dir, "--out", stale}, "add --tag", true},
		{"release payload without its tag", actions("release", noTag), []string{"base", "--repo", r.Dir, "--out", stale}, "has no release.tag_name", true},
		{"an event the gate does not judge", actions("schedule", noTag), []string{"base", "--repo", r.Dir, "--out", stale}, `event "schedule" is not one the gate judges`, true},
		{"--head elsewhere than the release's tag", nil, []string{"base", "--event", "release", "--tag", "v1.0.0", "--head", "HEAD", "--repo", r.Dir, "--out", stale}, "the release's tag v1.0.0 is on", true},
		{"stray argument after --out", nil, []string{"base", "--out", stale, "origin/main"}, "unexpected argument", true},
		{"stray argument", nil, []string{"base", "origin/main"}, "unexpected argument", false},
		{"release-note without a base", nil, []string{"release-note", "--base-file", filepath.Join(dir, "none.md")}, "named no base", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(stale, []byte("- commit: `"+strings.Repeat("a", 40)+"`\nPerformance: stale\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, stderr, err := runBaseCLI(t, tc.env, tc.args...)
			if exit.Code(err) != exit.CannotJudge || !strings.Contains(stderr, tc.says) {
				t.Fatalf("exit %d, stderr %q, want exit 2 mentioning %q", exit.Code(err), stderr, tc.says)
			}
			if !tc.removes {
				return
			}
			// A following perfgate release-note must not quote the base
			// of an earlier run.
			if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the stale base.md survived the failed run: %v", err)
			}
			if _, _, err := runBaseCLI(t, nil, "release-note", "--base-file", stale); exit.Code(err) != exit.CannotJudge {
				t.Fatalf("release-note after the failed run: exit %d, want 2", exit.Code(err))
			}
		})
	}
}
