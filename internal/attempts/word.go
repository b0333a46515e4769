package attempts

import (
	"fmt"
	"strconv"
	"strings"

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

// ParseExitCode reads `attempts next --exit-code C` (none: --no-exit-code,
// the attempt ended without one): a process exit code, 0 to 255.
func ParseExitCode(code string, none bool) (has bool, n int, err error) {
	switch c := strings.TrimSpace(code); {
	case none && c != "":
		return false, 0, exit.Refusef("attempts next: --exit-code %s and --no-exit-code both given: give one", c)
	case none:
		return false, 0, nil
	case c == "":
		return false, 0, exit.Refusef("attempts next: give --exit-code C, or --no-exit-code for an attempt that ended without one")
	default:
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 || n > 255 {
			return false, 0, exit.Refusef("attempts next: --exit-code %q: give a process exit code, 0 to 255", c)
		}
		return true, n, nil
	}
}
