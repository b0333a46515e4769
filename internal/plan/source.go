package plan

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/load"
)

// RequestSource is the plan's load.Source. Its sequence depends only on the
// plan, the variables and the seed, and each stage keeps its own counters
// and data parts, so the measured sequence is the same however long the
// warm-up ran: two sources made with one seed hand both arms of an A/B pair
// the same requests. The A/B runner keeps one source per arm for all pairs,
// so a fresh draw never repeats an identifier across pairs.
//
// Requests of a group without data placeholders share their Header and
// Body with every other request of that group: the engine must not modify
// them.
type RequestSource struct {
	groups  []compiled
	weights []float64
	weight  bool
	data    []*DataSource
	stages  [2]stageState
}

type stageState struct {
	n       uint64
	current []float64 // smooth weighted round robin's running weights
	drawers []*drawer
	vals    []string // this request's draws, by data source
}

type compiled struct {
	static *load.Request // the whole request, when nothing is drawn
	method string
	path   template
	header []headerTemplate
	body   template
	uses   []int // data sources this group draws from, once each per request
	group  int
}

type headerTemplate struct {
	name  string
	value template
}

// Source compiles the plan with the variables' values for a run seeded by
// seed. It also returns the groups as the engine reports them.
func (p *Plan) Source(v *Vars, seed int64) (load.Source, []load.Group, error) {
	s, err := p.NewRequestSource(v, seed)
	if err != nil {
		return nil, nil, err
	}
	return s, p.loadGroups(), nil
}

// PairSource is Source for pair `pair` (0-based) of `pairs`: call it with
// the same seed for every pair and both arms. Every fresh data part is
// shuffled once by the seed and cut into `pairs` slices, pair i drawing from
// slice i alone, so an identifier measured in one pair is never sent again
// in another (a target's cache would make it cheaper); zipf draws take
// their own stream per pair. Both arms of a pair get the same sequence.
func (p *Plan) PairSource(v *Vars, seed int64, pair, pairs int) (load.Source, []load.Group, error) {
	if pairs < 1 || pair < 0 || pair >= pairs {
		return nil, nil, fmt.Errorf("making the source of pair %d of %d: no such pair", pair, pairs)
	}
	s, err := p.newSource(v, seed, pair, pairs)
	if err != nil {
		return nil, nil, err
	}
	return s, p.loadGroups(), nil
}

// NewRequestSource is Source returning the concrete type, for its Notes.
func (p *Plan) NewRequestSource(v *Vars, seed int64) (*RequestSource, error) {
	return p.newSource(v, seed, 0, 1)
}

func (p *Plan) newSource(v *Vars, seed int64, part, parts int) (*RequestSource, error) {
	if len(p.Groups) == 0 {
		return nil, exit.Refusef("%s:1: the plan has no request group; add one: [[group]] name = \"hello\" path = \"/hello\" expect = 200", p.Path)
	}
	dataIdx := map[string]int{}
	for i, d := range p.Data {
		dataIdx[d.Name] = i
	}
	s := &RequestSource{weight: p.Load.Order == "weight", data: p.Data}
	staticBodies := map[string][]byte{}
	for gi, g := range p.Groups {
		c := compiled{method: g.Method, group: gi}
		var err error
		uses := map[int]bool{}
		bind := func(t template, what string) template {
			inPath := what == "path"
			if err != nil {
				return nil
			}
			var out template
			var lits []string // literal text waiting to become one segment
			flush := func() {
				out = appendLit(out, lits)
				lits = lits[:0]
			}
			for _, seg := range t {
				switch {
				case seg.name == "":
					lits = append(lits, seg.lit)
				case hasIdx(dataIdx, seg.name):
					flush()
					seg.src = dataIdx[seg.name]
					seg.inPath = inPath
					uses[seg.src] = true
					out = append(out, seg)
				default:
					val, ok := v.Get(seg.name)
					if !ok {
						err = exit.Refusef("%s:%d: the %s of group %q uses {%s}, which has no value; resolve the plan's variables (ResolveVars) before making its source", p.Path, g.Line, what, g.Name, seg.name)
						return nil
					}
					if inPath {
						val = targetSafe(val)
					}
					lits = append(lits, val)
				}
			}
			flush()
			return out
		}
		c.path = bind(parseTemplate(g.Path), "path")
		for _, h := range g.Header {
			c.header = append(c.header, headerTemplate{name: h.Name, value: bind(parseTemplate(h.Value), "header "+h.Name)})
		}
		c.body = bind(parseTemplate(g.Body), "body")
		if err != nil {
			return nil, err
		}
		for i := range p.Data {
			if uses[i] {
				c.uses = append(c.uses, i)
			}
		}
		if len(c.uses) == 0 {
			// Groups sending one body (one body_file) share its bytes:
			// each distinct body is copied into a request once.
			body := c.body.fill(nil) // a lone literal: the plan's own string
			bodyT := c.body
			c.body = nil
			r := c.render(nil)
			c.body = bodyT
			if body != "" {
				b, ok := staticBodies[body]
				if !ok {
					b = []byte(body)
					staticBodies[body] = b
				}
				r.Body = b
			}
			c.static = &r
		}
		s.groups = append(s.groups, c)
		s.weights = append(s.weights, g.Weight)
	}
	for st := range s.stages {
		ss := &s.stages[st]
		ss.current = make([]float64, len(s.groups))
		ss.vals = make([]string, len(p.Data))
		for i, d := range p.Data {
			values, cdf := d.measured, d.measCDF
			if load.Stage(st) == load.Warmup && len(d.warm) > 0 {
				// warmup_fraction = 0 gives the warm-up no part of its own:
				// it then draws from the measured values, as the plan chose.
				values, cdf = d.warm, d.warmCDF
			}
			// Each source and stage gets its own stream, so adding a data
			// source or lengthening the warm-up leaves the others' draws alone.
			ss.drawers = append(ss.drawers, newDrawer(values, cdf, seed, uint64(i)<<33|uint64(st)<<32, part, parts))
		}
	}
	return s, nil
}

