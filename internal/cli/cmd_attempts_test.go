package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/exit"
)

const epycModel = "AMD EPYC 9V74 80-Core Processor"

// attempts next prints the decision and its reason, sets the step outputs
// and keeps the record the verdict job reads.
func TestAttemptsNext(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		next   string
		reason string
	}{
		{"cannot judge retries", []string{"--attempt", "1", "--exit-code", "2", "--cpu-model", "Intel Xeon"}, nil, 0, "retry", "cannot judge on Intel Xeon"},
		{"regression on a stall-prone model retries", []string{"--attempt", "1", "--exit-code", "1", "--cpu-model", epycModel}, map[string]string{attempts.StallProneEnv: "Intel Xeon, " + epycModel}, 0, "retry", "stall-prone"},
		{"--stall-prone wins over the variable", []string{"--attempt", "1", "--exit-code", "1", "--cpu-model", epycModel, "--stall-prone", "Intel Xeon"}, map[string]string{attempts.StallProneEnv: epycModel}, 0, "final", "not a stall-prone"},
		{"regression elsewhere is final", []string{"--attempt", "2", "--exit-code", "1", "--cpu-model", "Intel Xeon"}, nil, 0, "final", "not a stall-prone"},
		{"no exit code retries", []string{"--attempt", "1", "--no-exit-code"}, nil, 0, "retry", "without an exit code"},
		{"workflow cancelled is final", []string{"--attempt", "1", "--no-exit-code", "--workflow-cancelled"}, nil, 0, "final", "cancelled"},
		{"the third attempt is the last", []string{"--attempt", "3", "--exit-code", "2"}, nil, 0, "final", "at most 2 retries"},
		{"no retries at all", []string{"--attempt", "1", "--exit-code", "2", "--max-retries", "0"}, nil, 0, "final", "at most 0 retries"},
		{"a pass is final", []string{"--attempt", "1", "--exit-code", "0"}, nil, 0, "final", "passed"},
		{"no exit code given", []string{"--attempt", "1"}, nil, exit.CannotJudge, "", "give --exit-code C, or --no-exit-code"},
		{"empty exit code", []string{"--attempt", "1", "--exit-code", ""}, nil, exit.CannotJudge, "", "give --exit-code C"},
		{"both", []string{"--attempt", "1", "--exit-code", "1", "--no-exit-code"}, nil, exit.CannotJudge, "", "both given"},
		{"not a code", []string{"--attempt", "1", "--exit-code", "x"}, nil, exit.CannotJudge, "", `--exit-code "x"`},
		{"attempt 0", []string{"--attempt", "0", "--exit-code", "0"}, nil, exit.CannotJudge, "", "--attempt 0"},
		{"negative retries", []string{"--attempt", "1", "--exit-code", "0", "--max-retries", "-1"}, nil, exit.CannotJudge, "", "--max-retries -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			output := filepath.Join(dir, "output")
			record := filepath.Join(dir, "attempt.json")
			os.WriteFile(output, nil, 0o644)
			env := map[string]string{"GITHUB_OUTPUT": output}
			for k, v := range tc.env {
				env[k] = v
			}
			stdout, stderr, err := runBaseCLI(t, env, append([]string{"attempts", "next", "--record", record}, tc.args...)...)
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d, want %d (%v)\n%s", got, tc.code, err, stderr)
			}
			outputs, _ := os.ReadFile(output)
			if tc.code != 0 {
				if !strings.Contains(err.Error(), tc.reason) {
					t.Errorf("refusal %q does not say %q", err, tc.reason)
				}
				if len(outputs) > 0 {
					t.Errorf("a refusal set outputs: %q", outputs)
				}
				return
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if len(lines) != 2 || lines[0] != tc.next || !strings.Contains(lines[1], tc.reason) {
				t.Errorf("printed %q, want %s and a reason with %q", stdout, tc.next, tc.reason)
			}
			if !strings.Contains(string(outputs), "next<<") || !strings.Contains(string(outputs), "\n"+tc.next+"\n") || !strings.Contains(string(outputs), tc.reason) {
				t.Errorf("GITHUB_OUTPUT holds %q, want next=%s and the reason", outputs, tc.next)
			}
			rec, err := attempts.ReadRecord(record)
			if err != nil {
				t.Fatal(err)
			}
			if string(rec.Next) != tc.next || rec.Reason != lines[1] {
				t.Errorf("record %+v, want next %s reason %q", rec, tc.next, lines[1])
			}
		})
	}
}
