package services

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/compose-spec/compose-go/v2/types"
)

// fingerprint is what decides whether a service is the same in both trees.
type fingerprint struct {
	def   map[string]any    // resolved definition, paths relative to its tree
	files map[string]string // "mounted file x" / "seed file y" -> content hash
	// byPath lists the host paths outside the tree that were compared by
	// their path alone, never read.
	byPath []string
}

// contentCache remembers file hashes: many services mount the same file.
// Its context ends a walk that the plan's caller no longer waits for.
type contentCache struct {
	ctx context.Context
	mu  sync.Mutex
	m   map[string]string
}

func newContentCache(ctx context.Context) *contentCache {
	return &contentCache{ctx: ctx, m: map[string]string{}}
}

func (c *contentCache) hash(path string) (string, error) {
	c.mu.Lock()
	h, ok := c.m[path]
	c.mu.Unlock()
	if ok {
		return h, nil
	}
	h, err := hashPath(c.ctx, path)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.m[path] = h
	c.mu.Unlock()
	return h, nil
}

// pseudo holds the kernel's file systems: their files are endless or change
// on every read (/proc/kmsg blocks, /dev/zero never ends), so they are
// never walked, whatever path leads to them.
var pseudo = []string{"/proc", "/sys", "/dev"}

func isPseudo(p string) bool {
	for _, root := range pseudo {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return false
}

// hashPath hashes a file or a folder (names, modes, contents). What cannot
// be read is hashed as what it is, so two trees missing the same file
// compare equal and a file present in one tree only differs. It stops with
// ctx's error when ctx ends.
func hashPath(ctx context.Context, path string) (string, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil && isPseudo(real) {
		return "kernel file system " + real, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return "missing", nil
	}
	switch {
	case st.Mode().IsRegular():
		return hashFile(path), nil
	case st.IsDir():
		h := sha256.New()
		werr := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			rel, _ := filepath.Rel(path, p)
			if err != nil {
				fmt.Fprintf(h, "%s unreadable\n", rel)
				return nil
			}
			if d.IsDir() && isPseudo(p) {
				fmt.Fprintf(h, "%s/ kernel file system\n", rel)
				return filepath.SkipDir
			}
			info, ierr := d.Info()
			if ierr != nil {
				return nil
			}
			switch {
			case d.Type().IsRegular():
				fmt.Fprintf(h, "%s %o %s\n", rel, info.Mode().Perm(), hashFile(p))
			case d.Type()&fs.ModeSymlink != 0:
				target, _ := os.Readlink(p)
				fmt.Fprintf(h, "%s -> %s\n", rel, target)
			case d.IsDir():
				fmt.Fprintf(h, "%s/\n", rel)
			default:
				fmt.Fprintf(h, "%s %s\n", rel, info.Mode().Type())
			}
			return nil
		})
		if werr != nil {
			return "", fmt.Errorf("hashing %s: %w", path, werr)
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	default:
		// sockets, devices: their identity is their path.
		return "special " + st.Mode().Type().String(), nil
	}
}

