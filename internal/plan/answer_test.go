package plan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/load"
)

const answerGroup = "[[group]]\nname = \"items\"\npath = \"/items\"\nexpect = 200\n"

func TestAnswerKeys(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		want       load.AnswerRule
	}{
		{"text", `expect_body = '"ok"'`, load.AnswerRule{Body: `"ok"`}},
		{"regexp", `expect_body = '/^\{"id":\d+/'`, load.AnswerRule{Body: `/^\{"id":\d+/`}},
		{"quoted paths", `expect_json = { "items.0.id" = 42, "name" = "widget", "ok" = true, "score" = 0.5 }`,
			load.AnswerRule{JSON: []load.JSONExpect{{Path: "items.0.id", Value: int64(42)}, {Path: "name", Value: "widget"}, {Path: "ok", Value: true}, {Path: "score", Value: 0.5}}}},
		{"a table under a path reads as the dotted path", "[group.expect_json]\nitems.0.id = 42",
			load.AnswerRule{JSON: []load.JSONExpect{{Path: "items.0.id", Value: int64(42)}}}},
		{"headers", `expect_header = { Content-Type = "/^application\\/json/", X-Cache = "HIT" }`,
			load.AnswerRule{Header: []load.HeaderExpect{{Name: "Content-Type", Value: `/^application\/json/`}, {Name: "X-Cache", Value: "HIT"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("plan.toml", []byte(answerGroup+tc.toml+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Groups[0].Answer; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("answer rule %#v, want %#v", got, tc.want)
			}
			if g := p.loadGroups()[0]; g.Answer == nil || !reflect.DeepEqual(*g.Answer, tc.want) {
				t.Errorf("load group's rule %#v", g.Answer)
			}
		})
	}
	p, err := Parse("plan.toml", []byte(answerGroup))
	if err != nil {
		t.Fatal(err)
	}
	if g := p.loadGroups()[0]; g.Answer != nil {
		t.Errorf("a group with no expectation has the rule %#v", g.Answer)
	}
}

func TestAnswerKeysRefused(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{`expect_body = ""`, "plan.toml:5: expect_body is empty, which every body holds"},
		{`expect_body = "/a(/"`, "plan.toml:5: expect_body /a(/ is not a regular expression"},
		{`expect_body = 42`, "plan.toml:5: expect_body must be a string"},
		{`expect_json = { "items..id" = 42 }`, `plan.toml:5: expect_json path "items..id" has an empty step`},
		{`expect_json = { "items" = [1, 2] }`, `plan.toml:5: expect_json items must be a string, a number or a boolean`},
		{`expect_json = {}`, "plan.toml:5: expect_json is empty"},
		{`expect_header = { "X Cache" = "HIT" }`, `plan.toml:5: header name "X Cache" is not a valid HTTP header name`},
		{`expect_header = { X-Cache = 1 }`, "plan.toml:5: expect_header X-Cache must be a string"},
		{`expect_header = { X-Cache = "/[/" }`, "plan.toml:5: expect_header X-Cache = /[/ is not a regular expression"},
		{`expect_bdy = "ok"`, `plan.toml:5: unknown key "expect_bdy"`},
	} {
		_, err := Parse("plan.toml", []byte(answerGroup+tc.toml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.toml, err, tc.want)
			continue
		}
		if exit.Code(err) != 2 {
			t.Errorf("%q: exit %d, want 2", tc.toml, exit.Code(err))
		}
	}
}

func TestSameAnswersKeys(t *testing.T) {
	const ab = "[ab]\npairs = 2\n"
	p, err := Parse("plan.toml", []byte(ab+"answers = \"same\"\nignore = [\"id\", \"meta.created_at\"]\n"+answerGroup))
	if err != nil {
		t.Fatal(err)
	}
	if p.AB.Answers != AnswersSame || !reflect.DeepEqual(p.AB.Ignore, []string{"id", "meta.created_at"}) {
		t.Errorf("answers %q ignore %q", p.AB.Answers, p.AB.Ignore)
	}
	for _, tc := range []struct{ toml, want string }{
		{`answers = "equal"`, `plan.toml:3: answers "equal" is not a choice; write answers = "same"`},
		{`ignore = ["id"]`, `plan.toml:3: ignore names the JSON fields the arms' answers may differ in, and compares nothing without answers`},
		{"answers = \"warn\"\nignore = \"id\"", "plan.toml:4: ignore must be a list of JSON field names"},
		{"answers = \"warn\"\nignore = [\"a..b\"]", `plan.toml:4: ignore holds "a..b", which is not a JSON field name`},
	} {
		_, err := Parse("plan.toml", []byte(ab+tc.toml+"\n"+answerGroup))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.toml, err, tc.want)
		}
	}
}

// A threshold reads the server's own figure when the plan names the header
// holding it, unless it says side = "client"; success has no side.
func TestThresholdDefaultSide(t *testing.T) {
	for _, tc := range []struct {
		top, threshold, side string
	}{
		{`server_timing = "Server-Timing"`, `metric = "p90"` + "\nbelow = \"5ms\"", "server"},
		{`server_timing = "X-Took-Ms"`, `metric = "under"` + "\nbelow = \"5ms\"\nmin = 90", "server"},
		{`server_timing = "Server-Timing"`, `metric = "p90"` + "\nbelow = \"5ms\"\nside = \"client\"", "client"},
		{`server_timing = "Server-Timing"`, `metric = "success"` + "\nmin = 99", "client"},
		{"", `metric = "p90"` + "\nbelow = \"5ms\"", "client"},
	} {
		p, err := Parse("plan.toml", []byte(tc.top+"\n"+answerGroup+"\n[[threshold]]\n"+tc.threshold+"\n"))
		if err != nil {
			t.Errorf("%q %q: %v", tc.top, tc.threshold, err)
			continue
		}
		if got := p.Thresholds[0].Side; got != tc.side {
			t.Errorf("%q %q: side %q, want %q", tc.top, tc.threshold, got, tc.side)
		}
	}
}

// A side written on a success threshold was read and ignored (or refused
// for lacking server_timing, which would not have helped): it is refused
// on its own line.
func TestThresholdSuccessHasNoSide(t *testing.T) {
	for _, top := range []string{`server_timing = "Server-Timing"`, ""} {
		for _, side := range []string{"server", "client"} {
			src := top + "\n" + hello + "[[threshold]]\nmetric = \"success\"\nmin = 99\nside = \"" + side + "\"\n"
			_, err := Parse("plan.toml", []byte(src))
			want := `plan.toml:9: side does not apply to success (the share of requests answered as planned, whoever times them); remove it`
			if err == nil || exit.Code(err) != exit.CannotJudge || err.Error() != want {
				t.Errorf("%q side %q: %v, want %q", top, side, err, want)
			}
		}
	}
}
