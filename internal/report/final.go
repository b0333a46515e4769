package report

import (
	"fmt"
	"strings"
)

// Final is the verdict over a gate's attempts, as the verdict job's
// summary shows it (internal/attempts decides it).
type Final struct {
	Code    int    // the gate's exit code
	Word    string // the code in the gate's words (pass, regression, cannot-judge)
	Attempt int    // the final attempt; 0 when none ran to an exit code
	Rows    []FinalRow
	Summary []byte // the final attempt's own summary, shown under the table; nil for none
}

// FinalRow is one attempt in the table.
type FinalRow struct {
	Attempt               int
	CPUModel              string
	Verdict, Next, Reason string
}

// FinalMarkdown is the verdict job's summary: the verdict, a row an
// attempt, then the final attempt's summary.
func FinalMarkdown(f Final) string {
	var b strings.Builder
	mark := Mark(f.Code)
	if f.Attempt > 0 {
		fmt.Fprintf(&b, "## %s perfgate verdict: %s (attempt %d)\n\n", mark, f.Word, f.Attempt)
	} else {
		fmt.Fprintf(&b, "## %s perfgate verdict: %s (no attempt ran to an exit code)\n\n", mark, f.Word)
	}
	b.WriteString("| attempt | CPU model | verdict | what followed |\n|---:|---|---|---|\n")
	for _, r := range f.Rows {
		model := r.CPUModel
		if model == "" {
			model = "unknown"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s: %s |\n", r.Attempt, cell(model), r.Verdict, r.Next, cell(r.Reason))
	}
	b.WriteString("\n")
	if f.Summary != nil {
		fmt.Fprintf(&b, "### The final attempt (%d)\n\n", f.Attempt)
		b.Write(f.Summary)
	}
	return b.String()
}
