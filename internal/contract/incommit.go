package contract

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/perfgate/perfgate/internal/exit"
)

// InCommit tells whether commit c carries a gate contract an arm can boot
// with: a gate file that parses, its service config, and either its override
// file or a legacy script whose function sets a prefixed variable. why says,
// after "since <commit> ", what it lacks, in the words the release notes use.
// err is for objects the repository cannot read, not for a missing contract.
func InCommit(c *object.Commit) (ok bool, why string, err error) {
	tree, err := c.Tree()
	if err != nil {
		return false, "", fmt.Errorf("reading the tree of %s: %w", c.Hash, err)
	}
	gate, found, err := blob(tree, GateFile)
	if err != nil || !found {
		return false, "carries no " + GateFile, err
	}
	ct, perr := parse(gate)
	if perr != nil {
		return false, fmt.Sprintf("carries a %s that does not parse (%v)", GateFile, perr), nil
	}
	if _, found, err := blob(tree, ct.Config); err != nil || !found {
		return false, fmt.Sprintf("carries a %s whose service config %s is missing", GateFile, ct.Config), err
	}
	if _, found, err := blob(tree, ct.Overrides); err != nil || found {
		return found, "", err
	}
	if ct.Legacy == nil {
		return false, fmt.Sprintf("carries neither %s nor a legacy script whose function sets %s overrides", ct.Overrides, ct.Prefix), nil
	}
	return legacyInTree(c, tree, ct)
}

// legacyInTree tells whether the commit's tree holds ct's legacy script
// and its function sets a variable of ct's prefix.
func legacyInTree(c *object.Commit, tree *object.Tree, ct *Contract) (ok bool, why string, err error) {
	neither := fmt.Sprintf("carries neither %s nor a %s whose %s() sets a gateway's overrides", ct.Overrides, ct.Legacy.Script, ct.Legacy.Function)
	script, found, err := blob(tree, ct.Legacy.Script)
	if err != nil || !found {
		return false, neither, err
	}
	// The script alone is evaluated: a helper it sources from elsewhere in
	// the tree is missing here, and the commit then counts as carrying none.
	dir, err := os.MkdirTemp("", "perfgate-incommit-")
	if err != nil {
		return false, "", fmt.Errorf("checking the legacy contract of %s: %w", c.Hash, err)
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, filepath.FromSlash(ct.Legacy.Script))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false, "", fmt.Errorf("checking the legacy contract of %s: %w", c.Hash, err)
	}
	if err := os.WriteFile(p, script, 0o755); err != nil {
		return false, "", fmt.Errorf("checking the legacy contract of %s: %w", c.Hash, err)
	}
	if _, err := Derive(context.Background(), dir, *ct.Legacy, ct.Prefix); err != nil {
		if exit.Code(err) == exit.CannotJudge {
			return false, neither, nil
		}
		return false, "", err
	}
	return true, "", nil
}

// blob reads a file of a commit's tree; found is false when there is none.
// name is cleaned first, as the file system cleans it for Load: a gate
// file's config = "./perf/svc.toml" names a file the tree has, and the
// commit carries the contract.
func blob(t *object.Tree, name string) (data []byte, found bool, err error) {
	f, err := t.File(path.Clean(filepath.ToSlash(name)))
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", name, err)
	}
	s, err := f.Contents()
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", name, err)
	}
	return []byte(s), true, nil
}
