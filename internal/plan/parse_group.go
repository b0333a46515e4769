package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

func (ps *parser) groups(raw map[string]any) {
	const example = `[[group]] with name = "hello", path = "/hello", expect = 200`
	list := ps.Tables(raw, nil, "group", example)
	if len(list) == 0 {
		if _, present := raw["group"]; !present {
			ps.add(ps.file, 1, "the plan has no request group; add one: [[group]] name = \"hello\" path = \"/hello\" expect = 200")
		}
		return
	}
	names := map[string]int{}
	for i, m := range list {
		gp := []string{"group", strconv.Itoa(i)}
		g := Group{Method: "GET", Weight: 1, Line: ps.Line(gp)}
		name, ok := ps.Str(m, gp, "name", `name = "hello"`)
		switch {
		case !ok:
			ps.Need(m, gp, "name", "this group", "name", fmt.Sprintf("name = \"group%d\"", i+1), "[[group]]")
		case !isGroupName(name):
			ps.At(gp, "name", "group name %q must be letters, digits, - and _ (it names metrics such as p99.<group>); write name = %q", name, groupNameFix(name, i))
		default:
			if first, dup := names[name]; dup {
				ps.At(gp, "name", "group name %q is already used on line %d; write a different name", name, first)
			} else {
				names[name] = ps.Line(tomlpos.Join(gp, "name"))
			}
		}
		g.Name = name
		where := fmt.Sprintf("[[group]] %q", name)
		ps.Known(m, gp, where, append([]string{"name", "method", "path", "headers", "body", "body_file", "expect", "weight", "max_rate", "dpop_key_file"}, answerKeys...)...)
		if s, ok := ps.Str(m, gp, "method", `method = "GET"`); ok {
			if !isToken(s) || strings.ToUpper(s) != s {
				ps.At(gp, "method", "method %q is not an HTTP method; write method = %q", s, strings.ToUpper(firstToken(s, "GET")))
			}
			g.Method = s
		}
		if s, ok := ps.Str(m, gp, "path", `path = "/hello"`); ok {
			switch {
			case strings.Contains(s, "://"):
				ps.At(gp, "path", "path %q holds a URL; write the path alone, such as path = %q (the target comes from --target)", s, pathOf(s))
			case !strings.HasPrefix(s, "/"):
				ps.At(gp, "path", "path %q must start with /; write path = %q", s, "/"+s)
			case strings.ContainsAny(s, " \t\r\n"):
				ps.At(gp, "path", "path %q holds a space or a line break; write it percent-encoded, such as path = %q", s, strings.ReplaceAll(strings.TrimSpace(s), " ", "%20"))
			}
			g.Path = s
		}
		ps.Need(m, gp, "path", fmt.Sprintf("group %q", name), "path", `path = "/"`, "[[group]]")
		if h, ok := ps.Table(m, gp, "headers", `headers = { Accept = "application/json" }`); ok {
			hp := tomlpos.Join(gp, "headers")
			for _, k := range ps.SortedKeys(h, hp) {
				v, isStr := h[k].(string)
				switch {
				case !isToken(k):
					ps.At(hp, k, "header name %q is not a valid HTTP header name; write it like X-Request-Id", k)
				case !isStr:
					ps.At(hp, k, "%s", tomlpos.WrongKind("header "+k, "a string", h[k], fmt.Sprintf(`"%s" = "value"`, k)))
				case strings.ContainsAny(v, "\r\n"):
					ps.At(hp, k, "header %s holds a line break; write its value on one line", k)
				default:
					g.Header = append(g.Header, load.Header{Name: k, Value: v})
				}
			}
		}
		body, hasBody := ps.Str(m, gp, "body", `body = '{"name": "widget"}'`)
		bodyFile, hasFile := ps.Str(m, gp, "body_file", `body_file = "bodies/create.json"`)
		switch {
		case hasBody && hasFile:
			ps.At(gp, "body_file", "group %q has both body and body_file; remove one of them", name)
		case hasBody:
			g.Body = body
		case hasFile:
			g.BodyFile = bodyFile
			ps.readBody(&g, tomlpos.Join(gp, "body_file"))
		}
		ps.expect(m, gp, &g)
		ps.answer(m, gp, &g)  // parse_answer.go
		ps.dpopKey(m, gp, &g) // dpop.go
		if w, ok := ps.Num(m, gp, "weight", "weight = 1", 0, true, 1e6); ok {
			g.Weight = w
		}
		if r, ok := ps.Num(m, gp, "max_rate", "max_rate = 5", 0, true, maxRate); ok {
			g.MaxRate = r
		}
		ps.p.Groups = append(ps.p.Groups, g)
	}
}

func (ps *parser) expect(m map[string]any, gp []string, g *Group) {
	v, ok := m["expect"]
	if !ok {
		ps.At(gp, "", "group %q names no expected status; write expect = 200 (or expect = [200, 204]) under its [[group]]", g.Name)
		return
	}
	var codes []any
	switch e := v.(type) {
	case int64:
		codes = []any{e}
	case []any:
		codes = e
	default:
		ps.At(gp, "expect", "%s", tomlpos.WrongKind("expect", "a status code or a list of them", v, "expect = 200"))
		return
	}
	if len(codes) == 0 {
		ps.At(gp, "expect", "expect is empty; write expect = 200")
		return
	}
	for _, c := range codes {
		n, isInt := c.(int64)
		if !isInt || n < 100 || n > 599 {
			ps.At(gp, "expect", "expect holds %v, which is not an HTTP status (100-599); write expect = 200", c)
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
