package services

import (
	"bytes"
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
}

// contentCache remembers file hashes: many services mount the same file.
type contentCache struct {
	mu sync.Mutex
	m  map[string]string
}

func (c *contentCache) hash(path string) string {
	c.mu.Lock()
	h, ok := c.m[path]
	c.mu.Unlock()
	if ok {
		return h
	}
	h = hashPath(path)
	c.mu.Lock()
	c.m[path] = h
	c.mu.Unlock()
	return h
}

// hashPath hashes a file or a folder (names, modes, contents). What cannot
// be read is hashed as what it is, so two trees missing the same file
// compare equal and a file present in one tree only differs.
func hashPath(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "missing"
	}
	switch {
	case st.Mode().IsRegular():
		return hashFile(path)
	case st.IsDir():
		h := sha256.New()
		_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			rel, _ := filepath.Rel(path, p)
			if err != nil {
				fmt.Fprintf(h, "%s unreadable\n", rel)
				return nil
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
		return hex.EncodeToString(h.Sum(nil))
	default:
		// sockets, devices: their identity is their path.
		return "special " + st.Mode().Type().String()
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
	if r, err := filepath.Rel(dir, p); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
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
			fp.files["mounted "+relTo(l.dir, v.Source)] = cache.hash(v.Source)
		}
	}
	if orig.Build != nil && orig.Build.Context != "" && !strings.Contains(orig.Build.Context, "://") {
		// ServiceHash ignores build because the image is hashed instead;
		// here the image is not built yet, so its context stands for it.
		fp.files["build context "+relTo(l.dir, orig.Build.Context)] = cache.hash(orig.Build.Context)
		fp.def["build"] = map[string]any{"dockerfile": orig.Build.Dockerfile, "target": orig.Build.Target, "args": orig.Build.Args}
	}
	for _, ref := range orig.Secrets {
		if sec, ok := l.project.Secrets[ref.Source]; ok && sec.File != "" {
			fp.files["secret "+relTo(l.dir, sec.File)] = cache.hash(sec.File)
		}
	}
	for _, ref := range orig.Configs {
		if c, ok := l.project.Configs[ref.Source]; ok {
			if c.File != "" {
				fp.files["config "+relTo(l.dir, c.File)] = cache.hash(c.File)
			} else if c.Content != "" {
				fp.files["config "+ref.Source+" (inline)"] = c.Content
			}
		}
	}
	for _, seed := range l.tree.Seeds[name] {
		fp.files["seed "+filepath.ToSlash(filepath.Clean(seed))] = cache.hash(filepath.Join(l.dir, seed))
	}
	return fp, nil
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
			if h == "missing" || b == "missing" {
				return fmt.Sprintf("%s missing in the %s tree", k, map[bool]string{true: "head", false: "base"}[h == "missing"])
			}
			return k + " content differs"
		}
	}
	return ""
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
