package contract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/redact"
)

// deriveTimeout bounds a legacy function: it only prints variables.
const deriveTimeout = 30 * time.Second

// deriveWrapper sources the legacy script with a DEBUG trap that lets its top
// level define only constants, functions and helpers (assignments,
// declare/readonly/export, source): every other top-level command, such as
// the script's own `main "$@"` or a usage message that exits, is skipped,
// because extdebug skips a command whose DEBUG trap returns non-zero. Command
// substitutions inside a constant run in a subshell and are left alone. Then
// it calls the function in this shell, so both what it prints and what it
// exports are seen; the EXIT trap records the variables even if it exits.
const deriveWrapper = `
__pg_out=$1 __pg_fn=$2 __pg_prefix=$3
shift 3
__pg_args=("$@")
set --
__pg_keep='^([A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=|(declare|typeset|readonly|export|local|shopt|source|\.|unset|alias)([[:space:]]|$))'
__pg_filter() {
	[[ $BASH_SUBSHELL == 0 && ${FUNCNAME[1]-} == source ]] || return 0
	[[ $BASH_COMMAND =~ $__pg_keep ]] && return 0
	return 1
}
__pg_vars() {
	local __pg_v
	for __pg_v in $(compgen -v -- "$__pg_prefix"); do
		printf '%s=%s\0' "$__pg_v" "${!__pg_v}"
	done
}
shopt -s extdebug
trap __pg_filter DEBUG
source "$0"
trap - DEBUG
shopt -u extdebug
set +euo pipefail
if ! declare -F -- "$__pg_fn" >/dev/null; then
	exit 97
fi
__pg_vars >"$__pg_out/before"
trap '__pg_vars >"$__pg_out/after"' EXIT
"$__pg_fn" "${__pg_args[@]}" >"$__pg_out/stdout"
`

// Derive evaluates a legacy script's function in bash, inside treeDir, with
// the script's own constants and helpers defined but its main never run, and
// keeps what it sets with the prefix: the NAME=VALUE lines it prints
// (optionally after "export ") and the prefixed variables it assigns. A
// function that sets nothing is refused with exit 2.
func Derive(ctx context.Context, treeDir string, l Legacy, prefix string) ([]string, error) {
	where := fmt.Sprintf("%s %s()", l.Script, l.Function)
	if err := treePath(l.Script); err != nil || l.Script == "" {
		return nil, exit.Refusef("%s: the legacy script must be a path inside the tree", where)
	}
	if !shellFuncRe.MatchString(l.Function) {
		return nil, exit.Refusef("%s: %q is not a shell function name", where, l.Function)
	}
	if !envNameRe.MatchString(prefix) {
		return nil, exit.Refusef("%s: the prefix %q is not the start of a variable name: fix prefix in %s", where, prefix, GateFile)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, exit.Refusef("deriving overrides from %s needs bash on PATH: install bash", where)
	}
	tree, err := filepath.Abs(treeDir)
	if err != nil {
		return nil, fmt.Errorf("deriving overrides from %s: %w", where, err)
	}
	if _, err := os.Stat(filepath.Join(tree, filepath.FromSlash(l.Script))); err != nil {
		return nil, exit.Refusef("%s: the tree has no %s: add %s instead", where, l.Script, DefaultOverrides)
	}
	tmp, err := os.MkdirTemp("", "perfgate-derive-")
	if err != nil {
		return nil, fmt.Errorf("deriving overrides from %s: %w", where, err)
	}
	defer os.RemoveAll(tmp)

	ctx, cancel := context.WithTimeout(ctx, deriveTimeout)
	defer cancel()
	// "./" keeps source from searching PATH for a script named without a slash.
	script := "./" + filepath.ToSlash(filepath.Clean(l.Script))
	args := append([]string{"--noprofile", "--norc", "-c", deriveWrapper, script, tmp, l.Function, prefix}, l.Args...)
	cmd := exec.CommandContext(ctx, bash, args...)
	cmd.Dir = tree
	cmd.Env = withoutPrefix(os.Environ(), prefix)
	var stderr bytes.Buffer
	cmd.Stderr = &limitWriter{w: &stderr, n: 16 << 10}
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, exit.Refusef("%s: did not finish within %s: make it only print its variables", where, deriveTimeout)
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) && ee.ExitCode() == 97 {
		return nil, exit.Refusef("%s: %s defines no function %s: name the function that prints the overrides in [legacy] of %s", where, l.Script, l.Function, GateFile)
	}
	if runErr != nil && !errors.As(runErr, &ee) {
		return nil, fmt.Errorf("deriving overrides from %s: %w", where, runErr)
	}

	var out []string
	seen := map[string]bool{}
	stdout, _ := os.ReadFile(filepath.Join(tmp, "stdout"))
	var kept []byte
	for _, line := range strings.Split(string(stdout), "\n") {
		t := strings.TrimSpace(line)
		t = strings.TrimSpace(strings.TrimPrefix(t, "export "))
		if strings.HasPrefix(t, prefix) {
			kept = append(append(kept, t...), '\n')
		}
	}
	printed, err := ParseOverrides(where+" output", kept, prefix)
	if err != nil {
		return nil, err
	}
	for _, kv := range printed {
		name, _, _ := strings.Cut(kv, "=")
		seen[name] = true
		out = append(out, kv)
	}
	before, _ := os.ReadFile(filepath.Join(tmp, "before"))
	after, _ := os.ReadFile(filepath.Join(tmp, "after"))
	was := map[string]string{}
	for _, kv := range strings.Split(string(before), "\x00") {
		if name, v, ok := strings.Cut(kv, "="); ok {
			was[name] = v
		}
	}
	var assigned []string
	for _, kv := range strings.Split(string(after), "\x00") {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || seen[name] || len(name) == len(prefix) {
			continue
		}
		if old, had := was[name]; had && old == v {
			continue
		}
		if strings.ContainsAny(v, "\n\x00") {
			return nil, exit.Refusef("%s: sets %s to a value with a line break: overrides are one line each", where, name)
		}
		if ph := badPlaceholder(v, renderPlaceholders); ph != "" {
			return nil, exit.Refusef("%s: %s uses the placeholder %s: only @PORT@ and @DIR@ are filled in", where, name, ph)
		}
		assigned = append(assigned, name+"="+v)
	}
	sort.Strings(assigned)
	out = append(out, assigned...)
	if len(out) == 0 {
		status := ""
		if ee != nil {
			status = fmt.Sprintf(" (it exited %d: %s)", ee.ExitCode(), lastLine(stderr.String()))
		}
		return nil, exit.Refusef("%s: sets no %s variable%s: add %s (one %sNAME=VALUE a line)", where, prefix, status, DefaultOverrides, prefix)
	}
	return out, nil
}

// withoutPrefix drops inherited variables with the prefix, so an arm gets its
// own tree's overrides and nothing the CI job happened to export.
func withoutPrefix(env []string, prefix string, drop ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		skip := strings.HasPrefix(name, prefix)
		for _, d := range drop {
			skip = skip || name == d
		}
		if !skip {
			out = append(out, kv)
		}
	}
	return out
}

func lastLine(s string) string {
	s = strings.TrimSpace(redact.URLsIn(s))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	if s == "" {
		return "no message"
	}
	return s
}

// limitWriter keeps the first n bytes and drops the rest, so a chatty script
// cannot fill memory.
type limitWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
