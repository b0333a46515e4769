package plan

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
)

// Limits that keep arithmetic on arrivals far from overflow and catch a
// typo's extra zeros; no loopback run needs more.
const (
	maxRate     = 1e6
	maxDuration = 24 * time.Hour
	// minMeasured is the shortest measured window: under a second no
	// percentile or rate means anything ("1ns" offered a billion arrivals
	// a second).
	minMeasured = time.Second
)

type parser struct {
	problems
	file   string
	dir    string
	pos    *positions
	p      *Plan
	bodies bodyFiles
}

func parse(path string, data []byte) (*Plan, error) {
	pos, err := scanPositions(path, string(data)) // before the TOML library: it refuses deep nesting
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		return nil, syntaxRefusal(path, err)
	}
	ps := &parser{file: path, dir: filepath.Dir(path), pos: pos}
	ps.problems.plan = path
	p := Default()
	p.Path, p.dir, p.pos = path, ps.dir, ps.pos
	ps.p = p

	ps.known(raw, nil, "the plan's top level", "server_timing", "vars", "data", "load", "ab", "judge", "tolerance", "threshold", "group", "experiment", "counter", "store_writes", "control")
	if v, ok := ps.str(raw, nil, "server_timing", `server_timing = "Server-Timing"`); ok {
		if !isToken(v) {
			ps.at(nil, "server_timing", "server_timing %q is not a header name; write server_timing = \"Server-Timing\"", v)
		}
		p.ServerTiming = v
	}
	ps.vars(raw)
	ps.data(raw)
	ps.groups(raw)
	ps.load(raw)
	ps.weights()
	ps.ab(raw)
	ps.judge(raw)
	ps.tolerance(raw)
	ps.thresholds(raw)
	ps.experiment(raw) // experiment.go
	ps.counters(raw)   // counter.go
	ps.controls(raw)   // control.go
	ps.placeholders()
	if len(ps.list) == 0 {
		// [load]'s defaults are only checked when the plan writes [load]:
		// a plan made for the gate alone meets CheckLoad in perfgate load.
		if _, written := raw["load"]; written {
			ps.list = append(ps.list, p.check(p.Load, "[load]", ps.lineOf([]string{"load", "rate"}))...)
		}
		// Likewise [ab]: a plan made for perfgate load alone meets
		// CheckAB when the gate runs it (internal/gate).
		if _, written := raw["ab"]; written {
			ps.list = append(ps.list, p.checkAB(p.AB)...)
		}
	}
	if err := ps.first(); err != nil {
		return nil, err
	}
	return p, nil
}

func syntaxRefusal(path string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		line := max(pe.Position.Line, 1)
		return exit.Refusef("%s:%d: this is not valid TOML (%s); fix the syntax on this line, docs/plan.md shows a complete plan", path, line, oneLine(pe.Message))
	}
	return exit.Refusef("%s:1: this is not valid TOML (%s); fix the syntax, docs/plan.md shows a complete plan", path, oneLine(err.Error()))
}

func (ps *parser) lineOf(path []string) int { return ps.pos.line(path) }

func join(path []string, key string) []string {
	return append(append(make([]string, 0, len(path)+1), path...), key)
}

// at records a problem on the line of path+key.
func (ps *parser) at(path []string, key string, format string, a ...any) {
	p := path
	if key != "" {
		p = join(path, key)
	}
	ps.add(ps.file, ps.lineOf(p), format, a...)
}

// known refuses every key of m not in allowed, naming the near miss.
func (ps *parser) known(m map[string]any, path []string, where string, allowed ...string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for _, k := range keys {
		if !ok[k] {
			ps.at(path, k, "unknown key %q in %s; write %s instead", k, where, oneOf(k, allowed, "%s"))
		}
	}
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case map[string]any:
		return "a table"
	case []map[string]any, []any:
		return "an array"
	default:
		return "a date or time"
	}
}

func (ps *parser) str(m map[string]any, path []string, key, example string) (string, bool) {
	v, ok := m[key]
	if !ok {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		ps.at(path, key, "%s must be a string, not %s; write %s", key, typeName(v), example)
		return "", false
	}
	return s, true
}

