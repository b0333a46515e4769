package base

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
)

// gitCLI runs read-only history queries with the git binary, which walks a
// large history one to two orders of magnitude faster than go-git.
type gitCLI struct {
	bin string
	dir string
}

func newGitCLI(r *git.Repository, repoDir string) (*gitCLI, error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return nil, exit.Refusef("finding the git CLI, which walks the history for the base: %w: install git", err)
	}
	dir := repoDir
	if wt, err := r.Worktree(); err == nil {
		dir = wt.Filesystem.Root()
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &gitCLI{bin: bin, dir: dir}, nil
}

// run returns git's stdout. ok is false when git exited 1, which the
// queries used here give as "no" (no merge base, not an ancestor).
func (g *gitCLI) run(ctx context.Context, args ...string) (out string, ok bool, err error) {
	// A container action runs as root over a checkout the runner's user
	// owns; git then refuses the repository as of dubious ownership unless
	// it is named safe on the command line. Only read-only commands run.
	full := append([]string{"-c", "safe.directory=" + g.dir, "-C", g.dir}, args...)
	cmd := exec.CommandContext(ctx, g.bin, full...)
	cmd.Env = gitEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0 {
			return "", false, nil
		}
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		return "", false, missingf("git %s: %s (%w)", strings.Join(args, " "), msg, err)
	}
	return strings.TrimSpace(stdout.String()), true, nil
}

// gitEnv drops GIT_* variables so a caller's GIT_DIR or GIT_INDEX_FILE
// cannot point the queries at another repository, and fixes the locale so
// messages read the same everywhere.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "LC_ALL=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
}

// mergeBase is git merge-base a b: one best common ancestor, "" when none.
func (g *gitCLI) mergeBase(ctx context.Context, a, b string) (string, error) {
	out, ok, err := g.run(ctx, "merge-base", a, b)
	if err != nil || !ok {
		return "", err
	}
	return out, nil
}

// isAncestor is git merge-base --is-ancestor a b.
func (g *gitCLI) isAncestor(ctx context.Context, a, b string) (bool, error) {
	_, ok, err := g.run(ctx, "merge-base", "--is-ancestor", a, b)
	return ok, err
}

// tagRef is a tag and the commit it names, annotated tags peeled.
type tagRef struct {
	name   string
	commit string
}

// tags lists the tags, all of them or (merged != "") those whose commits
// are reachable from merged.
func (g *gitCLI) tags(ctx context.Context, merged string) ([]tagRef, error) {
	args := []string{"for-each-ref", "--format=%(refname)%00%(objectname)%00%(*objectname)"}
	if merged != "" {
		args = append(args, "--merged="+merged)
	}
	out, _, err := g.run(ctx, append(args, "refs/tags")...)
	if err != nil {
		return nil, err
	}
	var tags []tagRef
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 3 {
			continue
		}
		c := f[2]
		if c == "" {
			c = f[1]
		}
		tags = append(tags, tagRef{name: strings.TrimPrefix(f[0], "refs/tags/"), commit: c})
	}
	return tags, nil
}

// descendants lists the commits that descend from from and lead to to
// (git rev-list --ancestry-path from..to), to included, from excluded.
func (g *gitCLI) descendants(ctx context.Context, from, to string) (map[string]bool, error) {
	out, _, err := g.run(ctx, "rev-list", "--ancestry-path", from+".."+to)
	if err != nil {
		return nil, fmt.Errorf("listing the commits after %s: %w", event.ShortSHA(from), err)
	}
	set := map[string]bool{}
	for _, h := range strings.Fields(out) {
		set[h] = true
	}
	return set, nil
}
