package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

// The action's entrypoint splits its one args string, runs the command and
// writes the verdict output from the exit code.
func TestActionEntrypoint(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		verdict string
	}{
		{"pass", []string{"version", ""}, exit.Pass, "pass"},
		{"refused", []string{"release-note", "--base-file '" + filepath.Join(dir, "missing dir", "base.md") + "'"}, exit.CannotJudge, "cannot-judge"},
		{"bad quoting", []string{"version", "'unterminated"}, exit.CannotJudge, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			output := filepath.Join(dir, tc.name+".out")
			os.WriteFile(output, nil, 0o644)
			env := map[string]string{"GITHUB_OUTPUT": output}
			var out, errb bytes.Buffer
			err := RunIO(context.Background(), append([]string{"action"}, tc.args...), &IO{Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }})
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d, want %d (%v)", got, tc.code, err)
			}
			b, _ := os.ReadFile(output)
			switch {
			case tc.verdict == "" && len(b) > 0:
				t.Errorf("refused arguments wrote an output: %q", b)
			case tc.verdict != "" && !strings.Contains(string(b), "verdict") || !strings.Contains(string(b), tc.verdict):
				t.Errorf("GITHUB_OUTPUT holds %q, want verdict %s", b, tc.verdict)
			}
		})
	}
}