func (ps *parser) boolean(m map[string]any, path []string, key, example string) (bool, bool) {
	v, ok := m[key]
	if !ok {
		return false, false
	}
	b, isBool := v.(bool)
	if !isBool {
		ps.at(path, key, "%s must be true or false, not %s; write %s", key, typeName(v), example)
		return false, false
	}
	return b, true
}

// num reads a number no lower than lo (strictly above it when open).
func (ps *parser) num(m map[string]any, path []string, key, example string, lo float64, open bool, hi float64) (float64, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		ps.at(path, key, "%s must be a number, not %s; write %s", key, typeName(v), example)
		return 0, false
	}
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		ps.at(path, key, "%s must be a finite number; write %s", key, example)
	case f < 0 && lo >= 0:
		ps.at(path, key, "%s is negative (%s); write %s", key, fnum(f), example)
	case open && f <= lo:
		ps.at(path, key, "%s must be above %s, not %s; write %s", key, fnum(lo), fnum(f), example)
	case f < lo:
		ps.at(path, key, "%s must be at least %s, not %s; write %s", key, fnum(lo), fnum(f), example)
	case f > hi:
		ps.at(path, key, "%s %s is beyond the limit of %s; write %s", key, fnum(f), fnum(hi), example)
	default:
		return f, true
	}
	return 0, false
}

// measured reads a measured window's length: a duration of at least
// minMeasured.
func (ps *parser) measured(m map[string]any, path []string, key, example string) (time.Duration, bool) {
	d, ok := ps.dur(m, path, key, example, true)
	if ok && d < minMeasured {
		ps.at(path, key, "%s %s is too short to measure anything (under %s); write %s", key, d, minMeasured, example)
		return 0, false
	}
	return d, ok
}

// dur reads a duration written as a string ("10s", "1m30s").
func (ps *parser) dur(m map[string]any, path []string, key, example string, positive bool) (time.Duration, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	s, isStr := v.(string)
	if !isStr {
		ps.at(path, key, "%s must be a duration string with its unit, not %s; write %s", key, typeName(v), example)
		return 0, false
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		ps.at(path, key, "%s %q is not a duration; write %s", key, s, example)
	case d < 0:
		ps.at(path, key, "%s is negative (%s); write %s", key, s, example)
	case positive && d == 0:
		ps.at(path, key, "%s must be longer than zero; write %s", key, example)
	case d > maxDuration:
		ps.at(path, key, "%s %s is beyond the limit of 24h; write %s", key, s, example)
	default:
		return d, true
	}
	return 0, false
}

func (ps *parser) table(m map[string]any, path []string, key, example string) (map[string]any, bool) {
	v, ok := m[key]
	if !ok {
		return nil, false
	}
	t, isTable := v.(map[string]any)
	if !isTable {
		ps.at(path, key, "%s must be a table, not %s; write %s", key, typeName(v), example)
		return nil, false
	}
	return t, true
}

// tables reads an array of tables, written [[key]] or key = [{...}].
func (ps *parser) tables(m map[string]any, path []string, key, example string) []map[string]any {
	v, ok := m[key]
	if !ok {
		return nil
	}
	switch a := v.(type) {
	case []map[string]any:
		return a
	case []any:
		out := make([]map[string]any, 0, len(a))
		for i, e := range a {
			t, isTable := e.(map[string]any)
			if !isTable {
				ps.at(join(path, key), strconv.Itoa(i), "each %s must be a table, not %s; write %s", key, typeName(e), example)
				return nil
			}
			out = append(out, t)
		}
		return out
	}
	ps.at(path, key, "%s must be an array of tables, not %s; write %s", key, typeName(v), example)
	return nil
}

// sortedKeys orders a table's keys by their line, so problems and
// declarations follow the file.
func (ps *parser) sortedKeys(m map[string]any, path []string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		li, lj := ps.lineOf(join(path, keys[i])), ps.lineOf(join(path, keys[j]))
		if li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	return keys
}

