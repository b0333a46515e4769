package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

// A report from before the paired rule names no rule: compare judges it
// by the medians rule (FerroFED's gate's) that wrote it, and --rule picks
// either rule, the medians rule also by its former name.
func TestCompareRule(t *testing.T) {
	const old = "../report/testdata/v1-seed-rule.json"
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{nil, exit.Regression, "rule             medians: FerroFED's gate's rule"},
		{[]string{"--rule", "seed"}, exit.Regression, "rule             medians: FerroFED's gate's rule"},
		{[]string{"--rule", "paired"}, exit.Regression, "rule             paired: the pairs' ratios head/base"},
		{[]string{"--rule", "median"}, exit.CannotJudge, `compare: --rule "median": write --rule paired or --rule medians`},
	} {
		var out, errb bytes.Buffer
		err := RunIO(context.Background(), append([]string{"compare", "--report", old}, tc.args...), &IO{Out: &out, Err: &errb})
		got := out.String()
		if err != nil {
			got += err.Error()
		}
		if exit.Code(err) != tc.code || !strings.Contains(got, tc.says) {
			t.Errorf("compare %v: exit %d, want %d holding %q:\n%s", tc.args, exit.Code(err), tc.code, tc.says, got)
		}
	}
}
