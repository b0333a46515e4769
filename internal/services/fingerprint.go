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
		build, err := decoded(map[string]any{"dockerfile": orig.Build.Dockerfile, "target": orig.Build.Target, "args": orig.Build.Args})
		if err != nil {
			return fingerprint{}, fmt.Errorf("encoding the build of service %q: %w", name, err)
		}
		fp.def["build"] = build
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

// decoded turns v into what JSON decodes to, so that firstDiff walks into
// its maps and names the build argument that differs, not build.args.
func decoded(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(raw, &out)
	return out, err
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
		if !valuesShown(p) || holdsHidden(h) || holdsHidden(b) {
			return p + " differs"
		}
		hs, bs := shown(h, b)
		return fmt.Sprintf("%s differs (head %s, base %s)", p, hs, bs)
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

// shownKeys are the keys of a service whose two values a plan's reason
// prints: they say what runs and where, and no compose file puts a
// credential in them. Any other key is named without its values: a
// password or a token sits in command, entrypoint, environment,
// build.args, labels, healthcheck.test, logging options or an extension
// field, written there or interpolated from .env or --env, and the plan
// is printed in job logs. Listing the safe keys, not the dangerous ones,
// keeps a key compose adds later hidden until someone looks at it.
var shownKeys = map[string]bool{
	"image": true, "platform": true, "ports": true, "expose": true,
	"volumes": true, "volumes_from": true, "tmpfs": true, "devices": true,
	"networks": true, "network_mode": true, "extra_hosts": true,
	"dns": true, "dns_search": true, "hostname": true, "domainname": true,
	"container_name": true, "restart": true, "user": true, "group_add": true,
	"working_dir": true, "read_only": true, "init": true, "privileged": true,
	"cap_add": true, "cap_drop": true, "pid": true, "ipc": true, "uts": true,
	"userns_mode": true, "runtime": true, "isolation": true, "sysctls": true,
	"ulimits": true, "shm_size": true, "cpus": true, "cpu_count": true,
	"cpu_percent": true, "cpu_period": true, "cpu_quota": true,
	"cpu_shares": true, "cpuset": true, "mem_limit": true,
	"mem_reservation": true, "memswap_limit": true, "mem_swappiness": true,
	"pids_limit": true, "oom_kill_disable": true, "oom_score_adj": true,
	"stop_signal": true, "stop_grace_period": true, "env_file": true,
	"label_file": true, "tty": true, "stdin_open": true, "attach": true,
	"healthcheck.interval": true, "healthcheck.timeout": true,
	"healthcheck.retries": true, "healthcheck.start_period": true,
	"healthcheck.start_interval": true, "healthcheck.disable": true,
	"deploy.resources": true, "deploy.restart_policy": true,
	"build.dockerfile": true, "build.target": true,
}

// hiddenParts are parts of a path whose values stay hidden even under a
// shown key: free-form options and labels (a network's driver_opts can
// hold a password).
var hiddenParts = map[string]bool{"labels": true, "options": true, "driver_opts": true}

// valuesShown reports whether a reason may print the values at path
// ("ports[0].published", "build.args.NPM_TOKEN").
func valuesShown(path string) bool {
	parts := strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
	for _, part := range parts {
		if strings.HasPrefix(part, "x-") || hiddenParts[part] {
			return false
		}
	}
	for i := 1; i <= len(parts) && i <= 2; i++ {
		if shownKeys[strings.Join(parts[:i], ".")] {
			return true
		}
	}
	return false
}

// holdsHidden reports whether v holds a key whose value stays hidden: a
// whole list of volumes differs when one side has one more, and a mount
// may carry labels.
func holdsHidden(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if strings.HasPrefix(k, "x-") || hiddenParts[k] || holdsHidden(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if holdsHidden(x) {
				return true
			}
		}
	}
	return false
}

// Longest text shown for one value, and how much of what both values
// share is kept at least before the first place they differ.
const (
	shownMax    = 60
	shownBefore = 20
)

// shown renders the two values of a difference. A long value is cut
// around the first place the two differ, the same way on both sides, with
// "…" where text was left out: cut at the end alone, two long image
// references that differ only in their tag would print the same text.
func shown(h, b any) (string, string) {
	ht, hquoted := valueText(h)
	bt, bquoted := valueText(b)
	hr, br := []rune(ht), []rune(bt)
	start := 0
	if len(hr) > shownMax || len(br) > shownMax {
		same := 0
		if h != nil && b != nil {
			for same < len(hr) && same < len(br) && hr[same] == br[same] {
				same++
			}
		}
		// Where the rest after the difference is short, more of what
		// comes before it is kept: the full width is used.
		start = max(min(same-shownBefore, max(len(hr), len(br))-shownMax), 0)
	}
	return cutAt(h, hr, start, hquoted), cutAt(b, br, start, bquoted)
}

// valueText is v as text to compare and cut: a string's own characters
// (quoted after cutting, so an escape is never cut in half), anything else
// as JSON.
func valueText(v any) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	return jsonText(v), false
}

// cutAt shows the runes of v from start, at most shownMax of them.
func cutAt(v any, r []rune, start int, quoted bool) string {
	if v == nil {
		return "unset"
	}
	s := string(r[start:min(start+shownMax, len(r))])
	if start > 0 {
		s = "…" + s
	}
	if start+shownMax < len(r) {
		s += "…"
	}
	if quoted {
		return jsonText(s)
	}
	return s
}

// jsonText encodes v as JSON without escaping <, > and &, which a reader
// of a command line or a URL wants to see as they are.
func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