func fnum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// isSecretName is the naming rule that makes a variable secret whatever the
// plan says: tokens, keys, secrets and passwords are never printed.
func isSecretName(name string) bool {
	n := strings.ToLower(name)
	if n == "token" || n == "key" || n == "secret" {
		return true
	}
	for _, suf := range []string{"_token", "_key", "_secret", "password"} {
		if strings.HasSuffix(n, suf) {
			return true
		}
	}
	return false
}

func (ps *parser) vars(raw map[string]any) {
	t, ok := ps.table(raw, nil, "vars", `[vars] with name = "value" lines`)
	if !ok {
		return
	}
	path := []string{"vars"}
	for _, name := range ps.sortedKeys(t, path) {
		v := Var{Name: name, Line: ps.lineOf(join(path, name)), Secret: isSecretName(name)}
		if !isIdent(name) {
			ps.at(path, name, "variable name %q is not an identifier; write letters, digits and _ only, such as api_token", name)
			continue
		}
		vp := join(path, name)
		switch val := t[name].(type) {
		case string:
			v.Value, v.Has = val, true
		case map[string]any:
			ps.known(val, vp, "variable "+name, "value", "file", "secret")
			if s, ok := ps.str(val, vp, "value", `value = "text"`); ok {
				v.Value, v.Has = s, true
			}
			if s, ok := ps.str(val, vp, "file", `file = "../target/perf-run/token"`); ok {
				if s == "" {
					ps.at(vp, "file", "file is empty; write file = \"../target/perf-run/%s\"", name)
				}
				v.File = s
			}
			if b, ok := ps.boolean(val, vp, "secret", "secret = true"); ok {
				if !b && v.Secret {
					ps.at(vp, "secret", "variable %s is secret by its name (…_token, …_key, …_secret, …password); remove secret = false or rename the variable", name)
				}
				v.Secret = v.Secret || b
			}
		default:
			ps.at(path, name, "variable %s must be a string or a table, not %s; write %s = \"value\" or %s = { secret = true }", name, typeName(val), name, name)
			continue
		}
		if v.Secret && v.Has {
			// A secret written into a committed plan is already leaked.
			ps.at(path, name, "variable %s is a secret and its value must not be written in the plan; write %s = { secret = true } and pass --var %s=@FILE or PERFGATE_VAR_%s", name, name, name, strings.ToUpper(name))
			v.Value, v.Has = "", false
		}
		ps.p.Vars = append(ps.p.Vars, v)
	}
}

