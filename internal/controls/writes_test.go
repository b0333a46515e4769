package controls_test

import (
	"testing"

	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/judge"
)

// The store-write check compares the table's writes with the requests the
// head answered as expected: the right status and, where the plan checks
// them, the right body, JSON and header. A request with a wrong status, no
// answer at all or a wrong body may have written nothing, so none of them
// may count, or a store that drops writes would pass the check.
func TestAnswersCountOnlyWhatWasAnsweredAsExpected(t *testing.T) {
	group := func(name string, requests uint64, wrongStatus map[int]uint64, failed map[string]uint64, wrongAnswers uint64) judge.GroupFigures {
		return judge.GroupFigures{Name: name, Requests: requests, WrongStatus: wrongStatus, Failed: failed, WrongAnswers: wrongAnswers}
	}
	for _, tc := range []struct {
		name   string
		phases []judge.Phase
		want   int64
	}{
		{"no phases", nil, 0},
		{"all answered as expected", []judge.Phase{{Groups: []judge.GroupFigures{group("create", 100, nil, nil, 0)}}}, 100},
		{"wrong statuses", []judge.Phase{{Groups: []judge.GroupFigures{group("create", 100, map[int]uint64{500: 3, 503: 2}, nil, 0)}}}, 95},
		{"failures", []judge.Phase{{Groups: []judge.GroupFigures{group("create", 100, nil, map[string]uint64{"timeout": 4, "reset": 1}, 0)}}}, 95},
		{"wrong bodies", []judge.Phase{{Groups: []judge.GroupFigures{group("create", 100, nil, nil, 7)}}}, 93},
		{"all three, over two phases, other groups left out", []judge.Phase{
			{Groups: []judge.GroupFigures{group("create", 100, map[int]uint64{500: 1}, map[string]uint64{"refused": 2}, 3), group("read", 500, nil, nil, 9)}},
			{Groups: []judge.GroupFigures{group("read", 40, nil, nil, 0), group("create", 50, nil, nil, 10)}},
		}, 134},
		{"a phase answered all wrongly counts none, not below none", []judge.Phase{
			{Groups: []judge.GroupFigures{group("create", 10, map[int]uint64{500: 4}, nil, 6)}},
			{Groups: []judge.GroupFigures{group("create", 20, nil, nil, 0)}},
		}, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := controls.Answers(tc.phases, "create"); got != tc.want {
				t.Errorf("Answers = %d, want %d", got, tc.want)
			}
		})
	}
}
