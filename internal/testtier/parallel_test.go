package testtier

import "testing"

func TestWaitingParallel(t *testing.T) {
	for _, tc := range []struct {
		n    int
		race bool
		want int
	}{
		{8, false, 8},
		{4, false, 4},
		{8, true, 4},
		{4, true, 2},
		{2, true, 2},
		{3, true, 2},
	} {
		if got := waitingParallel(tc.n, tc.race); got != tc.want {
			t.Errorf("waitingParallel(%d, race %v) = %d, want %d", tc.n, tc.race, got, tc.want)
		}
	}
}