func (ps *parser) data(raw map[string]any) {
	t, ok := ps.table(raw, nil, "data", `[data.ids] with file = "ids.txt"`)
	if !ok {
		return
	}
	path := []string{"data"}
	for _, name := range ps.sortedKeys(t, path) {
		dp := join(path, name)
		if !isIdent(name) {
			ps.at(path, name, "data source name %q is not an identifier; write letters, digits and _ only, such as [data.ids]", name)
			continue
		}
		for _, v := range ps.p.Vars {
			if v.Name == name {
				ps.at(path, name, "data source %s has the name of the variable on line %d; rename one of them", name, v.Line)
			}
		}
		m, ok := ps.table(t, path, name, fmt.Sprintf(`[data.%s] with file = "%s.txt"`, name, name))
		if !ok {
			continue
		}
		ps.known(m, dp, "[data."+name+"]", "file", "draw", "exponent", "warmup_fraction", "exhausted")
		d := &DataSource{Name: name, Draw: "fresh", WarmupFraction: 0.2, Exhausted: "refuse", Line: ps.lineOf(dp)}
		file, ok := ps.str(m, dp, "file", fmt.Sprintf(`file = "%s.txt"`, name))
		if !ok {
			if _, present := m["file"]; !present {
				ps.at(path, name, "data source %s names no file; write file = \"%s.txt\" (one value a line) under [data.%s]", name, name, name)
			}
			continue
		}
		d.File = file
		d.FileLine = ps.lineOf(join(dp, "file"))
		if s, ok := ps.str(m, dp, "draw", `draw = "fresh"`); ok {
			if s != "fresh" && s != "zipf" {
				ps.at(dp, "draw", "draw %q is not a way of drawing; write draw = %s", s, oneOf(s, []string{"fresh", "zipf"}, `"%s"`))
			}
			d.Draw = s
		}
		if e, ok := ps.num(m, dp, "exponent", "exponent = 1.1", 0, true, 10); ok {
			if d.Draw != "zipf" {
				ps.at(dp, "exponent", "exponent only shapes draw = \"zipf\"; remove it or write draw = \"zipf\"")
			}
			d.Exponent = e
		} else if _, present := m["exponent"]; !present && d.Draw == "zipf" {
			ps.at(dp, "draw", "draw = \"zipf\" needs its exponent; write exponent = 1.1 under [data.%s]", name)
		}
		if f, ok := ps.num(m, dp, "warmup_fraction", "warmup_fraction = 0.2", 0, false, 1); ok {
			if f >= 1 {
				ps.at(dp, "warmup_fraction", "warmup_fraction %v leaves nothing for the measured stage; write warmup_fraction = 0.2", f)
			}
			d.WarmupFraction = f
		}
		if s, ok := ps.str(m, dp, "exhausted", `exhausted = "refuse"`); ok {
			if s != "refuse" && s != "reshuffle" {
				ps.at(dp, "exhausted", "exhausted %q is not a choice; write exhausted = %s", s, oneOf(s, []string{"refuse", "reshuffle"}, `"%s"`))
			}
			if d.Draw == "zipf" {
				ps.at(dp, "exhausted", "a zipf draw repeats values by design and is never exhausted; remove exhausted")
			}
			d.Exhausted = s
		}
		ps.readValues(d)
		ps.p.Data = append(ps.p.Data, d)
	}
}

