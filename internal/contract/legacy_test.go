package contract

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// legacyGate is the shape of an older tree's gate script: constants, a
// helper, a function printing the overrides, and a main that must not run
// while the overrides are derived (it would build, and it exits on no args).
const legacyGate = `#!/usr/bin/env bash
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readonly GW_PORT=8070
NODES=(a b c d)
STORE_DB="perf_$(printf base)"

own_urls() {
	local n out=()
	for n in "${NODES[@]}"; do out+=("http://127.0.0.1:9$GW_PORT/$n"); done
	local IFS=,
	echo "${out[*]}"
}

gateway_env() {
	echo "starting the gateway on $GW_PORT"
	echo "FERROFED__SERVER__PORT=${1:-$GW_PORT}"
	echo "FERROFED__NODES=$(own_urls)"
	echo "export FERROFED__STORE__DATABASE=$STORE_DB"
	echo "RUST_LOG=info"
	export FERROFED__ROOT_SET="$([[ -d $ROOT ]] && echo yes)"
}

build() { touch "$ROOT/BUILT"; }

main() {
	case "${1:-}" in
		build) build ;;
		*) echo "usage: gate.sh build|run" >&2; exit 2 ;;
	esac
}
touch "$ROOT/TOP_LEVEL_RAN"
main "$@"
`

func TestDeriveFromLegacyScript(t *testing.T) {
	tree := writeTree(t, map[string]string{"scripts/perf/gate.sh*": legacyGate})
	got, err := Derive(context.Background(), tree, Legacy{Script: "scripts/perf/gate.sh", Function: "gateway_env", Args: []string{"8080"}}, "FERROFED__")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"FERROFED__SERVER__PORT=8080",
		"FERROFED__NODES=http://127.0.0.1:98070/a,http://127.0.0.1:98070/b,http://127.0.0.1:98070/c,http://127.0.0.1:98070/d",
		"FERROFED__STORE__DATABASE=perf_base",
		"FERROFED__ROOT_SET=yes",
	}
	if !equal(got, want) {
		t.Errorf("derived\n%q\nwant\n%q", got, want)
	}
	for _, f := range []string{"BUILT", "TOP_LEVEL_RAN"} {
		if _, err := os.Stat(filepath.Join(tree, f)); err == nil {
			t.Errorf("deriving ran the script's top level: %s exists", f)
		}
	}
}

func TestDeriveRefusals(t *testing.T) {
	tests := []struct {
		name, script, fn string
		parts            []string
	}{
		{"function sets nothing", "gateway_env() { echo RUST_LOG=info; }\n", "gateway_env", []string{"scripts/perf/gate.sh gateway_env()", "sets no FERROFED__ variable", "perf/arm.env"}},
		{"function fails and sets nothing", "gateway_env() { echo oops >&2; return 3; }\n", "gateway_env", []string{"sets no FERROFED__ variable", "exited 3", "oops"}},
		{"no such function", "other() { echo FERROFED__A=1; }\n", "gateway_env", []string{"defines no function gateway_env"}},
		{"bad printed line", "gateway_env() { echo 'FERROFED__=1'; }\n", "gateway_env", []string{"gateway_env() output:1", "sets no FERROFED__ variable"}},
		{"unknown placeholder", "gateway_env() { echo 'FERROFED__A=@SECRET@'; }\n", "gateway_env", []string{"@SECRET@"}},
		// Its last line is quoted, but not the store's password in it.
		{"fails naming a connection string", "gateway_env() { echo 'no store at postgres://perf:hunter2@127.0.0.1:5432/perf' >&2; return 3; }\n", "gateway_env",
			[]string{"exited 3", "no store at postgres://***@127.0.0.1:5432/perf"}},
		{"prints a value without its =", "gateway_env() { echo 'FERROFED__TOKEN hunter2'; }\n", "gateway_env", []string{`"FERROFED__TOKEN..." sets no FERROFED__ variable`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := writeTree(t, map[string]string{"scripts/perf/gate.sh": tt.script})
			_, err := Derive(context.Background(), tree, Legacy{Script: "scripts/perf/gate.sh", Function: tt.fn}, "FERROFED__")
			wantRefusal(t, err, tt.parts...)
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the refusal prints a password: %v", err)
			}
		})
	}
}

// A base tree from before arm.env renders with overrides from its own script,
// its port passed to the function through @PORT@.
func TestRenderUsesLegacyWithoutArmEnv(t *testing.T) {
	files := map[string]string{
		GateFile: `build = "true"
binary = "bin/gw"
start = "@BIN@ serve"
check = "@BIN@ config check"
config = "perf/ferrofed.toml"
config_env = "FERROFED_CONFIG"
prefix = "FERROFED__"
ready = "http://localhost:@PORT@/status"

[legacy]
script = "scripts/perf/gate.sh"
function = "gateway_env"
args = ["@PORT@"]
`,
		"perf/ferrofed.toml":    "[server]\nport = @PORT@\n",
		"scripts/perf/gate.sh*": legacyGate,
	}
	c, err := Load(writeTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Render(context.Background(), RenderOptions{Port: 8070, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if a.Env[0] != "FERROFED__SERVER__PORT=8070" || a.Env[len(a.Env)-1] != "FERROFED_CONFIG="+a.ConfigPath || len(a.Env) != 5 {
		t.Errorf("env %q", a.Env)
	}
	if a.Ready != "http://localhost:8070/status" {
		t.Errorf("ready %q", a.Ready)
	}
}
