package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

// `--no-store false` leaves "false" and every flag after it unread: run
// and demo refuse the word before anything starts, as ab does.
func TestRunAndDemoRefuseWordsTheFlagsLeft(t *testing.T) {
	for _, args := range [][]string{
		{"demo", "--no-store", "false", "--pairs", "2"},
		{"run", "--pairs", "2", "stray"},
	} {
		var out, errb bytes.Buffer
		err := RunIO(context.Background(), args, &IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
		if exit.Code(err) != exit.CannotJudge || !strings.Contains(errb.String(), "unexpected argument") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 naming the unexpected argument", args, exit.Code(err), errb.String())
		}
	}
}