func (ps *parser) groups(raw map[string]any) {
	const example = `[[group]] with name = "hello", path = "/hello", expect = 200`
	list := ps.tables(raw, nil, "group", example)
	if len(list) == 0 {
		if _, present := raw["group"]; !present {
			ps.add(ps.file, 1, "the plan has no request group; add one: [[group]] name = \"hello\" path = \"/hello\" expect = 200")
		}
		return
	}
	names := map[string]int{}
	for i, m := range list {
		gp := []string{"group", strconv.Itoa(i)}
		g := Group{Method: "GET", Weight: 1, Line: ps.lineOf(gp)}
		name, ok := ps.str(m, gp, "name", `name = "hello"`)
		switch {
		case !ok:
			if _, present := m["name"]; !present {
				ps.at(gp, "", "this group has no name; write name = \"group%d\" under its [[group]]", i+1)
			}
		case !isGroupName(name):
			ps.at(gp, "name", "group name %q must be letters, digits, - and _ (it names metrics such as p99.<group>); write name = %q", name, groupNameFix(name, i))
		default:
			if first, dup := names[name]; dup {
				ps.at(gp, "name", "group name %q is already used on line %d; write a different name", name, first)
			} else {
				names[name] = ps.lineOf(join(gp, "name"))
			}
		}
		g.Name = name
		where := fmt.Sprintf("[[group]] %q", name)
		ps.known(m, gp, where, "name", "method", "path", "headers", "body", "body_file", "expect", "weight", "max_rate", "dpop_key_file")
		if s, ok := ps.str(m, gp, "method", `method = "GET"`); ok {
			if !isToken(s) || strings.ToUpper(s) != s {
				ps.at(gp, "method", "method %q is not an HTTP method; write method = %q", s, strings.ToUpper(firstToken(s, "GET")))
			}
			g.Method = s
		}
		if s, ok := ps.str(m, gp, "path", `path = "/hello"`); ok {
			switch {
			case strings.Contains(s, "://"):
				ps.at(gp, "path", "path %q holds a URL; write the path alone, such as path = %q (the target comes from --target)", s, pathOf(s))
			case !strings.HasPrefix(s, "/"):
				ps.at(gp, "path", "path %q must start with /; write path = %q", s, "/"+s)
			case strings.ContainsAny(s, " \t\r\n"):
				ps.at(gp, "path", "path %q holds a space or a line break; write it percent-encoded, such as path = %q", s, strings.ReplaceAll(strings.TrimSpace(s), " ", "%20"))
			}
			g.Path = s
		} else if _, present := m["path"]; !present {
			ps.at(gp, "", "group %q has no path; write path = \"/\" under its [[group]]", name)
		}
		if h, ok := ps.table(m, gp, "headers", `headers = { Accept = "application/json" }`); ok {
			hp := join(gp, "headers")
			for _, k := range ps.sortedKeys(h, hp) {
				v, isStr := h[k].(string)
				switch {
				case !isToken(k):
					ps.at(hp, k, "header name %q is not a valid HTTP header name; write it like X-Request-Id", k)
				case !isStr:
					ps.at(hp, k, "header %s must be a string, not %s; write \"%s\" = \"value\"", k, typeName(h[k]), k)
				case strings.ContainsAny(v, "\r\n"):
					ps.at(hp, k, "header %s holds a line break; write its value on one line", k)
				default:
					g.Header = append(g.Header, load.Header{Name: k, Value: v})
				}
			}
		}
		body, hasBody := ps.str(m, gp, "body", `body = '{"name": "widget"}'`)
		bodyFile, hasFile := ps.str(m, gp, "body_file", `body_file = "bodies/create.json"`)
		switch {
		case hasBody && hasFile:
			ps.at(gp, "body_file", "group %q has both body and body_file; remove one of them", name)
		case hasBody:
			g.Body = body
		case hasFile:
			g.BodyFile = bodyFile
			ps.readBody(&g, join(gp, "body_file"))
		}
		ps.expect(m, gp, &g)
		ps.dpopKey(m, gp, &g) // dpop.go
		if w, ok := ps.num(m, gp, "weight", "weight = 1", 0, true, 1e6); ok {
			g.Weight = w
		}
		if r, ok := ps.num(m, gp, "max_rate", "max_rate = 5", 0, true, maxRate); ok {
			g.MaxRate = r
		}
		ps.p.Groups = append(ps.p.Groups, g)
	}
}

func (ps *parser) expect(m map[string]any, gp []string, g *Group) {
	v, ok := m["expect"]
	if !ok {
		ps.at(gp, "", "group %q names no expected status; write expect = 200 (or expect = [200, 204]) under its [[group]]", g.Name)
		return
	}
	var codes []any
	switch e := v.(type) {
	case int64:
		codes = []any{e}
	case []any:
		codes = e
	default:
		ps.at(gp, "expect", "expect must be a status code or a list of them, not %s; write expect = 200", typeName(v))
		return
	}
	if len(codes) == 0 {
		ps.at(gp, "expect", "expect is empty; write expect = 200")
		return
	}
	for _, c := range codes {
		n, isInt := c.(int64)
		if !isInt || n < 100 || n > 599 {
			ps.at(gp, "expect", "expect holds %v, which is not an HTTP status (100-599); write expect = 200", c)
			return
		}
		g.Expect = append(g.Expect, int(n))
	}
}

func isGroupName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func groupNameFix(s string, i int) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 64; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_':
			b.WriteByte(c)
		case c == ' ' || c == '.' || c == '/':
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return fmt.Sprintf("group%d", i+1)
	}
	return b.String()
}

func firstToken(s, fallback string) string {
	f := strings.FieldsFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
	if len(f) == 0 {
		return fallback
	}
	return f[0]
}

func pathOf(url string) string {
	rest := url[strings.Index(url, "://")+3:]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i:]
	}
	return "/"
}

