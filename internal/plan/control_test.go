package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

const checksGroups = `[[group]]
name = "create"
method = "POST"
path = "/items"
expect = 201

[[group]]
name = "onward"
path = "/onward/1"
expect = 200
`

func TestCountersAndControlsParse(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "busy.toml"), "[ab]\nidle = \"60s\"\nidle_tx_per_sec = 1\n\n"+checksGroups)
	src := checksGroups + `
[[store_writes]]
group = "create"
table = "app.items"

[[counter]]
name = "exchanges"
group = "onward"
url = "/calls"
field = "calls.exchanges"
max_per_request = 5

[[counter]]
name = "rows"
group = "create"
requests = 20
sql = "SELECT count(*) FROM items"
max_per_request = 100

[[counter]]
name = "token-service"
group = "onward"
url = "http://127.0.0.1:9100/calls"

[[control]]
kind = "idle"
plan = "busy.toml"

[[control]]
kind = "variant"
overrides = ["EXAMPLED_TOKEN_CACHE=false"]
counter = "exchanges"
`
	p, err := Parse(filepath.Join(dir, "plan.toml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.StoreWrites) != 1 || p.StoreWrites[0] != (StoreWrites{Group: "create", Table: "app.items", Line: 12}) {
		t.Errorf("store writes %+v", p.StoreWrites)
	}
	c, ok := p.CounterNamed("exchanges")
	if !ok || c.Requests != DefaultCounterRequests || c.URL != "/calls" || c.Field != "calls.exchanges" || c.MaxPerRequest != 0.05 {
		t.Errorf("counter exchanges %+v", c)
	}
	if r, _ := p.CounterNamed("rows"); r.Requests != 20 || r.SQL == "" || r.MaxPerRequest != 1 {
		t.Errorf("counter rows %+v", r)
	}
	// A counter of another loopback service of the run, without a
	// limit: FerroFED's gate's 5 %.
	if s, _ := p.CounterNamed("token-service"); s.URL != "http://127.0.0.1:9100/calls" || s.MaxPerRequest != DefaultCounterLimit || s.Requests != DefaultCounterRequests {
		t.Errorf("counter token-service %+v", s)
	}
	idle, ok := p.ControlOf(ControlIdle)
	if !ok || idle.Plan == nil || idle.Plan.AB.Idle.Seconds() != 60 || idle.PlanFile != "busy.toml" {
		t.Errorf("idle control %+v", idle)
	}
	v, ok := p.ControlOf(ControlVariant)
	if !ok || v.Counter != "exchanges" || len(v.Overrides) != 1 {
		t.Errorf("variant control %+v", v)
	}
}

