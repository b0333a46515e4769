package check

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/plan"
)

// plans reads the head's plan and its idle control's plan, naming their
// idle limits and the rate rule.
func (c *checker) plans(k *contract.Contract) {
	path := filepath.Join(k.Tree, k.Plan)
	p, err := plan.ParseFile(path)
	if err == nil {
		err = p.CheckAB(p.AB)
	}
	if err != nil {
		c.fail("plan", err)
		return
	}
	c.ok("plan", "%s: %d group(s), %d pair(s) at %g/s; %s", k.Plan, len(p.Groups), p.AB.Pairs, p.AB.Rate, idleLimits(p))
	c.rateRule(k.Plan, p)
	// The controls are the gate file's, read against this plan (the
	// contract refused a variant override outside its prefix already).
	ctls, err := k.ResolveControls(p)
	if err != nil {
		c.fail("controls", err)
		return
	}
	if v, ok := ctls.Of(plan.ControlVariant); ok {
		c.ok("variant control", "overrides %s, must fail counter %s", strings.Join(v.Overrides, " "), v.Counter)
	}
	ctl, ok := ctls.Of(plan.ControlIdle)
	if !ok {
		c.skip("control plan", "%s declares no [[control]] of kind idle", contract.GateFile)
		return
	}
	if err := ctl.Plan.CheckAB(ctl.Plan.AB); err != nil {
		c.fail("control plan", err)
		return
	}
	c.ok("control plan", "%s: %s", ctl.PlanFile, idleLimits(ctl.Plan))
}

func idleLimits(p *plan.Plan) string {
	if p.AB.Idle <= 0 {
		return "no idle phase"
	}
	return fmt.Sprintf("idle %s, CPU under %g %% of a core, store under %g tx/s", p.AB.Idle, p.AB.IdleCPU*100, p.AB.IdleTxPerSec)
}

// rateRule names each group with a max_rate and the rate it gets: the
// plan sends its groups in turn, so each gets the rate over the count
// (the parser refused a plan that reaches a limit).
func (c *checker) rateRule(file string, p *plan.Plan) {
	var parts []string
	for _, g := range p.Groups {
		if g.MaxRate > 0 {
			share := p.AB.Rate / float64(len(p.Groups))
			if p.Load.Order == "weight" {
				var sum float64
				for _, x := range p.Groups {
					sum += x.Weight
				}
				share = p.AB.Rate * g.Weight / sum
			}
			parts = append(parts, fmt.Sprintf("%s %.3g/s under %g/s", g.Name, share, g.MaxRate))
		}
	}
	if len(parts) == 0 {
		c.skip("rate rule", "%s sets no max_rate", file)
		return
	}
	c.ok("rate rule", "%s", strings.Join(parts, "; "))
}
