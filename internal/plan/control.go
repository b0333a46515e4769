package plan

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/perfgate/perfgate/internal/tomlpos"
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

// Control is a [[control]] table. Under perfgate run it is the gate
// file's (perf/gate.toml: ParseControls, then Resolve); under perfgate ab,
// which has no gate file, the plan's.
type Control struct {
	Kind string
	// Idle: the second plan, its [ab] idle and idle limits used.
	PlanFile string // as written, relative to the declaring file's folder (the tree's root for the gate file)
	Plan     *Plan  // read by Resolve
	// Variant: the overrides added to the head's (NAME=VALUE) and the
	// counter of the main plan that must fail on it.
	Overrides []string
	Counter   string
	// File is the file that declares the control and Line its table's
	// line; the others are its keys' lines, for refusals.
	File                                       string
	Line, PlanLine, CounterLine, OverridesLine int
}

// Controls are a file's [[control]] tables.
type Controls []Control

// Of returns the control of a kind.
func (cs Controls) Of(kind string) (Control, bool) {
	for _, c := range cs {
		if c.Kind == kind {
			return c, true
		}
	}
	return Control{}, false
}

// ParseControls reads the [[control]] tables of a TOML document other
// than a plan, the gate file (file names it in refusals), with the same
// words and refusals as a plan's; every other key is left to its owner.
// The idle control's plan is not read and the variant's counter not
// looked up: Resolve does both once the main plan is known.
func ParseControls(file string, data []byte) (Controls, error) {
	ps, raw, err := newParser(file, data)
	if err != nil {
		return nil, err
	}
	cs := ps.controlTables(raw)
	if err := ps.first(); err != nil {
		return nil, err
	}
	return cs, nil
}

// Resolve reads each idle control's plan, relative to dir, and checks
// that each variant's counter is one of main's, naming the control's own
// file and line when not.
func (cs Controls) Resolve(dir string, main *Plan) error {
	var pr problems
	for i := range cs {
		c := &cs[i]
		pr.plan = c.File
		resolveControl(c, dir, main, func(line int, format string, a ...any) { pr.add(c.File, line, format, a...) })
	}
	return pr.first()
}

func (ps *parser) controls(raw map[string]any) {
	cs := ps.controlTables(raw)
	for i := range cs {
		resolveControl(&cs[i], ps.dir, ps.p, func(line int, format string, a ...any) { ps.add(ps.file, line, format, a...) })
	}
	ps.p.Controls = cs
}

// controlTables reads the [[control]] tables' words and their lines.
func (ps *parser) controlTables(raw map[string]any) Controls {
	const example = `[[control]] with kind = "idle", plan = "busy-loop.toml"`
	var out Controls
	kinds := map[string]int{}
	for i, m := range ps.Tables(raw, nil, "control", example) {
		cp := []string{"control", strconv.Itoa(i)}
		c := Control{File: ps.file, Line: ps.Line(cp)}
		c.PlanLine, c.CounterLine, c.OverridesLine = ps.Line(tomlpos.Join(cp, "plan")), ps.Line(tomlpos.Join(cp, "counter")), ps.Line(tomlpos.Join(cp, "overrides"))
		kind, ok := ps.Str(m, cp, "kind", `kind = "idle"`)
		if !ok {
			if _, present := m["kind"]; !present {
				ps.At(cp, "", "this control has no kind; write kind = \"idle\" (a store poller that never waits) or kind = \"variant\" (the head with extra overrides)")
			}
			continue
		}
		c.Kind = kind
		if first, dup := kinds[kind]; dup {
			ps.At(cp, "kind", "the %s control is already declared on line %d; keep one", kind, first)
		}
		kinds[kind] = ps.Line(tomlpos.Join(cp, "kind"))
		switch kind {
		case ControlIdle:
			ps.Known(m, cp, "[[control]] of kind idle", "kind", "plan")
			f, ok := ps.Str(m, cp, "plan", `plan = "busy-loop.toml"`)
			if !ok {
				if _, present := m["plan"]; !present {
					ps.At(cp, "", "the idle control names no plan; write plan = \"busy-loop.toml\" (a plan whose [ab] idle limits the planted poller must fail)")
				}
				break
			}
			c.PlanFile = f
		case ControlVariant:
			ps.Known(m, cp, "[[control]] of kind variant", "kind", "overrides", "counter")
			c.Overrides = ps.overrides(m, cp)
			if n, ok := ps.Str(m, cp, "counter", `counter = "exchanges"`); ok {
				c.Counter = n
			} else if _, present := m["counter"]; !present {
				ps.At(cp, "", "the variant control names no counter; write counter = \"exchanges\", the [[counter]] the variant must fail")
			}
		default:
			ps.At(cp, "kind", "control kind %q is not known; write %s", kind, tomlpos.OneOf(kind, []string{ControlIdle, ControlVariant}, "kind = %q"))
		}
		out = append(out, c)
	}
	return out
}

