package contract

import (
	"regexp"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

// TestGateFileRefusalsNameTheLine: type errors (which the TOML library
// reports inside its own text, or for a table not at all), unknown keys,
// deep nesting, a compose file the tree lacks and a bad arm.env are all
// refused by Load, the earliest stage (`perfgate prepare`), on their line.
func TestGateFileRefusalsNameTheLine(t *testing.T) {
	good := serviceTree(t, "server.port", "[server]\nport = @PORT@\n", "SVC__A=1\n")[GateFile]
	for _, tc := range []struct {
		name  string
		edit  func(gate string) string
		files map[string]string
		want  string
	}{
		{"a string key given a number", func(g string) string { return strings.Replace(g, `binary = "bin/svc"`, "binary = 3", 1) },
			nil, "perf/gate.toml:3: binary must be a string, not a whole number: see docs/contract.md for each key's type"},
		{"a table given a number", func(g string) string {
			return strings.Replace(g, "[env]\nSVC__USAGE__ENABLED = \"false\"\n", "env = 3\n", 1)
		}, nil, "perf/gate.toml:13: env must be a table, not a whole number: see docs/contract.md for each key's type"},
		{"an env value of the wrong type", func(g string) string {
			return strings.Replace(g, `SVC__USAGE__ENABLED = "false"`, "SVC__USAGE__ENABLED = false", 1)
		}, nil, "perf/gate.toml:14: SVC__USAGE__ENABLED must be a string, not true or false: see docs/contract.md for each key's type"},
		{"compose given a string", func(g string) string {
			return strings.Replace(g, `compose = ["compose.yaml"]`, `compose = "compose.yaml"`, 1)
		},
			nil, "perf/gate.toml:10: compose must be an array, not a string"},
		{"the first unknown key in the file", func(g string) string {
			return "# c\nalpha = \"x\"\n" + g + "[legacy]\nscript = \"s.sh\"\nfunction = \"f\"\nomega = \"y\"\n"
		}, nil, `perf/gate.toml:2: unknown key "alpha"`},
		{"deep nesting", func(g string) string { return g + "deep = " + strings.Repeat("[", 40) + "\n" },
			nil, "perf/gate.toml:15: keys and values nest more than 16 levels deep here"},
		{"a compose file the tree lacks", func(g string) string {
			return strings.Replace(g, `compose = ["compose.yaml"]`, `compose = ["compose.yaml", "perf/compose.yaml"]`, 1)
		}, nil, "perf/gate.toml:10: compose names perf/compose.yaml, which the tree does not have: add it or fix the path"},
		{"a bad arm.env", func(g string) string { return g }, map[string]string{"perf/arm.env": "SVC__A=1\nRUST_LOG=debug\n"},
			`perf/arm.env:2: "RUST_LOG=..." sets no SVC__ variable`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := serviceTree(t, "server.port", "[server]\nport = @PORT@\n", "SVC__A=1\n")
			files[GateFile] = tc.edit(good)
			for k, v := range tc.files {
				files[k] = v
			}
			_, err := Load(writeTree(t, files))
			wantRefusal(t, err, tc.want)
			if err != nil && !strings.HasPrefix(err.Error(), strings.SplitN(tc.want, " ", 2)[0]) {
				t.Errorf("refusal %q does not start with %q", err, strings.SplitN(tc.want, " ", 2)[0])
			}
		})
	}
}

var gateRefusalShape = regexp.MustCompile(`^perf/gate\.toml:[1-9][0-9]*: [^\n]+$`)

// FuzzGateFile: any gate file parses or is refused with exit 2 in one line
// naming perf/gate.toml and a line.
func FuzzGateFile(f *testing.F) {
	f.Add([]byte(serviceTreeGate))
	f.Add([]byte("build = 3\n"))
	f.Add([]byte("env = 3\n[legacy]\nscript = \"../x\"\n"))
	f.Add([]byte("start = \"@BIN@ | tee\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parse(data)
		if err != nil {
			if exit.Code(err) != exit.CannotJudge || !gateRefusalShape.MatchString(err.Error()) {
				t.Fatalf("refusal with exit %d is not one perf/gate.toml:LINE: line: %q", exit.Code(err), err)
			}
			return
		}
		if c.Build == "" || len(c.startArgv) == 0 || len(c.checkArgv) == 0 || c.Prefix == "" {
			t.Fatalf("accepted without its required keys: %+v", c)
		}
	})
}
