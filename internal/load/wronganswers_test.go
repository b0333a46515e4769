package load

import (
	"reflect"
	"testing"
)

func TestWrongAnswerTallySumsByGroupAndKeepsTheFirstSample(t *testing.T) {
	first := &AnswerSample{Expectation: `expect_body "ok"`, Why: "the body does not contain it", Status: 200, Body: "{}"}
	later := &AnswerSample{Expectation: `expect_body "ok"`, Why: "the body does not contain it", Status: 200, Body: "[]"}
	var zero WrongAnswerTally
	if got := zero.Lines(); len(got) != 0 {
		t.Fatalf("the zero tally printed %q", got)
	}
	var tally WrongAnswerTally
	tally.Add("write", 3, nil)  // a phase whose sample another phase holds
	tally.Add("read", 0, later) // no wrong answers: not a line
	tally.Add("write", 2, first)
	tally.Add("write", 5, later)
	tally.Add("list", 1, nil)
	want := []string{
		WrongAnswerLine("list", 1, nil),
		WrongAnswerLine("write", 10, first),
	}
	if got := tally.Lines(); !reflect.DeepEqual(got, want) {
		t.Errorf("Lines() =\n%q\nwant\n%q", got, want)
	}
}