func (ps *parser) load(raw map[string]any) {
	m, ok := ps.table(raw, nil, "load", "[load] with rate = 20")
	if !ok {
		return
	}
	lp := []string{"load"}
	l := &ps.p.Load
	ps.known(m, lp, "[load]", "rate", "warmup", "duration", "stage", "order")
	if r, ok := ps.num(m, lp, "rate", "rate = 20", 0, false, maxRate); ok {
		l.Rate = r
	}
	if d, ok := ps.dur(m, lp, "warmup", `warmup = "10s"`, false); ok {
		l.Warmup = d
	}
	if d, ok := ps.measured(m, lp, "duration", `duration = "60s"`); ok {
		l.Duration = d
	}
	if s, ok := ps.str(m, lp, "order", `order = "turn"`); ok {
		if s != "turn" && s != "weight" {
			ps.at(lp, "order", "order %q is not a way of choosing groups; write order = %s", s, oneOf(s, []string{"turn", "weight"}, `"%s"`))
		}
		l.Order = s
	}
	stages := ps.tables(m, lp, "stage", `[[load.stage]] with target = 50 and duration = "30s"`)
	for i, st := range stages {
		sp := []string{"load", "stage", strconv.Itoa(i)}
		ps.known(st, sp, "[[load.stage]]", "target", "duration")
		var s Stage
		if t, ok := ps.num(st, sp, "target", "target = 50", 0, false, maxRate); ok {
			s.Target = t
		} else if _, present := st["target"]; !present {
			ps.at(sp, "", "this stage has no target rate; write target = 50 under its [[load.stage]]")
		}
		if d, ok := ps.dur(st, sp, "duration", `duration = "30s"`, true); ok {
			s.Duration = d
		} else if _, present := st["duration"]; !present {
			ps.at(sp, "", "this stage has no duration; write duration = \"30s\" under its [[load.stage]]")
		}
		l.Stages = append(l.Stages, s)
	}
	if len(stages) > 0 {
		if _, present := m["duration"]; present {
			ps.at(lp, "duration", "with stages the measured duration is the sum of the stages; remove duration from [load]")
		}
		l.Duration = l.MeasuredDuration()
		if l.Duration > maxDuration {
			ps.at(lp, "stage", "the stages last %s, beyond the limit of 24h; shorten them", l.Duration)
		}
	} else if _, present := m["rate"]; present && l.Rate == 0 {
		ps.at(lp, "rate", "rate = 0 sends nothing; write rate = 20, or add [[load.stage]] tables to ramp from 0")
		return
	}
	if l.Rate == 0 && l.Warmup > 0 {
		key := "warmup"
		if _, written := m["warmup"]; !written {
			key = "rate"
		}
		ps.at(lp, key, "the warm-up (%s) runs at rate, which is 0, so it sends nothing; write rate = 20 or warmup = \"0s\"", l.Warmup)
	}
}

// weights refuses a weight that would be ignored: groups go in turn unless
// [load] says order = "weight".
func (ps *parser) weights() {
	if ps.p.Load.Order == "weight" {
		return
	}
	for i, g := range ps.p.Groups {
		if g.Weight != 1 {
			ps.at([]string{"group", strconv.Itoa(i)}, "weight", "group %q has a weight but groups are sent in turn; write order = \"weight\" under [load], or remove weight", g.Name)
		}
	}
}

func (ps *parser) ab(raw map[string]any) {
	m, ok := ps.table(raw, nil, "ab", "[ab] with pairs = 4")
	if !ok {
		return
	}
	ap := []string{"ab"}
	a := &ps.p.AB
	ps.p.abWritten = true
	ps.known(m, ap, "[ab]", "pairs", "warmup", "measure", "rate", "idle", "idle_cpu", "idle_tx_per_sec")
	if v, present := m["pairs"]; present {
		n, isInt := v.(int64)
		switch {
		case !isInt:
			ps.at(ap, "pairs", "pairs must be a whole number, not %s; write pairs = 4", typeName(v))
		case n < 1 || n > 100:
			ps.at(ap, "pairs", "pairs must be from 1 to 100, not %d; write pairs = 4", n)
		default:
			a.Pairs = int(n)
		}
	}
	if d, ok := ps.dur(m, ap, "warmup", `warmup = "10s"`, false); ok {
		a.Warmup = d
	}
	if d, ok := ps.measured(m, ap, "measure", `measure = "60s"`); ok {
		a.Measure = d
	}
	if r, ok := ps.num(m, ap, "rate", "rate = 20", 0, true, maxRate); ok {
		a.Rate = r
	}
	if d, ok := ps.dur(m, ap, "idle", `idle = "60s"`, false); ok {
		a.Idle = d
	}
	if c, ok := ps.num(m, ap, "idle_cpu", "idle_cpu = 2 (percent of one core)", 0, true, 10000); ok {
		a.IdleCPU = c / 100
	}
	if t, ok := ps.num(m, ap, "idle_tx_per_sec", "idle_tx_per_sec = 1", 0, true, 1e9); ok {
		a.IdleTxPerSec = t
	}
}

