package check

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

func TestResultLine(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{Result{Status: OK, Name: "plan", Detail: "perf/plan.toml"}, "ok    plan: perf/plan.toml"},
		{Result{Status: Skip, Name: "rate rule", Detail: "no max_rate"}, "skip  rate rule: no max_rate"},
		{Result{Status: Fail, Name: "head gate file", Detail: "x"}, "FAIL  head gate file: x"},
	} {
		if got := tc.r.Line(); got != tc.want {
			t.Errorf("Line() = %q, want %q", got, tc.want)
		}
	}
}

// TestRunOnAFolderWithoutAContract: every check that can run says why it
// failed, the first failure is kept with its exit code, and no path of the
// folder checked is left in the messages.
func TestRunOnAFolderWithoutAContract(t *testing.T) {
	dir := t.TempDir()
	rep, err := Run(context.Background(), Options{Repo: dir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fails < 2 || rep.First == nil || exit.Code(rep.First) != exit.CannotJudge {
		t.Fatalf("report %+v, want the gate file and the base to fail", rep)
	}
	var names []string
	for _, r := range rep.Results {
		names = append(names, string(r.Status)+" "+r.Name)
		if r.Status == Fail && (r.Err == nil || strings.Contains(r.Detail, dir+"/")) {
			t.Errorf("%s: detail %q, err %v", r.Name, r.Detail, r.Err)
		}
	}
	if got := strings.Join(names, ", "); !strings.HasPrefix(got, "FAIL head gate file, FAIL base") {
		t.Errorf("results %s", got)
	}
	if !errors.Is(rep.First, rep.Results[0].Err) {
		t.Errorf("first %v is not the first result's %v", rep.First, rep.Results[0].Err)
	}
}
