package contract

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// A [prepare] command that fails stops the run naming it and quoting the
// end of its output, but never a password a URL in that output carries.
func TestRunPrepareRefusals(t *testing.T) {
	tests := []struct {
		name, command string
		parts         []string
	}{
		{"a failing command", `sh -c 'echo minting the keys; echo "openssl: no such curve" >&2; exit 4'`,
			[]string{"perf/gate.toml: [prepare] command 1 (sh -c", "exit status 4", "openssl: no such curve"}},
		{"a command naming a connection string", `sh -c 'echo "cannot reach postgres://perf:hunter2@127.0.0.1:5432/perf"; exit 1'`,
			[]string{"cannot reach postgres://***@127.0.0.1:5432/perf"}},
		{"a program that does not exist", "/nonexistent/mint-tokens @DIR@", []string{"[prepare] command 1 (/nonexistent/mint-tokens @DIR@)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := serviceTree(t, "server.port", "[server]\nport = @PORT@\n", "SVC__A=1\n")
			files[GateFile] += "\n[prepare]\ncommands = [" + quoteTOML(tt.command) + "]\n"
			tree := writeTree(t, files)
			c, err := Load(tree)
			if err != nil {
				t.Fatal(err)
			}
			err = c.RunPrepare(context.Background(), tree, filepath.Join(t.TempDir(), "perf-run"), nil)
			wantRefusal(t, err, tt.parts...)
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the refusal prints the password: %v", err)
			}
		})
	}
}