func hashFile(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unreadable"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// relTo shows a path relative to the tree when it lies inside it.
func relTo(dir, p string) string {
	if inside(dir, p) {
		r, _ := filepath.Rel(dir, p)
		return r
	}
	return p
}

// fingerprintOf normalises a resolved service so that two trees in
// different folders compare equal when they hold the same thing, and
// clears what docker compose's own ServiceHash clears.
func fingerprintOf(l *loaded, name string, cache *contentCache) (fingerprint, error) {
	s := l.project.Services[name]
	// Copy what we clear inside: the project is shared.
	if s.Deploy != nil {
		d := *s.Deploy
		d.Replicas = nil
		s.Deploy = &d
	}
	s.Build = nil
	s.PullPolicy = ""
	s.Scale = nil
	s.DependsOn = nil
	s.Profiles = nil
	s.Name = ""
	raw, err := json.Marshal(s)
	if err != nil {
		return fingerprint{}, fmt.Errorf("encoding service %q: %w", name, err)
	}
	raw = relativise(raw, l.dir)
	def := map[string]any{}
	if err := json.Unmarshal(raw, &def); err != nil {
		return fingerprint{}, fmt.Errorf("decoding service %q: %w", name, err)
	}
	fp := fingerprint{def: def, files: map[string]string{}}
	orig := l.project.Services[name]
	for _, v := range orig.Volumes {
		if v.Type == types.VolumeTypeBind && v.Source != "" {
			if err := fp.add(l, cache, "mounted", v.Source); err != nil {
				return fingerprint{}, err
			}
		}
	}
	if orig.Build != nil && orig.Build.Context != "" && !strings.Contains(orig.Build.Context, "://") {
		// ServiceHash ignores build because the image is hashed instead;
		// here the image is not built yet, so its context stands for it.
		if err := fp.add(l, cache, "build context", orig.Build.Context); err != nil {
			return fingerprint{}, err
		}
		fp.def["build"] = map[string]any{"dockerfile": orig.Build.Dockerfile, "target": orig.Build.Target, "args": orig.Build.Args}
	}
	for _, ref := range orig.Secrets {
		if sec, ok := l.project.Secrets[ref.Source]; ok && sec.File != "" {
			if err := fp.add(l, cache, "secret", sec.File); err != nil {
				return fingerprint{}, err
			}
		}
	}
	for _, ref := range orig.Configs {
		if c, ok := l.project.Configs[ref.Source]; ok {
			if c.File != "" {
				if err := fp.add(l, cache, "config", c.File); err != nil {
					return fingerprint{}, err
				}
			} else if c.Content != "" {
				fp.files["config "+ref.Source+" (inline)"] = c.Content
			}
		}
	}
	for _, seed := range l.tree.Seeds[name] {
		if err := fp.add(l, cache, "seed", filepath.Join(l.dir, seed)); err != nil {
			return fingerprint{}, err
		}
	}
	return fp, nil
}

// add records what the service reads from path: its content when path lies
// inside the tree, its path alone when it lies outside. A host folder
// (/usr, /var/lib/docker, /proc) is the runner's, not the change's: both
// arms see the same one, hashing it is slow or endless, and the tree's
// content is what a pull request changes.
func (fp *fingerprint) add(l *loaded, cache *contentCache, kind, path string) error {
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	if !inside(l.dir, real) {
		fp.files[kind+" "+relTo(l.dir, path)] = hostPath + real
		fp.byPath = append(fp.byPath, real)
		return nil
	}
	h, err := cache.hash(real)
	if err != nil {
		return err
	}
	fp.files[kind+" "+relTo(l.dir, path)] = h
	return nil
}

// hostPath prefixes what a fingerprint holds for a path outside the tree.
const hostPath = "host path "

// inside reports whether p is dir or lies under it.
func inside(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, "../") && !filepath.IsAbs(r)
}

// relativise rewrites the tree's absolute folder inside the encoded
// service (bind sources, env_file and label_file paths, environment values
// that name a file of the tree) to ".".
func relativise(raw []byte, dir string) []byte {
	enc, _ := json.Marshal(dir)
	d := enc[1 : len(enc)-1]
	raw = bytes.ReplaceAll(raw, append(append([]byte{'"'}, d...), '/'), []byte(`"./`))
	raw = bytes.ReplaceAll(raw, append(append([]byte{'"'}, d...), '"'), []byte(`"."`))
	// A path inside a value ("--config=/tree/x") keeps its prefix: replace
	// the folder wherever it is followed by a slash.
	return bytes.ReplaceAll(raw, append(d, '/'), []byte("./"))
}

// difference names the first place two fingerprints differ, or "".
func difference(head, base fingerprint) string {
	if p, h, b := firstDiff("", head.def, base.def); p != "" {
		if strings.HasPrefix(p, "environment") {
			// Environment values often hold credentials: name the key only.
			return p + " differs"
		}
		return fmt.Sprintf("%s differs (head %s, base %s)", p, short(h), short(b))
	}
	keys := map[string]bool{}
	for k := range head.files {
		keys[k] = true
	}
	for k := range base.files {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		h, hok := head.files[k]
		b, bok := base.files[k]
		switch {
		case !hok:
			return k + " only in base"
		case !bok:
			return k + " only in head"
		case h != b:
			if strings.HasPrefix(h, hostPath) || strings.HasPrefix(b, hostPath) {
				return fmt.Sprintf("%s leads to %s in the head, %s in the base", k, where(h), where(b))
			}
			if h == "missing" || b == "missing" {
				return fmt.Sprintf("%s missing in the %s tree", k, map[bool]string{true: "head", false: "base"}[h == "missing"])
			}
			return k + " content differs"
		}
	}
	return ""
}

// where shows a path fingerprint: the host path, or "the tree".
func where(v string) string {
	if p, ok := strings.CutPrefix(v, hostPath); ok {
		return p
	}
	return "the tree"
}

// firstDiff walks two decoded JSON values in a stable order.
func firstDiff(path string, a, b any) (string, any, any) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	// A map set on one side only: name the key inside it that differs.
	if aok && b == nil {
		bm, bok = map[string]any{}, true
	}
	if bok && a == nil {
		am, aok = map[string]any{}, true
	}
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if dp, x, y := firstDiff(p, am[k], bm[k]); dp != "" {
				return dp, x, y
			}
		}
		return "", nil, nil
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			if dp, x, y := firstDiff(fmt.Sprintf("%s[%d]", path, i), as[i], bs[i]); dp != "" {
				return dp, x, y
			}
		}
		return "", nil, nil
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if bytes.Equal(ja, jb) {
		return "", nil, nil
	}
	return path, a, b
}

func short(v any) string {
	if v == nil {
		return "unset"
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