// resolveControl reads an idle control's plan (relative to dir) and looks
// up a variant's counter in main, adding a problem on the control's line.
func resolveControl(c *Control, dir string, main *Plan, add func(line int, format string, a ...any)) {
	switch c.Kind {
	case ControlIdle:
		if c.PlanFile == "" {
			return
		}
		f := c.PlanFile
		path := f
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, f)
		}
		if main != nil && main.Path != "" && filepath.Clean(path) == filepath.Clean(main.Path) {
			which := "the main plan " + main.Path
			if c.File == main.Path {
				which = "this plan"
			}
			add(c.PlanLine, "the idle control's plan is %s; write plan = \"busy-loop.toml\", a plan of its own", which)
			return
		}
		// A control plan with controls of its own is refused before it
		// is parsed, so two plans naming each other cannot recurse.
		if data, err := readRegular(path, 16<<20); err == nil {
			var raw map[string]any
			if _, err := toml.Decode(string(data), &raw); err == nil {
				if _, has := raw["control"]; has {
					add(c.PlanLine, "the idle control's plan %s declares controls of its own; remove its [[control]] tables", f)
					return
				}
			}
		}
		sub, err := ParseFile(path)
		if err != nil {
			// Its own refusal names its own file and line.
			add(c.PlanLine, "the idle control's plan is refused: %v", err)
			return
		}
		if sub.AB.Idle <= 0 {
			add(c.PlanLine, "the idle control's plan %s has no idle phase ([ab] idle = \"0s\"); write idle = \"60s\" in its [ab]", f)
		}
		c.Plan = sub
	case ControlVariant:
		if c.Counter == "" || main == nil {
			return
		}
		if _, found := main.CounterNamed(c.Counter); found {
			return
		}
		var names []string
		for _, x := range main.Counters {
			names = append(names, x.Name)
		}
		// Declared in another file (the gate file), the counter is looked
		// for in the main plan, which the refusal then names.
		where := ""
		if c.File != main.Path {
			where = " in " + main.Path
		}
		if len(names) == 0 {
			add(c.CounterLine, "counter %q is not declared%s; add a [[counter]] with name = %q there, the count this variant must fail", c.Counter, where, c.Counter)
		} else {
			add(c.CounterLine, "counter %q is not declared%s; write %s", c.Counter, where, tomlpos.OneOf(c.Counter, names, "counter = %q"))
		}
	}
}

// overrides reads NAME=VALUE lines, as an arm.env holds them.
func (ps *parser) overrides(m map[string]any, cp []string) []string {
	v, ok := m["overrides"]
	if !ok {
		ps.At(cp, "", "the variant control has no overrides; write overrides = [\"EXAMPLED_TOKEN_CACHE=false\"], what makes it differ from the head")
		return nil
	}
	list, isList := v.([]any)
	if !isList || len(list) == 0 {
		ps.At(cp, "overrides", "overrides must be a list of \"NAME=VALUE\" strings; write overrides = [\"EXAMPLED_TOKEN_CACHE=false\"]")
		return nil
	}
	var out []string
	for _, e := range list {
		s, isStr := e.(string)
		name, _, hasEq := strings.Cut(s, "=")
		if !isStr || !hasEq || !isEnvName(name) {
			ps.At(cp, "overrides", "override %v is not NAME=VALUE; write overrides = [\"EXAMPLED_TOKEN_CACHE=false\"]", e)
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

// ControlOf returns the plan's control of a kind.
func (p *Plan) ControlOf(kind string) (Control, bool) { return p.Controls.Of(kind) }
