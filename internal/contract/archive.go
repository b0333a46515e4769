package contract

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
)

// The built arms' folders under the target folder, and where the base's tree
// is exported inside its arm.
const (
	BaseArm = "perf-base"
	HeadArm = "perf-head"
	TreeDir = "tree"
	// TreeManifest lists the exported tree's files, written before the base
	// is built in its tree, so Pack carries the tree and not its build output
	// (a cargo target folder runs to gigabytes).
	TreeManifest = "tree.files"
)

// WriteTreeManifest records the files now in armDir/tree.
func WriteTreeManifest(armDir string) error {
	root := filepath.Join(armDir, TreeDir)
	var names []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if strings.ContainsAny(rel, "\n") {
			return fmt.Errorf("the tree holds a file whose name has a line break: %q", rel)
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing the exported tree in %s: %w", root, err)
	}
	data := strings.Join(names, "\n")
	if len(names) > 0 {
		data += "\n"
	}
	return os.WriteFile(filepath.Join(armDir, TreeManifest), []byte(data), 0o644)
}

// Pack writes the built arms under dir (perf-base/ and perf-head/) into one
// gzipped tar at out, modes and symlinks kept, the base's tree limited to
// the files its manifest lists, so an attempt unpacks them and builds nothing.
func Pack(dir, out string) error {
	for _, arm := range []string{BaseArm, HeadArm} {
		if _, err := os.Stat(filepath.Join(dir, arm, ArmBinDir)); err != nil {
			return exit.Refusef("packing the arms: %s holds no built binary: run `perfgate prepare` first", filepath.Join(dir, arm))
		}
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("packing the arms: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+"-*")
	if err != nil {
		return fmt.Errorf("packing the arms: %w", err)
	}
	defer os.Remove(f.Name())
	bw := bufio.NewWriterSize(f, 1<<20)
	gz, _ := gzip.NewWriterLevel(bw, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	for _, arm := range []string{BaseArm, HeadArm} {
		keep, err := treeFilter(filepath.Join(dir, arm))
		if err != nil {
			f.Close()
			return err
		}
		if err := addDir(tw, dir, arm, keep); err != nil {
			f.Close()
			return fmt.Errorf("packing %s: %w", arm, err)
		}
	}
	for _, c := range []io.Closer{tw, gz} {
		if err := c.Close(); err != nil {
			f.Close()
			return fmt.Errorf("packing the arms: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("packing the arms: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("packing the arms: %w", err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("packing the arms: %w", err)
	}
	return os.Rename(f.Name(), out)
}

// treeFilter returns which paths under armDir/tree to keep (nil: all).
func treeFilter(armDir string) (map[string]bool, error) {
	data, err := os.ReadFile(filepath.Join(armDir, TreeManifest))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the tree manifest: %w", err)
	}
	keep := map[string]bool{}
	for _, name := range strings.Split(string(data), "\n") {
		if name == "" {
			continue
		}
		// Parents are kept too, so each directory entry carries its mode.
		for p := name; p != "." && p != "/"; p = path.Dir(p) {
			keep[p] = true
		}
	}
	return keep, nil
}

func addDir(tw *tar.Writer, root, arm string, keepTree map[string]bool) error {
	base := filepath.Join(root, arm)
	return filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if keepTree != nil {
			if inTree, ok := strings.CutPrefix(name, arm+"/"+TreeDir+"/"); ok && !keepTree[inTree] {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		} else if !fi.Mode().IsRegular() && !fi.IsDir() {
			return fmt.Errorf("%s is neither a file, a folder nor a symlink", p)
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = name
		if fi.IsDir() {
			h.Name += "/"
		}
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
}

// Unpack restores the arms an archive from Pack holds into dir, replacing
// any perf-base/ and perf-head/ already there. It is extracted beside and
// moved into place, so a broken archive leaves dir as it was.
func Unpack(in, dir string) error {
	f, err := os.Open(in)
	if err != nil {
		return exit.Refusef("unpacking the arms: %v: download the arms artifact first", err)
	}
	defer f.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("unpacking the arms: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".unpack-")
	if err != nil {
		return fmt.Errorf("unpacking the arms: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := extract(f, tmp); err != nil {
		return exit.Refusef("unpacking %s: %v: it is not an archive `perfgate pack` wrote, pack the arms again", in, err)
	}
	for _, arm := range []string{BaseArm, HeadArm} {
		if _, err := os.Stat(filepath.Join(tmp, arm, ArmBinDir)); err != nil {
			return exit.Refusef("unpacking %s: it holds no built %s arm: pack the arms again with `perfgate pack`", in, arm)
		}
	}
	for _, arm := range []string{BaseArm, HeadArm} {
		dst := filepath.Join(dir, arm)
		if err := os.RemoveAll(dst); err != nil {
			return fmt.Errorf("unpacking the arms: replacing %s: %w", dst, err)
		}
		if err := os.Rename(filepath.Join(tmp, arm), dst); err != nil {
			return fmt.Errorf("unpacking the arms: %w", err)
		}
	}
	return nil
}

type dirTime struct {
	path string
	h    *tar.Header
}

func extract(r io.Reader, root string) error {
	gz, err := gzip.NewReader(bufio.NewReaderSize(r, 1<<20))
	if err != nil {
		return err
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	var dirs []dirTime
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		name := path.Clean(strings.TrimSuffix(h.Name, "/"))
		top, _, _ := strings.Cut(name, "/")
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") || (top != BaseArm && top != HeadArm) {
			return fmt.Errorf("entry %q lies outside perf-base/ and perf-head/", h.Name)
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := noSymlinkParent(root, filepath.Dir(p)); err != nil {
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
		mode := fs.FileMode(h.Mode).Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			dirs = append(dirs, dirTime{p, h})
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			w, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(w, tr)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if err := os.Chmod(p, mode); err != nil {
				return err
			}
			_ = os.Chtimes(p, h.ModTime, h.ModTime)
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, p); err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q has type %q: only files, folders and symlinks are packed", h.Name, h.Typeflag)
		}
	}
	// Folder modes and times last: writing a file inside changes both.
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i].path) > len(dirs[j].path) })
	for _, d := range dirs {
		if err := os.Chmod(d.path, fs.FileMode(d.h.Mode).Perm()|0o700); err != nil {
			return err
		}
		_ = os.Chtimes(d.path, d.h.ModTime, d.h.ModTime)
	}
	return nil
}

// noSymlinkParent refuses to write through a symlink the archive made, which
// would let an entry land outside the target folder.
func noSymlinkParent(root, dir string) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." {
		return err
	}
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("its folder %s is a symlink", rel)
		}
	}
	return nil
}
