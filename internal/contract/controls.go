package contract

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
)

// The gate file's [[control]] tables prove on every run that the gate can
// still fail (docs/controls.md): the idle control names a second plan, the
// variant control overrides the head's. The plan package owns their words
// and refusals (plan.ParseControls), the same a plan's tables had before
// the gate file held them; what only the contract knows is checked here:
// the idle plan stays in the tree, and a variant's overrides are the
// contract's own (its prefix, nothing [env] fixes, @PORT@ and @DIR@ only),
// as they are rendered like the head's arm.env.

// parseControls reads the gate file's [[control]] tables and checks them
// against the rest of the contract.
func (c *Contract) parseControls(data []byte) error {
	cs, err := plan.ParseControls(GateFile, data)
	if err != nil {
		return err
	}
	for _, ctl := range cs {
		if ctl.PlanFile != "" {
			if err := treePath(ctl.PlanFile); err != nil {
				return exit.Refusef("%s:%d: the idle control's plan %q %v", GateFile, ctl.PlanLine, ctl.PlanFile, err)
			}
		}
		for _, kv := range ctl.Overrides {
			name, value, _ := strings.Cut(kv, "=")
			switch {
			case !strings.HasPrefix(name, c.Prefix) || len(name) == len(c.Prefix):
				return exit.Refusef("%s:%d: the variant's override %s sets no %s variable, which the gate file's prefix makes the only overrides an arm takes; write overrides = [\"%sNAME=value\"]", GateFile, ctl.OverridesLine, kv, c.Prefix, c.Prefix)
			case hasKey(c.Env, name):
				return exit.Refusef("%s:%d: the variant's override %s sets %s, which [env] on line %d fixes for every arm: override another variable", GateFile, ctl.OverridesLine, kv, name, c.lines["env."+name])
			}
			if ph := badPlaceholder(value, renderPlaceholders); ph != "" {
				return exit.Refusef("%s:%d: the variant's override %s uses the placeholder %s: only @PORT@ and @DIR@ are filled in", GateFile, ctl.OverridesLine, name, ph)
			}
		}
	}
	c.Controls = cs
	return nil
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// ResolveControls reads the idle control's plan from the tree and looks up
// the variant's counter in main, the plan the run uses, refusing with the
// gate file's line. A plan that declares [[control]] itself is refused:
// under a contract the gate file holds them, and a plan's would be a
// second, silent place for them.
func (c *Contract) ResolveControls(main *plan.Plan) (plan.Controls, error) {
	if len(main.Controls) > 0 {
		ctl := main.Controls[0]
		return nil, exit.Refusef("%s:%d: [[control]] belongs in the gate file when a contract drives the run: move it to %s (docs/controls.md), where its plan is named from the tree's root", ctl.File, ctl.Line, GateFile)
	}
	cs := append(plan.Controls(nil), c.Controls...)
	if err := cs.Resolve(c.Tree, main); err != nil {
		return nil, err
	}
	return cs, nil
}

// controlFiles lists, relative to the tree's root, the idle control's plan
// and the files it reads, kept beside the contract like the main plan's.
func (c *Contract) controlFiles() []string {
	var out []string
	for _, ctl := range c.Controls {
		if ctl.PlanFile == "" || treePath(ctl.PlanFile) != nil {
			continue
		}
		rel := path.Clean(filepath.ToSlash(ctl.PlanFile))
		out = append(out, rel)
		if p, err := plan.ParseFile(c.path(rel)); err == nil {
			out = append(out, filesOf(p, path.Dir(rel), 1)...)
		}
	}
	return out
}
