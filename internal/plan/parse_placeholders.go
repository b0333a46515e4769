package plan

import (
	"fmt"
	"strconv"

	"github.com/perfgate/perfgate/internal/tomlpos"
)

// placeholders checks every {name} against the variables and data sources.
func (ps *parser) placeholders() {
	known := map[string]bool{}
	var names []string
	for _, v := range ps.p.Vars {
		known[v.Name] = true
		names = append(names, v.Name)
	}
	for _, d := range ps.p.Data {
		known[d.Name] = true
		names = append(names, d.Name)
	}
	fix := func(n string) string {
		if s := tomlpos.Nearest(n, names); s != "" {
			return fmt.Sprintf("write {%s}, or declare %s under [vars] or as [data.%s]", s, n, n)
		}
		return fmt.Sprintf("declare it under [vars] (%s = \"value\") or as [data.%s], or write {{%s}} for the literal text", n, n, n)
	}
	for i, g := range ps.p.Groups {
		gp := []string{"group", strconv.Itoa(i)}
		for _, n := range parseTemplate(g.Path).names() {
			if !known[n] {
				ps.At(gp, "path", "unknown placeholder {%s} in the path of group %q; %s", n, g.Name, fix(n))
			}
		}
		for _, h := range g.Header {
			for _, n := range parseTemplate(h.Value).names() {
				if !known[n] {
					ps.At(tomlpos.Join(gp, "headers"), h.Name, "unknown placeholder {%s} in header %s of group %q; %s", n, h.Name, g.Name, fix(n))
				}
			}
		}
		for _, n := range parseTemplate(g.Body).names() {
			if known[n] {
				continue
			}
			if g.BodyFile != "" {
				ps.add(g.bodyPath, placeholderLine(g.Body, n), "unknown placeholder {%s} in the body of group %q (body_file on %s:%d); %s", n, g.Name, ps.file, ps.Line(tomlpos.Join(gp, "body_file")), fix(n))
			} else {
				ps.At(gp, "body", "unknown placeholder {%s} in the body of group %q; %s", n, g.Name, fix(n))
			}
		}
	}
}
