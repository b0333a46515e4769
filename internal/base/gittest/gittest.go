// Package gittest builds real git repositories for tests with the git CLI,
// with fixed identities and dates so hashes repeat from run to run.
package gittest

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Repo is a git repository in a test's temp folder.
type Repo struct {
	t    testing.TB
	Dir  string
	tick int
}

// New makes an empty repository whose first branch is main.
func New(t testing.TB) *Repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("these tests build real repositories with the git CLI: install git (%v)", err)
	}
	r := &Repo{t: t, Dir: t.TempDir()}
	// No template: git's sample hooks are a dozen files that every Copy
	// of the repository would copy again.
	r.Git("init", "-q", "-b", "main", "--template=")
	return r
}

// Open wraps an existing folder (a clone) so Git runs there.
func Open(t testing.TB, dir string) *Repo {
	return &Repo{t: t, Dir: dir, tick: 500}
}

// Env is the environment every git command runs with: no user or system
// config, a fixed identity, a clock that the caller advances, and no
// automatic maintenance, which git commit otherwise starts as a process
// of its own after every commit (on a 2-core machine whose system calls
// are slow, 14 ms of each commit's 35).
func (r *Repo) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	date := fmt.Sprintf("%d +0000", 1700000000+r.tick*60)
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+r.Dir,
		"GIT_AUTHOR_NAME=Gate Test", "GIT_AUTHOR_EMAIL=gate@example.test",
		"GIT_COMMITTER_NAME=Gate Test", "GIT_COMMITTER_EMAIL=gate@example.test",
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date, "LC_ALL=C",
		"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=maintenance.auto", "GIT_CONFIG_VALUE_0=false",
		"GIT_CONFIG_KEY_1=gc.auto", "GIT_CONFIG_VALUE_1=0")
}

// Git runs git in the repository and returns its trimmed stdout.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = r.env()
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		r.t.Fatalf("git %s in %s: %v: %s", strings.Join(args, " "), r.Dir, err, msg)
	}
	return strings.TrimSpace(string(out))
}

// Write writes files (path -> content) into the worktree; content "" removes.
func (r *Repo) Write(files map[string]string) {
	r.t.Helper()
	for p, c := range files {
		full := filepath.Join(r.Dir, filepath.FromSlash(p))
		if c == "" {
			if err := os.Remove(full); err != nil {
				r.t.Fatalf("removing %s: %v", p, err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatalf("making the folder of %s: %v", p, err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			r.t.Fatalf("writing %s: %v", p, err)
		}
	}
}

// Commit writes files, commits everything and returns the new hash.
func (r *Repo) Commit(msg string, files map[string]string) string {
	r.t.Helper()
	r.Write(files)
	r.tick++
	r.Git("add", "-A")
	r.Git("commit", "-q", "--allow-empty", "-m", msg)
	return r.Git("rev-parse", "HEAD")
}

// Merge merges branch into the current branch with a merge commit.
func (r *Repo) Merge(branch, msg string) string {
	r.t.Helper()
	r.tick++
	r.Git("merge", "-q", "--no-ff", "-m", msg, branch)
	return r.Git("rev-parse", "HEAD")
}

// Tag makes an annotated tag when annotated, else a lightweight one.
func (r *Repo) Tag(name, rev string, annotated bool) {
	r.t.Helper()
	if annotated {
		r.tick++
		r.Git("tag", "-a", "-m", "release "+name, name, rev)
		return
	}
	r.Git("tag", name, rev)
}

// Clone clones the repository (file:// so --depth is honoured) into a new
// temp folder with extra clone args, and returns the clone.
func (r *Repo) Clone(args ...string) *Repo {
	r.t.Helper()
	dst := filepath.Join(r.t.TempDir(), "clone")
	full := append([]string{"clone", "-q"}, args...)
	full = append(full, "file://"+r.Dir, dst)
	r.Git(full...)
	return Open(r.t, dst)
}

// Copy copies the repository, its history and work tree, into a new temp
// folder of t, keeping its clock, so the copy's next commits have the
// hashes the original's would have had: a history made once and then
// branched by many parallel tests costs each a copy, not a git process
// a step.
func (r *Repo) Copy(t testing.TB) *Repo {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(r.Dir)); err != nil {
		t.Fatalf("copying the repository %s: %v", r.Dir, err)
	}
	return &Repo{t: t, Dir: dst, tick: r.tick}
}

// Files reads the files under root as path (slash-separated, relative to
// root) -> content: a fixture folder ready for Commit.
func Files(t testing.TB, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatalf("reading the fixture %s: %v", root, err)
	}
	return files
}