func hasIdx(m map[string]int, k string) bool { _, ok := m[k]; return ok }

// appendLit adds literal pieces as one segment, joined once: a lone piece
// stays the slice it is (a body file's bytes are not copied), and many
// pieces cost one allocation, not one per piece.
func appendLit(t template, pieces []string) template {
	var lit string
	switch len(pieces) {
	case 0:
		return t
	case 1:
		lit = pieces[0]
	default:
		lit = strings.Join(pieces, "")
	}
	if lit == "" {
		return t
	}
	return append(t, segment{lit: lit})
}

// render builds a request; vals holds this request's draw from each data
// source by index (nil when the group draws nothing).
func (c *compiled) render(vals []string) load.Request {
	r := load.Request{Group: c.group, Method: c.method}
	r.Path = c.path.fill(vals)
	if len(c.header) > 0 {
		r.Header = make([]load.Header, len(c.header))
		for i, h := range c.header {
			r.Header[i] = load.Header{Name: h.name, Value: h.value.fill(vals)}
		}
	}
	if len(c.body) > 0 {
		r.Body = c.body.fillBytes(vals)
	}
	return r
}

func (t template) fill(vals []string) string {
	switch {
	case len(t) == 0:
		return ""
	case len(t) == 1 && t[0].name == "":
		return t[0].lit
	}
	n := 0
	for _, seg := range t {
		if seg.name == "" {
			n += len(seg.lit)
		} else {
			n += len(vals[seg.src])
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, seg := range t {
		switch {
		case seg.name == "":
			b.WriteString(seg.lit)
		case seg.inPath:
			b.WriteString(targetSafe(vals[seg.src]))
		default:
			b.WriteString(vals[seg.src])
		}
	}
	return b.String()
}

// Next returns the next request of stage: groups in turn, or by smooth
// weighted round robin (nginx's), which gives each group its exact share in
// every stretch of the run without random clumps.
func (s *RequestSource) Next(stage load.Stage) load.Request {
	st := 1
	if stage == load.Warmup {
		st = 0
	}
	ss := &s.stages[st]
	var gi int
	if s.weight {
		var total float64
		gi = 0
		for i, w := range s.weights {
			ss.current[i] += w
			total += w
			if ss.current[i] > ss.current[gi] {
				gi = i
			}
		}
		ss.current[gi] -= total
	} else {
		gi = int(ss.n % uint64(len(s.groups)))
	}
	ss.n++
	c := &s.groups[gi]
	if c.static != nil {
		return *c.static
	}
	for _, i := range c.uses {
		ss.vals[i] = ss.drawers[i].draw()
	}
	return c.render(ss.vals)
}

// Notes says which fresh draws ran out and repeated values, for the report:
// a run that reused identifiers measured a primed cache.
func (s *RequestSource) Notes() []string {
	var out []string
	for st, name := range []string{"warm-up", "measured"} {
		for i, d := range s.stages[st].drawers {
			if n := d.note(s.data[i].Name, name); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// Reused is how many draws of stage repeated a value after a fresh part ran out.
func (s *RequestSource) Reused(stage load.Stage) uint64 {
	st := 1
	if stage == load.Warmup {
		st = 0
	}
	var n uint64
	for _, d := range s.stages[st].drawers {
		n += d.reused
	}
	return n
}

// fillBytes is fill straight into the body's bytes, saving a copy.
func (t template) fillBytes(vals []string) []byte {
	n := 0
	for _, seg := range t {
		if seg.name == "" {
			n += len(seg.lit)
		} else {
			n += len(vals[seg.src])
		}
	}
	b := make([]byte, 0, n)
	for _, seg := range t {
		if seg.name == "" {
			b = append(b, seg.lit...)
		} else {
			b = append(b, vals[seg.src]...)
		}
	}
	return b
}
