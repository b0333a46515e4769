package attempts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

// TestCollect reads real attempt folders: a retried cannot-judge whose
// record `attempts next` kept, then a final pass with its own summary.
func TestCollect(t *testing.T) {
	dir := t.TempDir()
	files := Files{Report: "latest.json", Summary: "summary.md"}
	two, zero := 2, 0
	recs := []Record{
		{Attempt: 1, ExitCode: &two, CPUModel: "AMD EPYC", Next: Retry, Reason: "cannot judge: retried"},
		{Attempt: 2, ExitCode: &zero, CPUModel: "Intel Xeon", Next: Final, Reason: "passed"},
	}
	for _, r := range recs {
		folder := filepath.Join(dir, FolderPrefix+string(rune('0'+r.Attempt)), "perf-run")
		if err := WriteRecord(filepath.Join(folder, RecordFile), r); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(folder, files.Summary), []byte("attempt summary\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := Collect(dir, []string{"failure", "success", "skipped"}, Policy{}, files)
	if err != nil {
		t.Fatal(err)
	}
	if !v.HasFinal || v.Final.Number != 2 || v.Code != exit.Pass || len(v.Attempts) != 2 || v.Err() != nil {
		t.Fatalf("verdict %+v", v)
	}
	md, err := v.Markdown()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"perfgate verdict: pass (attempt 2)", "| 1 | AMD EPYC | cannot-judge | retry: cannot judge: retried |", "### The final attempt (2)\n\nattempt summary"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	if want := "attempt 1 on AMD EPYC: cannot-judge; retry: cannot judge: retried\n"; !strings.HasPrefix(v.Text(), want) {
		t.Errorf("text %q, want it to start with %q", v.Text(), want)
	}
}

func TestParseJobResults(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int
		refused bool
	}{{"", 0, false}, {"success, failure", 2, false}, {"success,passed", 0, true}} {
		got, err := ParseJobResults(tc.in)
		if (exit.Code(err) == exit.CannotJudge) != tc.refused || len(got) != tc.want {
			t.Errorf("ParseJobResults(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestParseExitCode(t *testing.T) {
	for _, tc := range []struct {
		code    string
		none    bool
		has     bool
		n       int
		refused bool
	}{
		{code: "0", has: true}, {code: " 1 ", has: true, n: 1}, {code: "137", has: true, n: 137},
		{none: true}, {code: "1", none: true, refused: true}, {code: "", refused: true},
		{code: "256", refused: true}, {code: "-1", refused: true}, {code: "x", refused: true},
	} {
		has, n, err := ParseExitCode(tc.code, tc.none)
		if has != tc.has || n != tc.n || (exit.Code(err) == exit.CannotJudge) != tc.refused {
			t.Errorf("ParseExitCode(%q, %v) = %v, %d, %v", tc.code, tc.none, has, n, err)
		}
	}
}

func TestNextDecide(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      Question
		next    Next
		refused bool
	}{
		{name: "cannot judge retries", in: Question{Number: 1, ExitCode: "2", MaxRetries: DefaultMaxRetries}, next: Retry},
		{name: "no retries allowed", in: Question{Number: 1, ExitCode: "2", MaxRetries: 0}, next: Final},
		{name: "a pass is final", in: Question{Number: 1, ExitCode: "0", MaxRetries: DefaultMaxRetries}, next: Final},
		{name: "attempt 0", in: Question{Number: 0, ExitCode: "0"}, refused: true},
		{name: "negative retries", in: Question{Number: 1, ExitCode: "0", MaxRetries: -1}, refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, d, err := tc.in.Decide()
			if (exit.Code(err) == exit.CannotJudge) != tc.refused || (!tc.refused && d.Next != tc.next) {
				t.Fatalf("decision %+v, %v", d, err)
			}
		})
	}
}
