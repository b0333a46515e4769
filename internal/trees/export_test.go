package trees_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/base/gittest"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/trees"
)

// sampleRepo holds every kind of entry an export must write.
func sampleRepo(t *testing.T) (*gittest.Repo, string) {
	t.Helper()
	r := gittest.New(t)
	r.Write(map[string]string{
		"README.md":               "readme\n",
		"perf/gate.toml":          "build = \"make\"\n",
		"scripts/perf/gate.sh":    "#!/bin/sh\necho gate\n",
		"deep/a/b/c/d.txt":        "deep\n",
		"space name/file 1.txt":   "spaces\n",
		"bin/tool":                "#!/bin/sh\n",
		".gitignore":              "target/\n",
		".github/workflows/x.yml": "on: push\n",
	})
	for _, x := range []string{"scripts/perf/gate.sh", "bin/tool"} {
		if err := os.Chmod(filepath.Join(r.Dir, x), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"link-to-readme":      "README.md",
		"perf/link-up":        "../scripts/perf/gate.sh",
		"dangling":            "no/such/file",
		"absolute":            "/etc/hostname",
		"deep/link-to-folder": "a/b",
	} {
		if err := os.Symlink(target, filepath.Join(r.Dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	r.Git("add", "-A")
	// A submodule is a gitlink entry; git archive writes an empty folder.
	r.Git("update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",vendor/sub")
	// Committed without `add -A`, which would drop the gitlink again.
	r.Git("commit", "-q", "-m", "sample tree")
	return r, r.Git("rev-parse", "HEAD")
}

type entry struct {
	mode    fs.FileMode
	content string
	mtime   int64
}

// snapshot reads a folder: every path's type and permission bits, file
// content or link target, and file mtimes.
func snapshot(t *testing.T, root string) map[string]entry {
	t.Helper()
	got := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := entry{mode: info.Mode() & (fs.ModeType | fs.ModePerm)}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			e.content, err = os.Readlink(p)
		case info.Mode().IsRegular():
			var b []byte
			b, err = os.ReadFile(p)
			e.content = string(b)
			e.mtime = info.ModTime().Unix()
		}
		got[filepath.ToSlash(rel)] = e
		return err
	})
	if err != nil {
		t.Fatalf("reading %s: %v", root, err)
	}
	return got
}

// gitArchive is the reference: git archive | tar -x, with the archive's
// umask at 022 so its modes are 0644/0755 like an export's.
func gitArchive(t *testing.T, r *gittest.Repo, commit string) string {
	t.Helper()
	dst := t.TempDir()
	cmd := exec.Command("sh", "-c", `git -c tar.umask=0022 archive "$1" | tar -x -p -f - -C "$2"`, "sh", commit, dst)
	cmd.Dir = r.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git archive | tar -x: %v: %s", err, out)
	}
	return dst
}

func TestExportMatchesGitArchive(t *testing.T) {
	r, commit := sampleRepo(t)
	want := snapshot(t, gitArchive(t, r, commit))
	dest := filepath.Join(t.TempDir(), "target", "perf-base")
	if err := trees.Export(context.Background(), r.Dir, commit, dest); err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, dest)
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		if got[p] != want[p] {
			t.Errorf("%s: export %+v, git archive %+v", p, got[p], want[p])
		}
	}
	// The cases the comparison must have covered, so a change to the
	// sample cannot make it vacuous.
	for p, mode := range map[string]fs.FileMode{"scripts/perf/gate.sh": 0o755, "README.md": 0o644, "dangling": fs.ModeSymlink | 0o777, "vendor/sub": fs.ModeDir | 0o755} {
		if got[p].mode != mode {
			t.Errorf("%s: mode %v, want %v", p, got[p].mode, mode)
		}
	}
	if _, err := os.Stat(filepath.Join(dest, ".git")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf(".git in the export: %v", err)
	}
}

func TestExportRevisionsAndRefusals(t *testing.T) {
	r, commit := sampleRepo(t)
	r.Commit("later", map[string]string{"README.md": "changed\n"})
	t.Run("older commit by revision", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "base")
		if err := trees.Export(context.Background(), r.Dir, "HEAD~1", dest); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dest, "README.md"))
		if err != nil || string(b) != "readme\n" {
			t.Fatalf("README.md of HEAD~1 = %q, %v", b, err)
		}
	})
	t.Run("empty dest folder is used", func(t *testing.T) {
		dest := t.TempDir()
		if err := trees.Export(context.Background(), r.Dir, commit, dest); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dest, "perf", "gate.toml")); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name   string
		commit string
		dest   func(t *testing.T) string
		says   string
	}{
		{"unknown commit", "no-such-rev", func(t *testing.T) string { return filepath.Join(t.TempDir(), "x") }, "not a commit"},
		{"non-empty dest", commit, func(t *testing.T) string {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, "stale"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			return d
		}, "is not empty"},
		{"dest is a file", commit, func(t *testing.T) string {
			f := filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			return f
		}, "is not a folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := trees.Export(context.Background(), r.Dir, tc.commit, tc.dest(t))
			if err == nil || exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want a refusal mentioning %q", err, tc.says)
			}
		})
	}
}

func TestExportCancelledLeavesNothing(t *testing.T) {
	r, commit := sampleRepo(t)
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := trees.Export(ctx, r.Dir, commit, filepath.Join(parent, "base"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled export returned %v", err)
	}
	left, _ := os.ReadDir(parent)
	if len(left) != 0 {
		t.Fatalf("cancelled export left %v behind", left)
	}
}
