package judge

import "github.com/perfgate/perfgate/internal/load"

// A wrong answer is an answer with a status the plan expects whose body or
// headers fail the group's expect_body, expect_json or expect_header
// (load.AnswerRule). It is the arm's own answer, like a wrong status, and
// a runner cannot cause it: a slow runner delays a body, it does not empty
// it. So the head's fail the gate, naming the expectation and one body;
// the base's leave nothing to compare the head with.

// wrongAnswerLines sums each group's wrong answers over the phases, one
// line per group in name order, with the first sample: "group items: 40
// wrong answers; first: expect_json "items.0.id" = 42: the body has no
// "items"; body (200): {}".
func wrongAnswerLines(phases []Phase) []string {
	var t load.WrongAnswerTally
	for _, p := range phases {
		for _, g := range p.Groups {
			t.Add(g.Name, g.WrongAnswers, g.WrongAnswer)
		}
	}
	return t.Lines()
}

// wrongAnswerGroups names the groups with a wrong answer in some phase.
func wrongAnswerGroups(phases []Phase) map[string]bool {
	out := map[string]bool{}
	for _, p := range phases {
		for _, g := range p.Groups {
			if g.WrongAnswers > 0 {
				out[g.Name] = true
			}
		}
	}
	return out
}

// headAnsweredWrong says whether the head answered wrong in a group the
// base answered right: that fails the gate whatever else could not be
// judged, as a wrong status does (answeredWrong).
func headAnsweredWrong(in Input) bool {
	base := wrongAnswerGroups(in.Base)
	for g := range wrongAnswerGroups(in.Head) {
		if !base[g] {
			return true
		}
	}
	return false
}
