package plan

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Control kinds: a control proves on every run that the gate can still
// fail (docs/controls.md).
const (
	// ControlIdle plants a store poller that never waits on the head's
	// store and runs the idle phase of a second plan beside it: its idle
	// limits must fail, as FerroFED's gate proves with perf/busy-loop.toml.
	ControlIdle = "idle"
	// ControlVariant starts a third arm, the head with extra overrides,
	// and runs a counter on it: the counter must fail, as FerroFED's head
	// with cache = false on an onward lane's table must exceed the token
	// exchange limit.
	ControlVariant = "variant"
)

// Control is a [[control]] table.
type Control struct {
	Kind string
	// Idle: the second plan, its [ab] idle and idle limits used.
	PlanFile string // as written, relative to the plan's folder
	Plan     *Plan
	// Variant: the overrides added to the head's environment (NAME=VALUE)
	// and the counter that must fail on it.
	Overrides []string
	Counter   string
	Line      int
}

func (ps *parser) controls(raw map[string]any) {
	const example = `[[control]] with kind = "idle", plan = "busy-loop.toml"`
	kinds := map[string]int{}
	for i, m := range ps.tables(raw, nil, "control", example) {
		cp := []string{"control", strconv.Itoa(i)}
		c := Control{Line: ps.lineOf(cp)}
		kind, ok := ps.str(m, cp, "kind", `kind = "idle"`)
		if !ok {
			if _, present := m["kind"]; !present {
				ps.at(cp, "", "this control has no kind; write kind = \"idle\" (a store poller that never waits) or kind = \"variant\" (the head with extra overrides)")
			}
			continue
		}
		c.Kind = kind
		if first, dup := kinds[kind]; dup {
			ps.at(cp, "kind", "the %s control is already declared on line %d; keep one", kind, first)
		}
		kinds[kind] = ps.lineOf(join(cp, "kind"))
		switch kind {
		case ControlIdle:
			ps.known(m, cp, "[[control]] of kind idle", "kind", "plan")
			f, ok := ps.str(m, cp, "plan", `plan = "busy-loop.toml"`)
			if !ok {
				if _, present := m["plan"]; !present {
					ps.at(cp, "", "the idle control names no plan; write plan = \"busy-loop.toml\" (a plan whose [ab] idle limits the planted poller must fail)")
				}
				break
			}
			c.PlanFile = f
			path := f
			if !filepath.IsAbs(path) {
				path = filepath.Join(ps.dir, f)
			}
			if filepath.Clean(path) == filepath.Clean(ps.file) {
				ps.at(cp, "plan", "the idle control's plan is this plan; write plan = \"busy-loop.toml\", a plan of its own")
				break
			}
			// A control plan with controls of its own is refused before it
			// is parsed, so two plans naming each other cannot recurse.
			if data, err := readRegular(path, 16<<20); err == nil {
				var raw map[string]any
				if _, err := toml.Decode(string(data), &raw); err == nil {
					if _, has := raw["control"]; has {
						ps.at(cp, "plan", "the idle control's plan %s declares controls of its own; remove its [[control]] tables", f)
						break
					}
				}
			}
			sub, err := ParseFile(path)
			if err != nil {
				// Its own refusal names its own file and line.
				ps.at(cp, "plan", "the idle control's plan is refused: %v", err)
				break
			}
			if sub.AB.Idle <= 0 {
				ps.at(cp, "plan", "the idle control's plan %s has no idle phase ([ab] idle = \"0s\"); write idle = \"60s\" in its [ab]", f)
			}
			c.Plan = sub
		case ControlVariant:
			ps.known(m, cp, "[[control]] of kind variant", "kind", "overrides", "counter")
			c.Overrides = ps.overrides(m, cp)
			if n, ok := ps.str(m, cp, "counter", `counter = "exchanges"`); ok {
				if _, found := ps.p.CounterNamed(n); !found {
					var names []string
					for _, x := range ps.p.Counters {
						names = append(names, x.Name)
					}
					if len(names) == 0 {
						ps.at(cp, "counter", "counter %q is not declared; add a [[counter]] with name = %q, the count this variant must fail", n, n)
					} else {
						ps.at(cp, "counter", "counter %q is not declared; write %s", n, oneOf(n, names, "counter = %q"))
					}
				}
				c.Counter = n
			} else if _, present := m["counter"]; !present {
				ps.at(cp, "", "the variant control names no counter; write counter = \"exchanges\", the [[counter]] the variant must fail")
			}
		default:
			ps.at(cp, "kind", "control kind %q is not known; write %s", kind, oneOf(kind, []string{ControlIdle, ControlVariant}, "kind = %q"))
		}
		ps.p.Controls = append(ps.p.Controls, c)
	}
}

// overrides reads NAME=VALUE lines, as an arm.env holds them.
func (ps *parser) overrides(m map[string]any, cp []string) []string {
	v, ok := m["overrides"]
	if !ok {
		ps.at(cp, "", "the variant control has no overrides; write overrides = [\"EXAMPLED_TOKEN_CACHE=false\"], what makes it differ from the head")
		return nil
	}
	list, isList := v.([]any)
	if !isList || len(list) == 0 {
		ps.at(cp, "overrides", "overrides must be a list of \"NAME=VALUE\" strings; write overrides = [\"EXAMPLED_TOKEN_CACHE=false\"]")
		return nil
	}
	var out []string
	for _, e := range list {
		s, isStr := e.(string)
		name, _, hasEq := strings.Cut(s, "=")
		if !isStr || !hasEq || !isEnvName(name) {
			ps.at(cp, "overrides", "override %v is not NAME=VALUE; write overrides = [\"EXAMPLED_TOKEN_CACHE=false\"]", e)
			continue
		}
		out = append(out, s)
	}
	return out
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// ControlOf returns the control of a kind.
func (p *Plan) ControlOf(kind string) (Control, bool) {
	for _, c := range p.Controls {
		if c.Kind == kind {
			return c, true
		}
	}
	return Control{}, false
}
