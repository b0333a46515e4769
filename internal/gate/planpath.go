package gate

import (
	"os"
	"path/filepath"
	"strings"
)

// repoPath is the plan's path relative to the root of the repository
// holding it (perf/plan.toml), with forward slashes: GitHub annotates a
// file by that path, while the command line may have named the plan
// absolutely, from a subfolder, or inside a checkout of the head. The root
// is the nearest folder above the plan with a .git (a folder, or a file in
// a worktree or submodule); without one, GITHUB_WORKSPACE when the plan
// lies under it. It is "" when the plan lies in no repository.
func repoPath(planPath string, getenv func(string) string) string {
	if planPath == "" {
		return ""
	}
	abs, err := filepath.Abs(planPath)
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(abs); ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return relative(dir, abs)
		}
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
	}
	if ws := getenv("GITHUB_WORKSPACE"); ws != "" {
		if w, err := filepath.Abs(ws); err == nil {
			return relative(w, abs)
		}
	}
	return ""
}

// relative is abs under root with forward slashes, or "" when it is not
// under root.
func relative(root, abs string) string {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(rel)
}
