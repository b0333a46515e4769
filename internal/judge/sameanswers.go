package judge

import (
	"fmt"
	"strings"
)

// SameAnswers is what the gate found when it sent the same sample of
// requests (same data, same seed) to both arms before the first pair's
// warm-up and compared their answers: the plan's [ab] answers = "same"
// (a difference fails the gate) or "warn" (it is a note). A change that
// "changes only how the lookup is issued, never the result" must give the
// base's answers.
type SameAnswers struct {
	Mode        string             `json:"mode"`             // "same" or "warn"
	Ignore      []string           `json:"ignore,omitempty"` // JSON fields the answers may differ in
	Compared    int                `json:"compared"`         // requests sent to both arms
	Differences []AnswerDifference `json:"differences,omitempty"`
}

// AnswerDifference is one request the arms answered differently, with
// both answers as "STATUS BODY" (the body cut at 512 bytes, redacted).
type AnswerDifference struct {
	Group   string `json:"group"`
	Request string `json:"request"` // "GET /items/17"
	Base    string `json:"base"`
	Head    string `json:"head"`
}

// The modes of SameAnswers, as the plan's [ab] answers writes them.
const (
	AnswersSame = "same" // a difference fails the gate
	AnswersWarn = "warn" // a difference is a note
)

// maxDifferencesShown bounds the differences a verdict lists.
const maxDifferencesShown = 5

// sameAnswerLines words the differences: a first line with the counts,
// then one line per difference (at most maxDifferencesShown) with both
// answers.
func sameAnswerLines(s *SameAnswers) []string {
	if s == nil || len(s.Differences) == 0 {
		return nil
	}
	ignoring := ""
	if len(s.Ignore) > 0 {
		ignoring = " (ignoring " + strings.Join(s.Ignore, ", ") + ")"
	}
	lines := []string{fmt.Sprintf("answers: the head answered %d of %d sampled requests differently from the base%s", len(s.Differences), s.Compared, ignoring)}
	for i, d := range s.Differences {
		if i == maxDifferencesShown {
			lines = append(lines, fmt.Sprintf("answers: and %d more", len(s.Differences)-i))
			break
		}
		lines = append(lines, fmt.Sprintf("answers: group %s, %s: base answered %s; head answered %s", d.Group, d.Request, d.Base, d.Head))
	}
	return lines
}

// answersDiffer says whether the comparison fails the gate: a difference
// under answers = "same". Like a wrong status the base did not give, it is
// the head's own answer, which no runner causes.
func answersDiffer(in Input) bool {
	return in.Answers != nil && in.Answers.Mode == AnswersSame && len(in.Answers.Differences) > 0
}
