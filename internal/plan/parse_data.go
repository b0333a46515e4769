package plan

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/tomlpos"
)

func (ps *parser) data(raw map[string]any) {
	t, ok := ps.Table(raw, nil, "data", `[data.ids] with file = "ids.txt"`)
	if !ok {
		return
	}
	path := []string{"data"}
	for _, name := range ps.SortedKeys(t, path) {
		dp := tomlpos.Join(path, name)
		if !isIdent(name) {
			ps.At(path, name, "data source name %q is not an identifier; write letters, digits and _ only, such as [data.ids]", name)
			continue
		}
		for _, v := range ps.p.Vars {
			if v.Name == name {
				ps.At(path, name, "data source %s has the name of the variable on line %d; rename one of them", name, v.Line)
			}
		}
		m, ok := ps.Table(t, path, name, fmt.Sprintf(`[data.%s] with file = "%s.txt"`, name, name))
		if !ok {
			continue
		}
		ps.Known(m, dp, "[data."+name+"]", "file", "draw", "exponent", "warmup_fraction", "exhausted")
		d := &DataSource{Name: name, Draw: "fresh", WarmupFraction: 0.2, Exhausted: "refuse", Line: ps.Line(dp)}
		file, ok := ps.Str(m, dp, "file", fmt.Sprintf(`file = "%s.txt"`, name))
		if !ok {
			if _, present := m["file"]; !present {
				ps.At(path, name, "data source %s names no file; write file = \"%s.txt\" (one value a line) under [data.%s]", name, name, name)
			}
			continue
		}
		d.File = file
		d.FileLine = ps.Line(tomlpos.Join(dp, "file"))
		if s, ok := ps.Str(m, dp, "draw", `draw = "fresh"`); ok {
			if s != "fresh" && s != "zipf" {
				ps.At(dp, "draw", "draw %q is not a way of drawing; write draw = %s", s, tomlpos.OneOf(s, []string{"fresh", "zipf"}, `"%s"`))
			}
			d.Draw = s
		}
		if e, ok := ps.Num(m, dp, "exponent", "exponent = 1.1", 0, true, 10); ok {
			if d.Draw != "zipf" {
				ps.At(dp, "exponent", "exponent only shapes draw = \"zipf\"; remove it or write draw = \"zipf\"")
			}
			d.Exponent = e
		} else if _, present := m["exponent"]; !present && d.Draw == "zipf" {
			ps.At(dp, "draw", "draw = \"zipf\" needs its exponent; write exponent = 1.1 under [data.%s]", name)
		}
		if f, ok := ps.Num(m, dp, "warmup_fraction", "warmup_fraction = 0.2", 0, false, 1); ok {
			if f >= 1 {
				ps.At(dp, "warmup_fraction", "warmup_fraction %v leaves nothing for the measured stage; write warmup_fraction = 0.2", f)
			}
			d.WarmupFraction = f
		}
		if s, ok := ps.Str(m, dp, "exhausted", `exhausted = "refuse"`); ok {
			if s != "refuse" && s != "reshuffle" {
				ps.At(dp, "exhausted", "exhausted %q is not a choice; write exhausted = %s", s, tomlpos.OneOf(s, []string{"refuse", "reshuffle"}, `"%s"`))
			}
			if d.Draw == "zipf" {
				ps.At(dp, "exhausted", "a zipf draw repeats values by design and is never exhausted; remove exhausted")
			}
			d.Exhausted = s
		}
		ps.readValues(d)
		ps.p.Data = append(ps.p.Data, d)
	}
}
