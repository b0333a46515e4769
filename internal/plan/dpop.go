package plan

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/dpop"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// dpopKey reads a group's dpop_key_file (docs/dpop.md). The key itself is
// read when the run starts (DPoP), since a gate's [prepare] step may mint
// it after the plan was checked; here the group is checked for what a
// proof needs: a path whose part before the query draws no data (htu is
// signed ahead of the send) and an Authorization header, when it has one,
// that names one token in the Bearer or DPoP scheme and draws no data (a
// header that is a placeholder alone has its scheme checked by DPoP).
func (ps *parser) dpopKey(m map[string]any, gp []string, g *Group) {
	f, ok := ps.Str(m, gp, "dpop_key_file", `dpop_key_file = "../target/perf-run/dpop.pem"`)
	if !ok {
		return
	}
	key := tomlpos.Join(gp, "dpop_key_file")
	if strings.TrimSpace(f) == "" {
		ps.At(gp, "dpop_key_file", "dpop_key_file is empty; write the path of a P-256 PEM key relative to the plan's folder, such as dpop_key_file = \"../target/perf-run/dpop.pem\"")
		return
	}
	g.DPoPKeyFile = f
	g.dpopLine = ps.Line(key)
	data := map[string]bool{}
	for _, d := range ps.p.Data {
		data[d.Name] = true
	}
	before, _, _ := strings.Cut(g.Path, "?")
	for _, n := range parseTemplate(before).names() {
		if data[n] {
			fixed := strings.ReplaceAll(strings.ReplaceAll(before, "/{"+n+"}", ""), "{"+n+"}", "")
			ps.At(gp, "dpop_key_file", "group %q sends DPoP proofs but its path draws {%s} before the query; a proof's htu is signed ahead of the send, so move {%s} into the query (path = \"%s?%s={%s}\") or drop dpop_key_file", g.Name, n, n, fixed, n, n)
		}
	}
	for _, h := range g.Header {
		if !strings.EqualFold(h.Name, "Authorization") {
			continue
		}
		t := parseTemplate(h.Value)
		for _, n := range t.names() {
			if data[n] {
				ps.At(gp, "dpop_key_file", "group %q sends DPoP proofs but its Authorization header draws {%s}; a proof binds one token, so write the token as a variable: Authorization = \"Bearer {token}\"", g.Name, n)
			}
		}
		// The scheme is checked with each placeholder standing for a
		// token, so "Bearer {ncp_token}" passes and "Basic {x}" does not.
		var probe strings.Builder
		for _, s := range t {
			if s.name != "" {
				probe.WriteString("t")
			} else {
				probe.WriteString(s.lit)
			}
		}
		if _, _, err := dpop.Scheme(probe.String()); err != nil && !wholePlaceholder(t) {
			ps.At(gp, "dpop_key_file", "group %q sends DPoP proofs but %v; write Authorization = \"Bearer {token}\" (sent as \"DPoP <token>\"), or no Authorization header for a proof bound to no token", g.Name, err)
		}
	}
}

// wholePlaceholder is a value that is one placeholder alone ("{auth}"):
// its scheme is only known once the variable has its value.
func wholePlaceholder(t template) bool { return len(t) == 1 && t[0].name != "" }

// HasDPoP reports whether a group sends DPoP proofs.
func (p *Plan) HasDPoP() bool {
	for _, g := range p.Groups {
		if g.DPoPKeyFile != "" {
			return true
		}
	}
	return false
}

