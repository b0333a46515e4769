package attempts

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
)

// Word is an attempt's exit code in the verdict job's table: the gate's
// word (exit.Word) for 0, 1 and 2, and "exit N" for a code a crash left.
func Word(code int) string {
	switch code {
	case exit.Pass, exit.Regression, exit.CannotJudge:
		return exit.Word(code)
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
