package exit

import (
	"errors"
	"fmt"
	"testing"
)

func TestCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"plain", errors.New("boom"), 2},
		{"regression", Regressionf("p99 breached"), 1},
		{"wrapped regression", fmt.Errorf("gate: %w", Regressionf("x")), 1},
		{"refused", Refusef("plan.toml:3: bad"), 2},
		{"refuse nil", Refuse(nil), 0},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("%s: Code = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestWord(t *testing.T) {
	for _, tc := range []struct {
		code int
		want string
	}{
		{Pass, "pass"},
		{Regression, "regression"},
		{CannotJudge, "cannot-judge"},
		{3, "cannot-judge"},
	} {
		if got := Word(tc.code); got != tc.want {
			t.Errorf("Word(%d) = %q, want %q", tc.code, got, tc.want)
		}
	}
}
