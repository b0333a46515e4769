package contract

import (
	"context"
	"path/filepath"
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
			wantRefusal(t, c.CheckConfig(context.Background(), a, "0123abcd"), tt.parts...)
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
