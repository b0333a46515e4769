package check

import (
	"context"
	"strings"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/services"
)

// compose diffs both trees' services as run would, without starting them.
func (c *checker) compose(ctx context.Context, arm string, head, bc *contract.Contract) *services.Plan {
	name := "compose plan (" + arm + ")"
	if len(head.Compose) == 0 && len(bc.Compose) == 0 {
		c.skip(name, "neither tree names compose files")
		return nil
	}
	project := "perfgate-check"
	p, err := services.Diff(ctx,
		services.Tree{Dir: head.Tree, Files: head.Compose, Seeds: head.Seeds, Project: project},
		services.Tree{Dir: bc.Tree, Files: bc.Compose, Seeds: bc.Seeds, Project: project})
	if err != nil {
		c.fail(name, err)
		return nil
	}
	var parts []string
	for _, g := range p.Groups {
		what := "shared"
		if g.Copied {
			what = "base copy on 127.0.0.2 (" + g.Why + ")"
		}
		parts = append(parts, strings.Join(g.Services, "+")+": "+what)
	}
	c.ok(name, "%d group(s): %s; %d port(s) moved", len(p.Groups), strings.Join(parts, "; "), len(p.Moved))
	return p
}