// DPoP wraps src, a source of this plan's requests to target (the arm's
// base URL), so that each group with a dpop_key_file sends its token in
// the DPoP scheme with a fresh proof from a pool signing ahead of the
// schedule. It reads the keys now and refuses, naming the group and its
// plan line, what only the run can check: a key it cannot read, an
// Authorization header that is a placeholder alone ("{auth}") whose value
// is not "Bearer <token>" or "DPoP <token>", a variable with no value, and
// a target the proofs' htu cannot be made of. stop ends the pools: call it
// once the attack returned. A plan without DPoP groups gets src back and a
// stop that does nothing.
func (p *Plan) DPoP(ctx context.Context, src load.Source, v *Vars, target string) (load.Source, func(), error) {
	var bindings []dpop.Binding
	for gi, g := range p.Groups {
		if g.DPoPKeyFile == "" {
			continue
		}
		path := g.DPoPKeyFile
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.dir, path)
		}
		key, err := dpop.ReadKey(path)
		if err != nil {
			return nil, nil, exit.Refusef("%s:%d: group %q's DPoP key %s: %v; write dpop_key_file = the path (relative to the plan's folder) of a P-256 PEM key, made before the run (a [prepare] step can mint it)", p.Path, g.dpopLine, g.Name, path, err)
		}
		gp := []string{"group", strconv.Itoa(gi)}
		pathLine := p.pos.line(tomlpos.Join(gp, "path"))
		b := dpop.Binding{Group: gi, Name: g.Name, Key: key, Method: g.Method}
		before, _, _ := strings.Cut(g.Path, "?")
		b.Path, err = fill(before, v, true)
		if err != nil {
			return nil, nil, exit.Refusef("%s:%d: group %q's path: %v; resolve the plan's variables before its DPoP proofs", p.Path, pathLine, g.Name, err)
		}
		if _, err := dpop.HTU(strings.TrimSuffix(target, "/") + b.Path); err != nil {
			return nil, nil, exit.Refusef("%s:%d: group %q's DPoP proofs: %v; the proofs' htu is the target joined to this path, so give an http or https target", p.Path, pathLine, g.Name, v.RedactError(err))
		}
		for _, h := range g.Header {
			if !strings.EqualFold(h.Name, "Authorization") {
				continue
			}
			line := p.pos.line(tomlpos.Join(tomlpos.Join(gp, "headers"), h.Name))
			if b.Authorization, err = fill(h.Value, v, false); err != nil {
				return nil, nil, exit.Refusef("%s:%d: group %q's Authorization header: %v; resolve the plan's variables before its DPoP proofs", p.Path, line, g.Name, err)
			}
			// dpopKey checked the scheme of a header that writes it; one
			// that is a placeholder alone has a scheme only now (empty, it
			// sends no header, as Wrap reads it).
			if _, _, err := dpop.Scheme(b.Authorization); err != nil && b.Authorization != "" {
				return nil, nil, exit.Refusef("%s:%d: group %q sends DPoP proofs but %v once %s is filled in; give %s a value \"Bearer <token>\" (sent as \"DPoP <token>\"), or write Authorization = \"Bearer {token}\"", p.Path, line, g.Name, v.RedactError(err), h.Value, h.Value)
			}
		}
		bindings = append(bindings, b)
	}
	if len(bindings) == 0 {
		return src, func() {}, nil
	}
	// Every binding was checked above, so what Wrap may still refuse is
	// no fault of the plan's.
	w, stop, err := dpop.Wrap(ctx, src, target, bindings)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: starting the DPoP proofs: %w", p.Path, v.RedactError(err))
	}
	return w, stop, nil
}

// fill replaces a template's variables by their values (data placeholders
// were refused by dpopKey).
func fill(s string, v *Vars, inPath bool) (string, error) {
	var b strings.Builder
	for _, seg := range parseTemplate(s) {
		if seg.name == "" {
			b.WriteString(seg.lit)
			continue
		}
		val, ok := v.Get(seg.name)
		if !ok {
			return "", fmt.Errorf("{%s} has no value", seg.name)
		}
		if inPath {
			val = targetSafe(val)
		}
		b.WriteString(val)
	}
	return b.String(), nil
}

// NoDPoP refuses a plan with DPoP groups for a command that cannot send
// their proofs yet (what names it), naming the first such group's line.
func (p *Plan) NoDPoP(what string) error {
	for _, g := range p.Groups {
		if g.DPoPKeyFile != "" {
			return exit.Refusef("%s:%d: group %q sends DPoP proofs (dpop_key_file), which %s does not sign yet; run it with perfgate load, ab or run, or drop dpop_key_file for this command (docs/dpop.md)", p.Path, g.dpopLine, g.Name, what)
		}
	}
	return nil
}
