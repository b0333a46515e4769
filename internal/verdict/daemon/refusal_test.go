package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/verdict/daemon"
)

// mainRun runs perfgate-verdictd in the test with env as its whole
// environment.
func mainRun(args []string, env map[string]string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = daemon.Main(context.Background(), args, daemon.IO{Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }})
	return out.String(), errb.String(), err
}

// TestBadValueSaidOnce: a refused flag value is one message, the
// returned error, naming the flag and the fix and quoting the value once;
// nothing else reaches stderr (the flag package's own "invalid value"
// line and its usage).
func TestBadValueSaidOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		env   map[string]string
		value string // quoted once in the message
		want  string // the message names this
	}{
		{"allow-repo without an id", []string{"serve", "--allow-repo", "acme/api"}, nil, `"acme/api"`, "--allow-repo"},
		{"allow-repo, one bad of two", []string{"serve", "--allow-repo", "acme/api=12,acme/web"}, nil, `"acme/web"`, "owner/name=repository_id"},
		{"allow-repo naming no GitHub repository", []string{"serve", "--allow-repo", "a b/c=12"}, nil, `"a b/c=12"`, "owner/name=repository_id"},
		{"allow-repo from the environment", []string{"serve"}, map[string]string{"PERFGATE_VERDICTD_ALLOW_REPO": "acme/api"}, `"acme/api"`, "--allow-repo"},
		{"reads", []string{"serve", "--reads", "maybe"}, nil, `"maybe"`, "--reads public or --reads token"},
		{"a number flag", []string{"serve", "--max-retries", "lots"}, nil, `"lots"`, "-max-retries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := mainRun(tc.args, tc.env)
			if err == nil || exit.Code(err) != 2 {
				t.Fatalf("%v (exit %d), want exit 2", err, exit.Code(err))
			}
			msg := err.Error()
			if n := strings.Count(msg, tc.value); n != 1 || !strings.Contains(msg, tc.want) {
				t.Errorf("the refusal %q quotes %s %d times, want once, naming %s", msg, tc.value, n, tc.want)
			}
			if stderr != "" {
				t.Errorf("stderr before the refusal is printed: %q, want nothing (the refusal is said once)", stderr)
			}
		})
	}
}

// TestBinaryRefusesOnce runs the real command: its stderr is one line, the
// refusal, under one "perfgate-verdictd" prefix, and it exits 2.
func TestBinaryRefusesOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"allow-repo", []string{"serve", "--allow-repo", "acme/api"}, `perfgate-verdictd: --allow-repo "acme/api": write owner/name=repository_id`},
		{"a number flag", []string{"serve", "--max-retries", "lots"}, `perfgate-verdictd serve: invalid value "lots" for flag -max-retries`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(binary, tc.args...)
			cmd.Env = []string{} // no PERFGATE_VERDICTD_* of the machine's
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("%v, want exit 2", err)
			}
			got := stderr.String()
			if strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, tc.want) {
				t.Errorf("stderr is %q, want one line starting %q", got, tc.want)
			}
		})
	}
}

// TestTokenAddRepositoryNames: token add mints only for a name GitHub can
// have, and refuses any other with exit 2 and the fix.
func TestTokenAddRepositoryNames(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		repo string
		ok   bool
	}{
		{"acme/api", true},
		{"a-b/c.d_e-f", true},
		{strings.Repeat("o", 39) + "/api", true},
		{"acme/.github", true},
		{"a b/c", false},
		{"acme/a b", false},
		{"acme", false},
		{"/api", false},
		{"acme/", false},
		{"acme/api/web", false},
		{"mona_acme/api", true}, // an enterprise-managed user
		{"ac.me/api", false},
		{strings.Repeat("o", 40) + "/api", false},
		{"acme/.", false},
		{"acme/..", false},
	} {
		out, _, err := mainRun([]string{"token", "add", tc.repo, "--data", dir}, nil)
		switch {
		case tc.ok && (err != nil || !strings.HasPrefix(out, "pgv_")):
			t.Errorf("token add %q: %v, printed %q; want a token", tc.repo, err, out)
		case !tc.ok && (err == nil || exit.Code(err) != 2 || !strings.Contains(err.Error(), "write it as GitHub shows it")):
			t.Errorf("token add %q: %v (exit %d); want exit 2 with the fix", tc.repo, err, exit.Code(err))
		case !tc.ok && out != "":
			t.Errorf("token add %q printed %q; want no token", tc.repo, out)
		}
	}
}

// TestDatabaseURLNotEchoed: --database-url is the one flag that carries a
// secret (its password); a URL that does not parse is refused without it,
// from the command line or the environment.
func TestDatabaseURLNotEchoed(t *testing.T) {
	const bad = "postgres://verdictd:hunter2@db:notaport/verdictd"
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"flag", []string{"migrate", "--database-url", bad}, nil},
		{"environment", []string{"migrate"}, map[string]string{"PERFGATE_VERDICTD_DATABASE_URL": bad}},
	} {
		out, stderr, err := mainRun(tc.args, tc.env)
		if err == nil || exit.Code(err) != 2 {
			t.Fatalf("%s: %v (exit %d), want exit 2", tc.name, err, exit.Code(err))
		}
		if all := out + stderr + err.Error(); strings.Contains(all, "hunter2") {
			t.Errorf("%s: the password is shown: %q", tc.name, all)
		}
	}
}
