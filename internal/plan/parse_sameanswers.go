package plan

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// The [ab] keys that compare the arms' answers (docs/plan.md, "Same
// answers from both arms").
var sameAnswersKeys = []string{"answers", "ignore"}

// The answer comparison's modes are the judge's words.
const (
	AnswersSame = judge.AnswersSame
	AnswersWarn = judge.AnswersWarn
)

// sameAnswers reads [ab]'s answers and ignore.
func (ps *parser) sameAnswers(m map[string]any, ap []string, a *AB) {
	if s, ok := ps.Str(m, ap, "answers", `answers = "same"`); ok {
		switch s {
		case AnswersSame, AnswersWarn:
			a.Answers = s
		default:
			ps.At(ap, "answers", "answers %q is not a choice; write answers = %q (a difference fails the gate) or answers = %q (it is a note)", s, AnswersSame, AnswersWarn)
		}
	}
	v, ok := m["ignore"]
	if !ok {
		return
	}
	list, isList := v.([]any)
	if !isList {
		ps.At(ap, "ignore", "%s", tomlpos.WrongKind("ignore", "a list of JSON field names", v, `ignore = ["id", "created_at"]`))
		return
	}
	if _, set := m["answers"]; !set {
		ps.At(ap, "ignore", `ignore names the JSON fields the arms' answers may differ in, and compares nothing without answers; write answers = "same" above it, or remove it`)
		return
	}
	for _, e := range list {
		s, isStr := e.(string)
		if !isStr || s == "" || strings.Contains("."+s+".", "..") {
			ps.At(ap, "ignore", "ignore holds %s, which is not a JSON field name or dotted path; write ignore = [\"id\", \"created_at\"]", fmt.Sprintf("%#v", e))
			return
		}
		a.Ignore = append(a.Ignore, s)
	}
}