// judge reads [judge]: which rule judges the metrics.
func (ps *parser) judge(raw map[string]any) {
	m, ok := ps.table(raw, nil, "judge", `[judge] with rule = "paired"`)
	if !ok {
		return
	}
	jp := []string{"judge"}
	ps.known(m, jp, "[judge]", "rule")
	if r, ok := ps.str(m, jp, "rule", `rule = "paired"`); ok {
		if !slices.Contains(judge.Rules, r) {
			ps.at(jp, "rule", "rule %q is no rule of the judge; write rule = %s (docs/judge.md)", r, oneOf(r, judge.Rules, `"%s"`))
			return
		}
		ps.p.Rule = r
	}
}

func (ps *parser) tolerance(raw map[string]any) {
	m, ok := ps.table(raw, nil, "tolerance", "[tolerance] with latency = 25")
	if !ok {
		return
	}
	tp := []string{"tolerance"}
	var groupNames []string
	for _, g := range ps.p.Groups {
		groupNames = append(groupNames, g.Name)
	}
	for _, k := range ps.sortedKeys(m, tp) {
		if !ps.toleranceKey(k, groupNames, tp) {
			continue
		}
		if v, ok := ps.num(m, tp, k, fmt.Sprintf("%q = 25 (percent)", k), 0, false, 1000); ok {
			ps.p.Tolerance[k] = v / 100
		}
	}
}

// toleranceKey checks a [tolerance] key against the judge's vocabulary:
// a class, a metric without a group, or a percentile of one of the plan's
// groups.
func (ps *parser) toleranceKey(k string, groups []string, tp []string) bool {
	if judge.CheckToleranceKey(k, groups) == "" {
		return true
	}
	if q, g, ok := strings.Cut(k, "."); ok {
		for _, p := range judge.Percentiles {
			if q == p.Name {
				if len(groups) > 0 {
					ps.at(tp, k, "tolerance %q names no request group; write %q", k, q+"."+oneOf(g, groups, "%s"))
				}
				return false
			}
		}
	}
	var names []string
	for _, p := range judge.Percentiles {
		names = append(names, p.Name)
	}
	ps.at(tp, k, "unknown tolerance %q; write %s, or %s.<group>", k, oneOf(k, judge.ToleranceKeys(), "%s"), strings.Join(names, "/"))
	return false
}

