package gate

import (
	"os"
	"path/filepath"
	"testing"
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
