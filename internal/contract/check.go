package contract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/arms"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/redact"
)

// checkTimeout bounds the config check: it reads a file, it serves nothing.
const checkTimeout = 2 * time.Minute

// CheckConfig runs the contract's check command over the arm's rendered
// config and overrides before any load. A refusal is exit 2 naming each
// unknown key the output names, or quoting the refusal when it names none.
func (c *Contract) CheckConfig(ctx context.Context, a *Rendered, commit string) error {
	if len(a.Check) == 0 {
		return fmt.Errorf("checking %s: the arm has no check command (was it rendered?)", c.Config)
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.Check[0], a.Check[1:]...)
	cmd.Env = c.Environ(arms.MinimalEnv(os.Getenv), a)
	cmd.Dir = a.Cwd // where the arm itself starts, so relative paths agree
	var out bytes.Buffer
	lw := &limitWriter{w: &out, n: 64 << 10}
	cmd.Stdout, cmd.Stderr = lw, lw
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	checkLine := redact.URLsIn(strings.Join(a.Check, " "))
	if ctx.Err() != nil {
		return exit.Refusef("the base at %s did not finish checking its own %s within %s (`%s`): the pair is not judged", commit, c.Config, checkTimeout, checkLine)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return exit.Refusef("the base at %s could not run its config check `%s`: %v: fix check in its %s", commit, checkLine, err, GateFile)
	}
	if keys := unknownKeys(out.String()); len(keys) > 0 {
		return exit.Refusef("the base at %s does not know the key(s) %s of its own %s: the pair is not judged", commit, strings.Join(keys, ", "), c.Config)
	}
	return exit.Refusef("the base at %s refused its own %s (`%s` exited %d: %q): the pair is not judged", commit, c.Config, checkLine, ee.ExitCode(), refusal(out.String()))
}

var (
	unknownRe = regexp.MustCompile(`(?i)\b(?:unknown|unrecognized|unrecognised|unexpected|unsupported|undefined)\s+(?:config(?:uration)?\s+)?(?:key|field|option|setting|property|parameter)(?:\(s\)|s\b|\b)`)
	quotedRe  = regexp.MustCompile("[`\"']([^`\"'\\s]+)[`\"']")
	// What follows the key names: the expected ones, or where they were.
	cutQuotedRe = regexp.MustCompile(`(?i)[;(]|\bexpected\b|\bdid you mean\b|\bvalid\b`)
	cutBareRe   = regexp.MustCompile(`(?i)[;(]|\bexpected\b|\bdid you mean\b|\bvalid\b|\b(?:in|of|for|at|near|on)\b`)
	bareKeyRe   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.\-\[\]]*`)
)

// unknownKeys reads the key names a check's output calls unknown, in order,
// each once. It knows the usual shapes: serde's "unknown field `x`, expected
// ...", "unknown key \"x\"", "unknown keys: a, b", "unrecognized option x".
func unknownKeys(out string) []string {
	var keys []string
	seen := map[string]bool{}
	add := func(k string) {
		k = strings.Trim(k, ".,:;")
		if k != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		for _, loc := range unknownRe.FindAllStringIndex(line, -1) {
			rest := line[loc[1]:]
			if next := unknownRe.FindStringIndex(rest); next != nil {
				rest = rest[:next[0]]
			}
			rest = strings.TrimLeft(rest, " \t:=")
			quoted := rest
			if cut := cutQuotedRe.FindStringIndex(quoted); cut != nil {
				quoted = quoted[:cut[0]]
			}
			if q := quotedRe.FindAllStringSubmatch(quoted, -1); len(q) > 0 {
				for _, m := range q {
					add(m[1])
				}
				continue
			}
			if cut := cutBareRe.FindStringIndex(rest); cut != nil {
				rest = rest[:cut[0]]
			}
			for _, piece := range strings.Split(rest, ",") {
				add(bareKeyRe.FindString(strings.TrimSpace(piece)))
			}
		}
	}
	return keys
}

// refusal quotes the check's last lines, which is where programs put the
// reason, without any URL's password.
func refusal(out string) string {
	lines := strings.Split(strings.TrimSpace(redact.URLsIn(out)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	s := strings.Join(lines, " / ")
	if len(s) > 400 {
		s = s[:397] + "..."
	}
	if s == "" {
		return "it printed nothing"
	}
	return s
}