func TestCountersAndControlsRefusals(t *testing.T) {
	cases := []struct {
		name, extra, want string
	}{
		{"unknown group", "[[counter]]\nname = \"c\"\ngroup = \"onwrd\"\nurl = \"/calls\"\nmax_per_request = 5\n", `plan.toml:14: group "onwrd" is not one of the plan's groups; write group = "onward"`},
		{"reads nothing", "[[counter]]\nname = \"c\"\ngroup = \"onward\"\nmax_per_request = 5\n", `plan.toml:12: counter "c" reads nothing`},
		{"url and sql", "[[counter]]\nname = \"c\"\ngroup = \"onward\"\nurl = \"/calls\"\nsql = \"SELECT 1\"\nmax_per_request = 5\n", `plan.toml:16: counter "c" has both url and sql`},
		{"url not a path", "[[counter]]\nname = \"c\"\ngroup = \"onward\"\nurl = \"calls\"\nmax_per_request = 5\n", `plan.toml:15: url "calls" is neither a path starting with / nor a URL; write url = "/calls" (a path on the arm) or url = "http://127.0.0.1:9100/calls"`},
		{"url not loopback", "[[counter]]\nname = \"c\"\ngroup = \"onward\"\nurl = \"http://tokens.internal:9100/calls\"\n", `plan.toml:15: url "http://tokens.internal:9100/calls" names tokens.internal, which is not loopback`},
		{"url of another scheme", "[[counter]]\nname = \"c\"\ngroup = \"onward\"\nurl = \"ftp://127.0.0.1/calls\"\n", `plan.toml:15: url "ftp://127.0.0.1/calls" has scheme "ftp", not http or https`},
		{"url with a password", "[[counter]]\nname = \"c\"\ngroup = \"onward\"\nurl = \"http://u:p@127.0.0.1:9100/calls\"\n", `plan.toml:15: url "http://u:xxxxx@127.0.0.1:9100/calls" holds a user name or password`},
		// It does not parse (an '@' in the password): still quoted without it.
		{"url with a password that does not parse", "[[counter]]\nname = \"c\"\ngroup = \"onward\"\nurl = \"http://u:pa@ss%zz-s3cret@127.0.0.1:9100/calls\"\n", `plan.toml:15: url "http://***@127.0.0.1:9100/calls" is neither a path starting with / nor a URL`},
		{"fractional requests", "[[counter]]\nname = \"c\"\ngroup = \"onward\"\nrequests = 2.5\nurl = \"/calls\"\nmax_per_request = 5\n", `plan.toml:15: requests must be a whole number`},
		{"duplicate counter", "[[counter]]\nname = \"c\"\ngroup = \"onward\"\nurl = \"/calls\"\nmax_per_request = 5\n[[counter]]\nname = \"c\"\ngroup = \"onward\"\nurl = \"/calls\"\nmax_per_request = 5\n", `plan.toml:18: counter name "c" is already used on line 13`},
		{"bad table", "[[store_writes]]\ngroup = \"create\"\ntable = \"items; DROP\"\n", `plan.toml:14: table "items; DROP" is not a table name`},
		{"unknown control kind", "[[control]]\nkind = \"idel\"\n", `plan.toml:13: control kind "idel" is not known; write kind = "idle"`},
		{"idle without plan", "[[control]]\nkind = \"idle\"\n", `plan.toml:12: the idle control names no plan`},
		{"idle plan is this plan", "[[control]]\nkind = \"idle\"\nplan = \"plan.toml\"\n", `plan.toml:14: the idle control's plan is this plan`},
		{"idle plan refused", "[[control]]\nkind = \"idle\"\nplan = \"broken.toml\"\n", `plan.toml:14: the idle control's plan is refused: `},
		{"idle plan without idle", "[[control]]\nkind = \"idle\"\nplan = \"noidle.toml\"\n", `plan.toml:14: the idle control's plan noidle.toml has no idle phase`},
		{"plans naming each other", "[[control]]\nkind = \"idle\"\nplan = \"loop.toml\"\n", `plan.toml:14: the idle control's plan loop.toml declares controls of its own`},
		{"variant without overrides", "[[control]]\nkind = \"variant\"\ncounter = \"x\"\n", `plan.toml:12: the variant control has no overrides`},
		{"variant bad override", "[[control]]\nkind = \"variant\"\noverrides = [\"no equals\"]\ncounter = \"x\"\n", `plan.toml:14: override no equals is not NAME=VALUE`},
		{"variant unknown counter", "[[counter]]\nname = \"exchanges\"\ngroup = \"onward\"\nurl = \"/calls\"\nmax_per_request = 5\n[[control]]\nkind = \"variant\"\noverrides = [\"A=b\"]\ncounter = \"exchange\"\n", `plan.toml:20: counter "exchange" is not declared; write counter = "exchanges"`},
		{"two idle controls", "[[control]]\nkind = \"idle\"\nplan = \"busy.toml\"\n[[control]]\nkind = \"idle\"\nplan = \"busy.toml\"\n", `plan.toml:16: the idle control is already declared on line 13`},
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "busy.toml"), "[ab]\nidle = \"60s\"\n\n"+checksGroups)
	writeFile(t, filepath.Join(dir, "noidle.toml"), "[ab]\nidle = \"0s\"\n\n"+checksGroups)
	writeFile(t, filepath.Join(dir, "broken.toml"), "[ab\n")
	// loop.toml names plan.toml as its own idle control's plan.
	writeFile(t, filepath.Join(dir, "loop.toml"), checksGroups+"[[control]]\nkind = \"idle\"\nplan = \"plan.toml\"\n")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "plan.toml")
			src := checksGroups + "\n" + c.extra
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Parse(path, []byte(src))
			if err == nil || !strings.Contains(err.Error(), c.want) || exit.Code(err) != exit.CannotJudge {
				t.Fatalf("Parse = %v\nwant exit 2 and %q", err, c.want)
			}
		})
	}
}