func (ps *parser) thresholds(raw map[string]any) {
	list := ps.tables(raw, nil, "threshold", `[[threshold]] with metric = "p90", below = "150ms"`)
	for i, m := range list {
		tp := []string{"threshold", strconv.Itoa(i)}
		ps.known(m, tp, "[[threshold]]", "group", "metric", "below", "min", "side")
		th := Threshold{Side: "client", Line: ps.lineOf(tp)}
		if g, ok := ps.str(m, tp, "group", `group = "hello"`); ok {
			found := false
			var names []string
			for _, gr := range ps.p.Groups {
				names = append(names, gr.Name)
				found = found || gr.Name == g
			}
			if !found && len(names) > 0 {
				ps.at(tp, "group", "threshold names group %q, which the plan does not have; write group = %s", g, oneOf(g, names, `"%s"`))
			}
			th.Group = g
		}
		metric, ok := ps.str(m, tp, "metric", `metric = "p90"`)
		if !ok {
			if _, present := m["metric"]; !present {
				ps.at(tp, "", "this threshold names no metric; write metric = \"p90\" (or \"success\", \"under\")")
			}
			continue
		}
		th.Metric = metric
		below, _ := ps.dur(m, tp, "below", `below = "150ms"`, true)
		_, belowWritten := m["below"]
		minV, _ := ps.num(m, tp, "min", "min = 99 (percent)", 0, true, 100)
		_, minWritten := m["min"]
		th.Below, th.Min = below, minV/100
		switch {
		case isPercentile(metric):
			if !belowWritten {
				ps.at(tp, "metric", "a %s threshold needs its limit; write below = \"150ms\"", metric)
			}
			if minWritten {
				ps.at(tp, "min", "min does not apply to %s; remove it (it bounds success and under)", metric)
			}
		case metric == "success":
			if !minWritten {
				ps.at(tp, "metric", "a success threshold needs its lowest ratio; write min = 99 (percent)")
			}
			if belowWritten {
				ps.at(tp, "below", "below does not apply to success; remove it, or write metric = \"under\" for the share of requests under a latency")
			}
		case metric == "under":
			if !belowWritten || !minWritten {
				ps.at(tp, "metric", "an under threshold needs the latency and the share; write below = \"150ms\" and min = 90 (percent)")
			}
		default:
			ps.at(tp, "metric", "unknown threshold metric %q; write metric = \"p90\" (any p<N>), \"success\" or \"under\"", metric)
		}
		if s, ok := ps.str(m, tp, "side", `side = "client"`); ok {
			switch {
			case s != "client" && s != "server":
				ps.at(tp, "side", "side %q is not a side; write side = %s", s, oneOf(s, []string{"client", "server"}, `"%s"`))
			case s == "server" && ps.p.ServerTiming == "":
				ps.at(tp, "side", "side = \"server\" needs the server's timing header; write server_timing = \"Server-Timing\" at the top of the plan")
			}
			th.Side = s
		}
		ps.p.Thresholds = append(ps.p.Thresholds, th)
	}
}

// isPercentile accepts p<N> with 0 < N < 100 (p50, p90, p99.9) and p100.
func isPercentile(m string) bool {
	if len(m) < 2 || m[0] != 'p' {
		return false
	}
	f, err := strconv.ParseFloat(m[1:], 64)
	return err == nil && f > 0 && f <= 100 && !strings.ContainsAny(m[1:], "eExX+-_")
}

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
		if s := nearest(n, names); s != "" {
			return fmt.Sprintf("write {%s}, or declare %s under [vars] or as [data.%s]", s, n, n)
		}
		return fmt.Sprintf("declare it under [vars] (%s = \"value\") or as [data.%s], or write {{%s}} for the literal text", n, n, n)
	}
	for i, g := range ps.p.Groups {
		gp := []string{"group", strconv.Itoa(i)}
		for _, n := range parseTemplate(g.Path).names() {
			if !known[n] {
				ps.at(gp, "path", "unknown placeholder {%s} in the path of group %q; %s", n, g.Name, fix(n))
			}
		}
		for _, h := range g.Header {
			for _, n := range parseTemplate(h.Value).names() {
				if !known[n] {
					ps.at(join(gp, "headers"), h.Name, "unknown placeholder {%s} in header %s of group %q; %s", n, h.Name, g.Name, fix(n))
				}
			}
		}
		for _, n := range parseTemplate(g.Body).names() {
			if known[n] {
				continue
			}
			if g.BodyFile != "" {
				ps.add(g.bodyPath, placeholderLine(g.Body, n), "unknown placeholder {%s} in the body of group %q (body_file on %s:%d); %s", n, g.Name, ps.file, ps.lineOf(join(gp, "body_file")), fix(n))
			} else {
				ps.at(gp, "body", "unknown placeholder {%s} in the body of group %q; %s", n, g.Name, fix(n))
			}
		}
	}
}
