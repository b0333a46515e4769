package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/report/reporttest"
)

// attemptFolder writes one attempt's downloaded report folder as the
// workflow uploads it: perf-run/latest.json, summary.md and attempt.json.
type attemptFolder struct {
	n      int
	record *attempts.Record // nil: no attempt.json
	report *report.Report   // nil: no latest.json
}

func writeAttemptFolders(t *testing.T, folders []attemptFolder) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range folders {
		run := filepath.Join(dir, attempts.FolderPrefix+itoa(f.n), "perf-run")
		if err := os.MkdirAll(run, 0o755); err != nil {
			t.Fatal(err)
		}
		if f.record != nil {
			if err := attempts.WriteRecord(filepath.Join(run, "attempt.json"), *f.record); err != nil {
				t.Fatal(err)
			}
		}
		if f.report != nil {
			if err := report.Write(filepath.Join(run, "latest.json"), f.report); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(run, "summary.md"), []byte("attempt "+itoa(f.n)+"'s own summary\n"), 0o644)
		}
	}
	return dir
}

func itoa(n int) string { return strconv.Itoa(n) }

func rec(n int, code *int, model string) *attempts.Record {
	o := attempts.Outcome{Number: n, CPUModel: model}
	if code != nil {
		o.HasExitCode, o.ExitCode = true, *code
	}
	r := attempts.NewRecord(o, attempts.Policy{StallProne: []string{epycModel}}.Decide(o), 1)
	return &r
}

func code(c int) *int { return &c }

func TestVerdict(t *testing.T) {
	tests := []struct {
		name    string
		folders []attemptFolder
		args    []string
		code    int
		want    []string // in the summary
		absent  []string
	}{
		{
			name:    "one pass",
			folders: []attemptFolder{{1, rec(1, code(0), "Intel Xeon"), reporttest.Pass()}},
			code:    exit.Pass,
			want:    []string{"perfgate verdict: pass (attempt 1)", "| 1 | Intel Xeon | pass | final: passed |", "attempt 1's own summary"},
		},
		{
			name: "cannot judge, then a pass",
			folders: []attemptFolder{
				{1, rec(1, code(2), "Intel Xeon"), reporttest.CannotJudge()},
				{2, rec(2, code(0), epycModel), reporttest.Pass()},
			},
			code:   exit.Pass,
			want:   []string{"(attempt 2)", "| 1 | Intel Xeon | cannot-judge | retry: cannot judge on Intel Xeon", "| 2 | " + epycModel + " | pass | final: passed |", "attempt 2's own summary"},
			absent: []string{"attempt 1's own summary"},
		},
		{
			name: "a stall-prone regression, then a regression elsewhere",
			folders: []attemptFolder{
				{1, rec(1, code(1), epycModel), reporttest.Regression()},
				{2, rec(2, code(1), "Intel Xeon"), reporttest.Regression()},
			},
			code: exit.Regression,
			want: []string{"perfgate verdict: regression (attempt 2)", "retry: regression on " + epycModel + ", a CPU model listed as stall-prone", "final: regression on Intel Xeon, not a stall-prone"},
		},
		{
			name: "a timed-out attempt, then a pass",
			folders: []attemptFolder{
				{2, rec(2, code(0), "Intel Xeon"), reporttest.Pass()},
			},
			args:   []string{"--job-results", "cancelled,success,skipped"},
			code:   exit.Pass,
			want:   []string{"| 1 | unknown | no exit code (job cancelled) | retry: the attempt ended without an exit code", "(attempt 2)"},
			absent: []string{"| 3 |"},
		},
		{
			name: "three cannot-judge attempts",
			folders: []attemptFolder{
				{1, rec(1, code(2), "A"), reporttest.CannotJudge()},
				{2, rec(2, code(2), "B"), reporttest.CannotJudge()},
				{3, rec(3, code(2), "C"), reporttest.CannotJudge()},
			},
			code: exit.CannotJudge,
			want: []string{"perfgate verdict: cannot-judge (attempt 3)", "final: cannot judge on C", "at most 2 retries"},
		},
		{
			name:    "a report without a record: its own verdict and model",
			folders: []attemptFolder{{1, nil, reporttest.Regression()}},
			code:    exit.Regression,
			want:    []string{"| 1 | AMD EPYC 7763 64-Core Processor | regression | final: regression on AMD EPYC 7763 64-Core Processor, not a stall-prone"},
		},
		{
			name:    "a refused attempt with a record and no report",
			folders: []attemptFolder{{1, rec(1, code(2), "Intel Xeon"), nil}, {2, rec(2, code(0), "Intel Xeon"), reporttest.Pass()}},
			code:    exit.Pass,
			want:    []string{"| 1 | Intel Xeon | cannot-judge | retry"},
		},
		{
			name:    "every attempt ended without an exit code",
			folders: []attemptFolder{{1, nil, nil}},
			args:    []string{"--job-results", "failure,cancelled,cancelled"},
			code:    exit.CannotJudge,
			want:    []string{"(no attempt ran to an exit code)", "| 3 | unknown | no exit code (job cancelled) | final:"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeAttemptFolders(t, tc.folders)
			out := filepath.Join(t.TempDir(), "verdict")
			stepSummary := filepath.Join(t.TempDir(), "step-summary")
			os.WriteFile(stepSummary, nil, 0o644)
			env := map[string]string{"GITHUB_STEP_SUMMARY": stepSummary, attempts.StallProneEnv: epycModel}
			stdout, stderr, err := runBaseCLI(t, env, append([]string{"verdict", "--reports", dir, "--out", out}, tc.args...)...)
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d, want %d (%v)\n%s\n%s", got, tc.code, err, stdout, stderr)
			}
			md, err := os.ReadFile(filepath.Join(out, "summary.md"))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(md), w) {
					t.Errorf("summary lacks %q:\n%s", w, md)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(string(md), a) {
					t.Errorf("summary has %q:\n%s", a, md)
				}
			}
			step, _ := os.ReadFile(stepSummary)
			if strings.TrimSpace(string(step)) != strings.TrimSpace(string(md)) {
				t.Errorf("the job summary differs from summary.md:\n%s", step)
			}
		})
	}
}

func TestVerdictRefusals(t *testing.T) {
	mismatch := writeAttemptFolders(t, []attemptFolder{{2, rec(1, code(0), "X"), nil}})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no --reports", nil, "give --reports DIR"},
		{"empty folder", []string{"--reports", t.TempDir()}, "holds no perf-report-attempt-<n> folder"},
		{"a bad job result", []string{"--reports", t.TempDir(), "--job-results", "success,timed_out"}, `item 2 is "timed_out"`},
		{"a record in the wrong folder", []string{"--reports", mismatch}, "the record says attempt 1 but its folder is attempt 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runBaseCLI(t, nil, append([]string{"verdict", "--out", t.TempDir()}, tc.args...)...)
			if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a refusal saying %q", err, tc.want)
			}
		})
	}
}
