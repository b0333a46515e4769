package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/load"
)

// HitRule says which expected answers are hits (a cache's, say), so a run
// reports its hit ratio: by status, by a header, or by a JSON field of the
// body. [experiment] and [load] write it with the same keys (hit_status,
// hit_header, hit_field and hit_value); at most one way is written. The
// zero value names no hit, and the engine then reads no header or body
// byte for it.
type HitRule struct {
	HitStatus []int  // statuses that count as a hit (the rest of the expected ones are misses)
	HitHeader string // "X-Cache: HIT" (name, value) or "X-Cache" (present): a hit by header
	HitField  string // a dotted path into a JSON body ("cache.hit"): a hit when it holds HitValue
	HitValue  any    // hit_field's value: a bool, a string or a float64 (default true)
}

// hitKeys are the ways of naming a hit; a plan writes at most one
// (hit_value goes with hit_field).
var hitKeys = []string{"hit_status", "hit_header", "hit_field"}

// hitRuleKeys are the keys a table with a hit rule accepts.
var hitRuleKeys = []string{"hit_status", "hit_header", "hit_field", "hit_value"}

// Written reports whether the rule names a hit at all.
func (h HitRule) Written() bool {
	return len(h.HitStatus) > 0 || h.HitHeader != "" || h.HitField != ""
}

// LoadRule is the load engine's rule; nil when no hit is named. A status
// too is the engine's to judge: only it knows which answers with that
// status were expected and right (not wrong answers), and only those are
// hits.
func (h HitRule) LoadRule() *load.HitRule {
	switch {
	case len(h.HitStatus) > 0:
		return &load.HitRule{Status: slices.Clone(h.HitStatus)}
	case h.HitHeader != "":
		name, val, _ := strings.Cut(h.HitHeader, ":")
		return &load.HitRule{Header: strings.TrimSpace(name), Value: strings.TrimSpace(val)}
	case h.HitField != "":
		return &load.HitRule{Field: h.HitField, FieldValue: h.HitValue}
	}
	return nil
}

// Says is the rule as the plan writes it, for a line about a hit ratio.
func (h HitRule) Says() string {
	switch {
	case h.HitHeader != "":
		return fmt.Sprintf("hit_header %q", h.HitHeader)
	case h.HitField != "":
		return fmt.Sprintf("hit_field %q = %v", h.HitField, h.HitValue)
	case len(h.HitStatus) > 0:
		return fmt.Sprintf("hit_status %v", h.HitStatus)
	}
	return "no hit rule"
}

// hitRule reads hit_status, hit_header or hit_field (with hit_value) of
// table (its name as a refusal says it, "[experiment]"): one way of naming
// a hit, refused at the second one's line.
func (ps *parser) hitRule(m map[string]any, ep []string, table string, e *HitRule) {
	var named []string
	for _, k := range hitKeys {
		if _, ok := m[k]; ok {
			named = append(named, k)
		}
	}
	if len(named) > 1 {
		ps.At(ep, named[1], "%s and %s both name what a hit is; keep one (docs/experiment.md, \"Hit ratio\")", named[0], named[1])
		return
	}
	if _, ok := m["hit_value"]; ok {
		if _, f := m["hit_field"]; !f {
			ps.At(ep, "hit_value", "hit_value is the value of hit_field, and this %s has no hit_field; write hit_field = \"cache.hit\" with it, or remove hit_value", table)
			return
		}
	}
	e.HitStatus, _ = ps.intList(m, ep, "hit_status", 100, 599, "an HTTP status (100-599)", "hit_status = [200]")
	if s, ok := ps.Str(m, ep, "hit_header", `hit_header = "X-Cache: HIT"`); ok {
		name, val, _ := strings.Cut(s, ":")
		name = strings.TrimSpace(name)
		if name == "" || strings.ContainsAny(name, " \t\r\n") {
			ps.At(ep, "hit_header", "hit_header %q names no header; write hit_header = \"X-Cache: HIT\" (a header and its value) or hit_header = \"X-Cache\" (present)", s)
			return
		}
		if strings.Contains(s, ":") && strings.TrimSpace(val) == "" {
			ps.At(ep, "hit_header", "hit_header %q has a colon and no value; write hit_header = \"%s: HIT\", or hit_header = \"%s\" for present", s, name, name)
			return
		}
		e.HitHeader = name
		if v := strings.TrimSpace(val); v != "" {
			e.HitHeader = name + ": " + v
		}
	}
	if s, ok := ps.Str(m, ep, "hit_field", `hit_field = "cache.hit"`); ok {
		if s == "" || slices.Contains(strings.Split(s, "."), "") {
			ps.At(ep, "hit_field", "hit_field %q is not a dotted path into the JSON body; write hit_field = \"cache.hit\"", s)
			return
		}
		e.HitField, e.HitValue = s, true
		if v, ok := m["hit_value"]; ok {
			switch x := v.(type) {
			case bool, string:
				e.HitValue = x
			case int64:
				e.HitValue = float64(x)
			case float64:
				e.HitValue = x
			default:
				ps.At(ep, "hit_value", "hit_value holds %v; write hit_value = true (or a string, or a number)", v)
			}
		}
	}
}
