// Package trees writes a commit's tree into a folder, as `git archive
// <commit> | tar -x` would: regular files 0644, executables 0755, symlinks
// as symlinks, submodules as empty folders, no .git, every mtime the
// commit's time. It is how the base arm gets its own tree (the head arm is
// the checkout itself).
package trees

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
)

// Export writes commit's tree (any revision) from the repository at or
// above repoDir into dest. dest must not exist or be an empty folder. The
// tree is written into a sibling folder and renamed into place, so an
// export that fails or is cancelled leaves dest as it was.
//
// Unlike git archive, .gitattributes export-ignore and export-subst are not
// applied: an arm is built from its whole tree.
func Export(ctx context.Context, repoDir, commit, dest string) error {
	r, err := git.PlainOpenWithOptions(repoDir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return exit.Refusef("exporting %s: opening the git repository at %s: %w", commit, repoDir, err)
	}
	h, err := r.ResolveRevision(plumbing.Revision(commit))
	if err != nil {
		return exit.Refusef("exporting %s: it is not a commit of %s: %w", commit, repoDir, err)
	}
	c, err := r.CommitObject(*h)
	if err != nil {
		return exit.Refusef("exporting %s: reading commit %s: %w (a shallow or partial clone lacks it: set fetch-depth: 0)", commit, h, err)
	}
	tree, err := c.Tree()
	if err != nil {
		return exit.Refusef("exporting %s: reading its tree: %w", commit, err)
	}
	if err := checkDest(dest); err != nil {
		return err
	}
	parent := filepath.Dir(filepath.Clean(dest))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("exporting %s: making %s: %w", commit, parent, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dest)+".partial-")
	if err != nil {
		return fmt.Errorf("exporting %s: %w", commit, err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	mtime := c.Committer.When
	if err := writeTree(ctx, r, tree, tmp, mtime); err != nil {
		return fmt.Errorf("exporting %s into %s: %w", event.ShortSHA(h.String()), dest, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("exporting %s: %w", commit, err)
	}
	// An empty dest folder is replaced; rename cannot replace it directly.
	if err := os.Remove(dest); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("exporting %s: replacing the empty folder %s: %w", commit, dest, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("exporting %s: moving the tree into %s: %w", commit, dest, err)
	}
	done = true
	return os.Chtimes(dest, mtime, mtime)
}

func checkDest(dest string) error {
	st, err := os.Lstat(dest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking the export folder %s: %w", dest, err)
	}
	if !st.IsDir() {
		return exit.Refusef("the export folder %s exists and is not a folder: remove it or export elsewhere", dest)
	}
	ents, err := os.ReadDir(dest)
	if err != nil {
		return fmt.Errorf("checking the export folder %s: %w", dest, err)
	}
	if len(ents) > 0 {
		return exit.Refusef("the export folder %s is not empty: remove it (a stale tree would mix with the new one) or export elsewhere", dest)
	}
	return nil
}

// safeName refuses names a hostile tree could use to write outside dest.
// Git itself refuses them on checkout; an export must too.
func safeName(name string) bool {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return false
	}
	return !strings.EqualFold(name, ".git")
}

func writeTree(ctx context.Context, r *git.Repository, tree *object.Tree, root string, mtime time.Time) error {
	w := object.NewTreeWalker(tree, true, nil)
	defer w.Close()
	var dirs []string
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, entry, err := w.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("walking the tree: %w", err)
		}
		for _, part := range strings.Split(name, "/") {
			if !safeName(part) {
				return fmt.Errorf("tree entry %q: refusing a path that leaves the tree or writes .git", name)
			}
		}
		path := filepath.Join(root, filepath.FromSlash(name))
		switch entry.Mode {
		case filemode.Dir, filemode.Submodule:
			// git archive writes a submodule as an empty folder.
			if err := os.Mkdir(path, 0o755); err != nil {
				return fmt.Errorf("making %s: %w", name, err)
			}
			dirs = append(dirs, path)
		case filemode.Regular, filemode.Deprecated:
			if err := writeBlob(r, name, entry.Hash, path, 0o644, mtime); err != nil {
				return err
			}
		case filemode.Executable:
			if err := writeBlob(r, name, entry.Hash, path, 0o755, mtime); err != nil {
				return err
			}
		case filemode.Symlink:
			target, err := readBlob(r, entry.Hash)
			if err != nil {
				return fmt.Errorf("reading symlink %s: %w", name, err)
			}
			if err := os.Symlink(string(target), path); err != nil {
				return fmt.Errorf("making symlink %s: %w", name, err)
			}
		default:
			return fmt.Errorf("tree entry %q has mode %o, which no checkout writes", name, uint32(entry.Mode))
		}
	}
	// Folder mtimes last: writing into a folder moves its mtime.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chtimes(dirs[i], mtime, mtime); err != nil {
			return fmt.Errorf("setting the time of %s: %w", dirs[i], err)
		}
	}
	return nil
}

func readBlob(r *git.Repository, h plumbing.Hash) ([]byte, error) {
	b, err := r.BlobObject(h)
	if err != nil {
		return nil, err
	}
	rc, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func writeBlob(r *git.Repository, name string, h plumbing.Hash, path string, perm os.FileMode, mtime time.Time) error {
	b, err := r.BlobObject(h)
	if err != nil {
		return fmt.Errorf("reading %s: %w (a partial clone lacks blobs: set filter to none)", name, err)
	}
	rc, err := b.Reader()
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	defer rc.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	// The process umask must not decide an arm's modes (a 0077 umask would
	// make a build script unreadable to the build's user).
	if err := os.Chmod(path, perm); err != nil {
		return fmt.Errorf("setting the mode of %s: %w", name, err)
	}
	return os.Chtimes(path, mtime, mtime)
}
