package contract

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckConfigRefusals(t *testing.T) {
	tests := []struct {
		name, known, config, armEnv string
		check                       string
		parts                       []string
	}{
		{"unknown key in the config", "server.port,usage.enabled,a", "[server]\nport = @PORT@\n[emergency]\nthreshold = 5\n", "SVC__A=1\n", "",
			[]string{"the base at 0123abcd does not know the key(s) emergency.threshold of its own perf/service.toml: the pair is not judged"}},
		{"unknown keys in config and overrides", "server.port,usage.enabled", "emergency = 1\n[server]\nport = @PORT@\n", "SVC__FHIR__FACE=on\n", "",
			[]string{"does not know the key(s) emergency, fhir.face of its own perf/service.toml"}},
		{"refusal naming no key", "server.port", "[server]\nport = @PORT@\n", "SVC__A=1\n", "sh -c 'echo checking >&2; echo \"store: certificate expired\" >&2; exit 3'",
			[]string{"the base at 0123abcd refused its own perf/service.toml", "exited 3", "certificate expired", "the pair is not judged"}},
		{"refusal quoting a connection string", "server.port", "[server]\nport = @PORT@\n", "SVC__A=1\n", "sh -c 'echo \"store: cannot connect to postgres://perf:hunter2@127.0.0.1:5432/perf\" >&2; exit 3'",
			[]string{"exited 3", "cannot connect to postgres://***@127.0.0.1:5432/perf"}},
		{"check command missing", "server.port", "[server]\nport = @PORT@\n", "SVC__A=1\n", "/nonexistent/ferrofed config check",
			[]string{"could not run its config check", "/nonexistent/ferrofed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := serviceTree(t, tt.known, tt.config, tt.armEnv)
			if tt.check != "" {
				files[GateFile] = replace(files[GateFile], `check = "@BIN@ check"`, "check = "+quoteTOML(tt.check))
			}
			c, err := Load(writeTree(t, files))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.BuildArm(context.Background(), filepath.Join(t.TempDir(), "perf-base"), new(discard)); err != nil {
				t.Fatal(err)
			}
			a, err := c.Render(context.Background(), RenderOptions{Port: 8070, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			err = c.CheckConfig(context.Background(), a, "0123abcd")
			wantRefusal(t, err, tt.parts...)
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the refusal prints the store's password: %v", err)
			}
		})
	}
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		out  string
		want []string
	}{
		{"Error: unknown field `emergency`, expected one of `server`, `store`", []string{"emergency"}},
		{`error: unknown key "emergency.threshold" in perf/service.toml`, []string{"emergency.threshold"}},
		{"unknown key(s): emergency, fhir", []string{"emergency", "fhir"}},
		{"config: unrecognized option pdqm at line 12", []string{"pdqm"}},
		{"Unknown configuration key 'on'", []string{"on"}},
		{"TOML parse error at line 3: unknown field `a`\nunknown field `b`, expected `c`", []string{"a", "b"}},
		{"error: store: certificate expired", nil},
	}
	for _, tt := range tests {
		if got := unknownKeys(tt.out); !equal(got, tt.want) {
			t.Errorf("unknownKeys(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func quoteTOML(s string) string {
	out := []byte{'"'}
	for _, r := range []byte(s) {
		if r == '"' || r == '\\' {
			out = append(out, '\\')
		}
		out = append(out, r)
	}
	return string(append(out, '"'))
}

// The check runs with the arm's environment: what the arm gets of
// perfgate's (PATH and the like), its [env], overrides and config_env, and
// nothing else the CI job exported, such as a token a failing check could
// print.
func TestCheckRunsWithTheArmsEnvironment(t *testing.T) {
	t.Setenv("PERFGATE_TEST_CI_TOKEN", "hunter2")
	t.Setenv("SVC__LEAKED", "1")
	tests := []struct {
		name, test string
		want       bool // the check passes
	}{
		{"a CI token", `test -z "$PERFGATE_TEST_CI_TOKEN"`, true},
		{"an inherited prefixed variable", `test -z "$SVC__LEAKED"`, true},
		{"PATH", `test -n "$PATH"`, true},
		{"the fixed environment", `test "$SVC__USAGE__ENABLED" = false`, true},
		{"the overrides", `test "$SVC__A" = 1`, true},
		{"the rendered config", `test -f "$SVC_CONFIG"`, true},
		{"the token really is unset", `test -n "$PERFGATE_TEST_CI_TOKEN"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := serviceTree(t, "server.port", "[server]\nport = @PORT@\n", "SVC__A=1\n")
			files[GateFile] = replace(files[GateFile], `check = "@BIN@ check"`, "check = "+quoteTOML("sh -c '"+tt.test+"'"))
			c, err := Load(writeTree(t, files))
			if err != nil {
				t.Fatal(err)
			}
			a, err := c.Render(context.Background(), RenderOptions{Port: 8070, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.CheckConfig(context.Background(), a, "0123abcd"); (err == nil) != tt.want {
				t.Errorf("check `%s`: %v, want passing %v", tt.test, err, tt.want)
			}
		})
	}
}
