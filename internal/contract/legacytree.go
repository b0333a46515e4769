package contract

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// InCommitWith is InCommit for a head whose gate file declares how to read
// legacy trees ([legacy]): a commit with no gate file of its own still
// carries the contract when its tree holds the head's service config and
// either the head's override file or the head's legacy script whose
// function sets a prefixed variable. FerroFED's older releases are such
// trees: no perf/gate.toml, only scripts/perf/gate.sh's gateway_env().
// Such a commit's why is then FerroFED's gate's sentence ("carries neither
// perf/arm.env nor a scripts/perf/gate.sh whose gateway_env() sets a
// gateway's overrides"), which the release-notes line quotes.
func InCommitWith(head *Contract) func(*object.Commit) (bool, string, error) {
	return func(c *object.Commit) (bool, string, error) {
		ok, why, err := InCommit(c)
		if err != nil || ok || head == nil || head.Legacy == nil {
			return ok, why, err
		}
		tree, err := c.Tree()
		if err != nil {
			return false, "", fmt.Errorf("reading the tree of %s: %w", c.Hash, err)
		}
		if _, found, err := blob(tree, GateFile); err != nil || found {
			// Its own gate file decides, as InCommit said.
			return ok, why, err
		}
		if _, found, err := blob(tree, head.Config); err != nil || !found {
			return false, fmt.Sprintf("carries no %s and no service config %s", GateFile, head.Config), err
		}
		if _, found, err := blob(tree, head.Overrides); err != nil || found {
			return found, "", err
		}
		return legacyInTree(c, tree, head)
	}
}

// LoadBase reads the base's contract from its exported tree: its own gate
// file when it has one, else, when the head's gate file declares how to
// read legacy trees, the head's gate file over the base's tree (its
// config, and its override file or legacy script). The head's gate file is
// then what prepare keeps beside the base's build.
func LoadBase(treeDir string, head *Contract) (*Contract, error) {
	_, err := os.Stat(filepath.Join(treeDir, filepath.FromSlash(GateFile)))
	if err == nil || !errors.Is(err, fs.ErrNotExist) || head == nil || head.Legacy == nil || head.gate == nil {
		return Load(treeDir)
	}
	c, err := parse(head.gate)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(treeDir)
	if err != nil {
		return nil, fmt.Errorf("reading the legacy contract of %s: %w", treeDir, err)
	}
	c.Tree, c.gate, c.gateFromHead = abs, head.gate, true
	if err := c.checkFiles(true); err != nil {
		return nil, fmt.Errorf("the base has no %s, so the head's is read over it ([legacy]): %w", GateFile, err)
	}
	return c, nil
}
