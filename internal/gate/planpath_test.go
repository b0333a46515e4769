package gate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perfgate/perfgate/internal/contract"
)

// TestRepoPath: the report's plan path is relative to the repository root
// however the command line named the plan, since GitHub annotates a file
// by its path in the repository.
func TestRepoPath(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	worktree := filepath.Join(root, "head")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, "perf"), filepath.Join(worktree, "perf"), filepath.Join(root, "loose")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A worktree's .git is a file naming the repository's.
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: ../repo/.git/worktrees/head\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	t.Chdir(filepath.Join(repo, "perf"))
	for _, tc := range []struct {
		plan, env, want string
	}{
		{filepath.Join(repo, "perf", "plan.toml"), "", "perf/plan.toml"},
		{"plan.toml", "", "perf/plan.toml"}, // relative to a subfolder
		{"../perf/./plan.toml", "", "perf/plan.toml"},
		{filepath.Join(worktree, "perf", "plan.toml"), "", "perf/plan.toml"},
		{filepath.Join(root, "loose", "plan.toml"), "", ""},
		{filepath.Join(root, "loose", "plan.toml"), root, "loose/plan.toml"},
		{filepath.Join(root, "loose", "plan.toml"), filepath.Join(root, "else"), ""},
		{"", "", ""},
	} {
		getenv := noEnv
		if tc.env != "" {
			getenv = func(k string) string {
				if k == "GITHUB_WORKSPACE" {
					return tc.env
				}
				return ""
			}
		}
		if got := repoPath(tc.plan, getenv); got != tc.want {
			t.Errorf("repoPath(%q, GITHUB_WORKSPACE=%q) = %q, want %q", tc.plan, tc.env, got, tc.want)
		}
	}
}

// TestArmPlanPath: a run that reads the exported head arm's plan reports
// the plan's path in the repository, which GitHub can annotate, not the
// copy's path under target/perf-run (issue 20, item 9).
func TestArmPlanPath(t *testing.T) {
	tree := filepath.Join(t.TempDir(), "target", "perf-run", "arms", "perf-head", "contract")
	for _, tc := range []struct {
		name, given, plan, want string
	}{
		{"the default plan", "", "perf/plan.toml", "perf/plan.toml"},
		{"a named plan", "", "perf/search.toml", "perf/search.toml"},
		{"a plan given on the command line", "perf/plan.toml", "perf/plan.toml", ""},
		{"a plan outside the tree", "", "../plan.toml", ""},
		{"an absolute plan", "", "/etc/plan.toml", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := &contract.Contract{Tree: tree, Plan: tc.plan}
			if got := armPlanPath(tc.given, head); got != tc.want {
				t.Errorf("armPlanPath(%q, plan %q in %s) = %q, want %q", tc.given, tc.plan, tree, got, tc.want)
			}
		})
	}
}
