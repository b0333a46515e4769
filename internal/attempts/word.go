package attempts

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/exit"
)

// words name each exit code as the action's `verdict` output and the
// verdict job's table do.
var words = map[int]string{exit.Pass: "pass", exit.Regression: "regression", exit.CannotJudge: "cannot-judge"}

// Word is the exit code in the gate's words; a code a crash left is "exit N".
func Word(code int) string {
	if w, ok := words[code]; ok {
		return w
	}
	return fmt.Sprintf("exit %d", code)
}
