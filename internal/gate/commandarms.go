package gate

import (
	"strings"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/redact"
)

// ABPlan is perfgate ab's plan: read, reshaped by the command line's
// profile, checked, and its variables resolved.
func ABPlan(path string, reshape func(*plan.AB) error, vars []string, getenv func(string) string) (*plan.Plan, *plan.Vars, error) {
	p, err := plan.ParseFile(path)
	if err != nil {
		return nil, nil, err
	}
	if err := reshape(&p.AB); err != nil {
		return nil, nil, exit.Refusef("ab: %v", err)
	}
	if err := p.CheckAB(p.AB); err != nil {
		return nil, nil, err
	}
	v, err := plan.ResolveVars(p, vars, getenv)
	if err != nil {
		return nil, nil, err
	}
	return p, v, nil
}

// CommandArm is one arm of perfgate ab given on the command line: a shell
// command, and optionally its URL and work directory.
type CommandArm struct {
	Cmd, URL, Dir string
}

// CommandArms are the base and head of perfgate ab's --base-*/--head-*
// flags. URLs are checked before anything starts: a remote URL was once
// refused only after both arms were up.
func CommandArms(base, head CommandArm, ready string) ([]ArmSpec, error) {
	for _, u := range []struct {
		flag, val string
		schemes   []string
	}{{"base-url", base.URL, []string{"http", "https"}}, {"head-url", head.URL, []string{"http", "https"}}, {"ready", ready, []string{"http", "https", "tcp"}}} {
		if u.val == "" || u.flag == "ready" && strings.HasPrefix(u.val, "/") {
			continue
		}
		if err := contract.LoopbackURL(u.val, u.schemes...); err != nil {
			return nil, exit.Refusef("ab: --%s %q %v", u.flag, redact.URL(u.val, contract.PortPlaceholder), err)
		}
	}
	for _, a := range []struct {
		role string
		arm  CommandArm
	}{{"base", base}, {"head", head}} {
		// The arms file refuses the same arm on its line (internal/armsfile).
		if !strings.Contains(a.arm.Cmd, contract.PortPlaceholder) && (a.arm.URL == "" || strings.Contains(a.arm.URL, contract.PortPlaceholder)) {
			return nil, exit.Refusef("ab: --%s-cmd names @PORT@ nowhere, so the arm cannot know the free port perfgate picks for it and would never answer on it; put @PORT@ in the command (--addr 127.0.0.1:@PORT@), or give --%s-url with the port the command listens on", a.role, a.role)
		}
	}
	return Pair(
		ArmSpec{Command: []string{"sh", "-c", "exec " + base.Cmd}, URL: base.URL, Dir: base.Dir, Cwd: StartHere, Ready: ready},
		ArmSpec{Command: []string{"sh", "-c", "exec " + head.Cmd}, URL: head.URL, Dir: head.Dir, Cwd: StartHere, Ready: ready}), nil
}

// StartHere is where perfgate ab's arms start: the folder perfgate runs
// in, as perfgate run's start from the checkout, so a command's relative
// paths (target/perf-head/bin/svc) read from where the operator wrote
// them, as the arms file's dir and ca_file do. The arm's own files belong
// in @DIR@; an arm started in @DIR@ could not find a relative program.
const StartHere = "."

// WithVariant adds the variant arm to Pair's base and head when the controls hold a variant
// control: the head's command started again beside the head, with the
// control's overrides in its environment.
func WithVariant(arms []ArmSpec, ctls plan.Controls) ([]ArmSpec, error) {
	c, ok := ctls.Of(plan.ControlVariant)
	if !ok {
		return arms, nil
	}
	va, err := VariantOf(arms[1], c.Overrides)
	if err != nil {
		return nil, exit.Refusef("ab: %s:%d: %v", c.File, c.Line, err)
	}
	return append(arms, va), nil
}
