package plan

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/redact"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// Counter is a [[counter]] table: after the pairs, perfgate sends Requests
// requests of Group to an arm and reads a count before and after, from an
// HTTP path on the arm or a full URL of another loopback service of the
// run, such as the token service's /calls (URL, the body a number or Field
// a JSON field by dotted path), or an SQL query on the arm's store
// database (SQL). The count's growth may be at most MaxPerRequest of the
// requests sent (default DefaultCounterLimit): FerroFED's gate's token
// exchanges at most 5 % of definition reads, which a missing cache (one
// exchange per request) fails and a latency tolerance misses.
// internal/controls runs it (docs/controls.md).
type Counter struct {
	Name          string
	Group         string
	Requests      int
	URL           string // a path on the arm ("/calls") or a loopback URL ("http://127.0.0.1:9100/calls")
	Field         string // a dotted JSON path into URL's answer; "" = the body is a number
	SQL           string // one query returning one number
	MaxPerRequest float64
	Line          int
}

// StoreWrites is a [[store_writes]] table: the head's store must have
// written (inserted or updated) at least one row of Table per request of
// Group the head answered as expected in the A/B run, read from
// PostgreSQL's pg_stat_user_tables: FerroFED's gate's emergency accesses, each
// recorded once whatever the access log does.
type StoreWrites struct {
	Group string
	Table string // "schema.table", or "table" in public
	Line  int
}

var tableName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*\.)?[A-Za-z_][A-Za-z0-9_]*$`)

// DefaultCounterRequests is FerroFED's gate's 200 definition reads.
const DefaultCounterRequests = 200

// DefaultCounterLimit is FerroFED's gate's limit: token exchanges at most
// 5 % of the definition reads (a fraction of the requests sent).
const DefaultCounterLimit = 0.05

func (ps *parser) counters(raw map[string]any) {
	const example = `[[counter]] with name = "exchanges", group = "onward", url = "/calls", field = "exchanges", max_per_request = 5`
	names := map[string]int{}
	for i, m := range ps.Tables(raw, nil, "counter", example) {
		cp := []string{"counter", strconv.Itoa(i)}
		c := Counter{Requests: DefaultCounterRequests, MaxPerRequest: DefaultCounterLimit, Line: ps.Line(cp)}
		ps.Known(m, cp, "[[counter]]", "name", "group", "requests", "url", "field", "sql", "max_per_request")
		name, ok := ps.Str(m, cp, "name", `name = "exchanges"`)
		switch {
		case !ok:
			ps.Need(m, cp, "name", "this counter", "name", `name = "exchanges"`, "[[counter]]")
		case !isGroupName(name):
			ps.At(cp, "name", "counter name %q must be letters, digits, - and _; write name = %q", name, groupNameFix(name, i))
		default:
			if first, dup := names[name]; dup {
				ps.At(cp, "name", "counter name %q is already used on line %d; write a different name", name, first)
			}
			names[name] = ps.Line(tomlpos.Join(cp, "name"))
		}
		c.Name = name
		c.Group = ps.groupRef(m, cp, "counter")
		if n, ok := ps.Num(m, cp, "requests", "requests = 200", 0, true, 100000); ok {
			if n != float64(int(n)) {
				ps.At(cp, "requests", "requests must be a whole number, not %s; write requests = %d", fnum(n), int(n)+1)
			}
			c.Requests = int(n)
		}
		c.URL, _ = ps.Str(m, cp, "url", `url = "/calls"`)
		c.Field, _ = ps.Str(m, cp, "field", `field = "exchanges"`)
		c.SQL, _ = ps.Str(m, cp, "sql", `sql = "SELECT count(*) FROM exchanges"`)
		switch {
		case c.URL == "" && c.SQL == "":
			ps.At(cp, "", "counter %q reads nothing; write url = \"/calls\" (a path on the arm answering a number or JSON, or a loopback URL such as \"http://127.0.0.1:9100/calls\") or sql = \"SELECT ...\" (a query on the arm's store)", name)
		case c.URL != "" && c.SQL != "":
			ps.At(cp, "sql", "counter %q has both url and sql; keep one of them", name)
		case c.URL != "" && !strings.HasPrefix(c.URL, "/"):
			if why := counterURL(c.URL); why != "" {
				ps.At(cp, "url", "url %s; write url = \"/calls\" (a path on the arm) or url = \"http://127.0.0.1:9100/calls\" (another service of the run, on loopback)", why)
			}
		case c.Field != "" && c.URL == "":
			ps.At(cp, "field", "field reads a JSON answer, but counter %q reads sql; drop field", name)
		}
		if v, ok := ps.Num(m, cp, "max_per_request", "max_per_request = 5", 0, false, 1e6); ok {
			c.MaxPerRequest = v / 100
		}
		ps.p.Counters = append(ps.p.Counters, c)
	}
	for i, m := range ps.Tables(raw, nil, "store_writes", `[[store_writes]] with group = "create", table = "items"`) {
		wp := []string{"store_writes", strconv.Itoa(i)}
		w := StoreWrites{Line: ps.Line(wp)}
		ps.Known(m, wp, "[[store_writes]]", "group", "table")
		w.Group = ps.groupRef(m, wp, "store_writes")
		if t, ok := ps.Str(m, wp, "table", `table = "items"`); ok {
			if !tableName.MatchString(t) {
				ps.At(wp, "table", "table %q is not a table name; write table = \"schema.table\" or table = \"table\"", t)
			}
			w.Table = t
		} else if _, present := m["table"]; !present {
			ps.At(wp, "", "[[store_writes]] names no table; write table = \"items\"")
		}
		ps.p.StoreWrites = append(ps.p.StoreWrites, w)
	}
}

// counterURL says what is wrong with a counter's full URL, quoted first
// (its password hidden), or "": it must
// be http or https on loopback, like every address perfgate reaches, and
// carry no credentials, which perfgate would print, as
// contract.LoopbackURL says of the arms' URLs (plan cannot import
// contract, which imports plan; both take load.IsLoopback's rule).
func counterURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return strconv.Quote(redact.URL(raw)) + " is neither a path starting with / nor a URL"
	}
	shown := strconv.Quote(u.Redacted())
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return shown + " has scheme " + strconv.Quote(u.Scheme) + ", not http or https"
	case u.User != nil:
		return shown + " holds a user name or password, which perfgate would print; read a count that needs none"
	}
	if host := u.Hostname(); !load.IsLoopback(host) {
		return shown + " names " + host + ", which is not loopback: perfgate only reads services of the run on 127.0.0.1 (or ::1)"
	}
	return ""
}

// groupRef reads a group = "name" that must name one of the plan's groups.
func (ps *parser) groupRef(m map[string]any, path []string, where string) string {
	g, ok := ps.Str(m, path, "group", `group = "hello"`)
	if !ok {
		if _, present := m["group"]; !present {
			ps.At(path, "", "this [[%s]] names no request group; write group = %q", where, ps.firstGroup())
		}
		return ""
	}
	var known []string
	for _, x := range ps.p.Groups {
		if x.Name == g {
			return g
		}
		known = append(known, x.Name)
	}
	ps.At(path, "group", "group %q is not one of the plan's groups; write %s", g, tomlpos.OneOf(g, known, "group = %q"))
	return g
}

func (ps *parser) firstGroup() string {
	if len(ps.p.Groups) > 0 {
		return ps.p.Groups[0].Name
	}
	return "hello"
}

// CounterNamed returns the counter of that name.
func (p *Plan) CounterNamed(name string) (Counter, bool) {
	for _, c := range p.Counters {
		if c.Name == name {
			return c, true
		}
	}
	return Counter{}, false
}
