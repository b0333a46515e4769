package plan

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// answerKeys are a [[group]]'s keys that check what an expected status
// answered (load.AnswerRule, docs/plan.md "What the answer must hold").
var answerKeys = []string{"expect_body", "expect_json", "expect_header"}

// answer reads a group's expect_body, expect_json and expect_header.
func (ps *parser) answer(m map[string]any, gp []string, g *Group) {
	if s, ok := ps.Str(m, gp, "expect_body", `expect_body = '"id":42'`); ok {
		switch {
		case s == "":
			ps.At(gp, "expect_body", "expect_body is empty, which every body holds; write the text the answer must hold, such as expect_body = '\"ok\"', or remove it")
		default:
			if pat, isRE := slashed(s); isRE {
				if _, err := regexp.Compile(pat); err != nil {
					ps.At(gp, "expect_body", "expect_body %s is not a regular expression (%v); write Go's RE2 syntax between the slashes, or drop the slashes to match the text as written", s, err)
					break
				}
			}
			g.Answer.Body = s
		}
	}
	if t, ok := ps.Table(m, gp, "expect_json", `expect_json = { "items.0.id" = 42 }`); ok {
		ps.expectJSON(t, tomlpos.Join(gp, "expect_json"), "", g)
		if len(t) == 0 {
			ps.At(gp, "expect_json", `expect_json is empty; write the paths and values the answer must hold, such as expect_json = { "items.0.id" = 42 }`)
		}
	}
	if t, ok := ps.Table(m, gp, "expect_header", `expect_header = { Content-Type = "/^application\/json/" }`); ok {
		hp := tomlpos.Join(gp, "expect_header")
		for _, k := range ps.SortedKeys(t, hp) {
			v, isStr := t[k].(string)
			switch {
			case !isToken(k):
				ps.At(hp, k, "header name %q is not a valid HTTP header name; write it like X-Cache", k)
			case !isStr:
				ps.At(hp, k, "%s", tomlpos.WrongKind("expect_header "+k, "a string", t[k], fmt.Sprintf(`"%s" = "value"`, k)))
			default:
				if pat, isRE := slashed(strings.TrimSpace(v)); isRE {
					if _, err := regexp.Compile(pat); err != nil {
						ps.At(hp, k, "expect_header %s = %s is not a regular expression (%v); write Go's RE2 syntax between the slashes", k, v, err)
						continue
					}
				}
				g.Answer.Header = append(g.Answer.Header, load.HeaderExpect{Name: k, Value: v})
			}
		}
	}
}

// expectJSON reads expect_json's paths. A key is a dotted path, quoted
// ("items.0.id" = 42); a table under it (TOML's unquoted a.b = 1) is read
// as the same dotted path, so both spellings mean one thing.
func (ps *parser) expectJSON(t map[string]any, path []string, prefix string, g *Group) {
	for _, k := range ps.SortedKeys(t, path) {
		full := k
		if prefix != "" {
			full = prefix + "." + k
		}
		if strings.Contains("."+full+".", "..") {
			ps.At(path, k, "expect_json path %q has an empty step; write steps joined by single dots, such as \"items.0.id\"", full)
			continue
		}
		switch v := t[k].(type) {
		case map[string]any:
			ps.expectJSON(v, tomlpos.Join(path, k), full, g)
		case string, bool, int64, float64:
			g.Answer.JSON = append(g.Answer.JSON, load.JSONExpect{Path: full, Value: v})
		default:
			ps.At(path, k, "%s", tomlpos.WrongKind("expect_json "+full, "a string, a number or a boolean", v, fmt.Sprintf("%q = 42", full)))
		}
	}
}

// slashed reports whether s is written /.../ (a regular expression), and
// the pattern inside; load reads it the same way.
func slashed(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '/' && s[len(s)-1] == '/' {
		return s[1 : len(s)-1], true
	}
	return "", false
}
