package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/internal/contract"
)

// contract reads an arm's contract: the head's from the checkout (head
// nil), a base's as prepare reads it (contract.LoadBase), so a tree with no
// gate file of its own is read with the head's when the head declares how
// to read legacy trees.
func (c *checker) contract(_ context.Context, dir, arm string, head *contract.Contract) *contract.Contract {
	if abs, err := filepath.Abs(dir); err == nil {
		c.trees = append(c.trees, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			c.trees = append(c.trees, real)
		}
	}
	k, err := contract.LoadBase(dir, head)
	if err != nil {
		c.fail(arm+" gate file", err)
		return nil
	}
	how := "overrides from " + k.Overrides
	if _, err := os.Stat(filepath.Join(k.Tree, k.Overrides)); err != nil && k.Legacy != nil {
		how = "overrides derived from " + k.Legacy.Script + "'s " + k.Legacy.Function + "()"
	}
	gate := contract.GateFile
	if _, err := os.Stat(filepath.Join(k.Tree, filepath.FromSlash(contract.GateFile))); err != nil && head != nil {
		gate = "no " + contract.GateFile + " of its own: the head's, read over this tree ([legacy])"
	}
	c.ok(arm+" gate file", "%s: build, start %q, config %s, %s, prefix %s, compose %v, plan %s", gate, k.Start, k.Config, how, k.Prefix, k.Compose, k.Plan)
	if len(k.Prepare) > 0 && arm == "head" {
		// Listed, not run: a check starts nothing.
		cmds := make([]string, len(k.Prepare))
		for i, argv := range k.Prepare {
			cmds[i] = strings.Join(argv, " ")
		}
		c.ok("prepare", "%d command(s), run by perfgate run before the plan is read: %s", len(cmds), strings.Join(cmds, "; "))
	}
	return k
}
