package cli

import (
	"bytes"
	"context"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

// runCommand runs perfgate with args (without the program's name) over
// env, as the binary would run them, and returns what it wrote and its
// exit code. The command helpers of the other test files wrap it.
func runCommand(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	stdout, stderr, err := runCommandErr(context.Background(), env, args...)
	return stdout, stderr, exit.Code(err)
}

// runCommandErr is runCommand with a context, returning the command's error.
func runCommandErr(ctx context.Context, env map[string]string, args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = RunIO(ctx, args, &IO{Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }})
	return out.String(), errb.String(), err
}
