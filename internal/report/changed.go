package report

import (
	"fmt"
	"io"

	"github.com/perfgate/perfgate/internal/judge"
)

// Judging says which plan judged the run: a pull request cannot loosen its
// own gate, so the gate judges with the stricter of the base's and the
// head's settings (plan.JudgingSettings, docs/judge.md "Which plan
// judges"). BasePlan is the base's plan, relative to its tree
// (perf/plan.toml), "" when the base has none; Note says why the head's settings judged alone then;
// Changed lists every judging setting the head wrote differently, with
// both values and the one judged. The verdict service builds the check
// run's text from this field. Reports from before it carry none.
type Judging struct {
	BasePlan string                `json:"base_plan,omitempty"`
	Note     string                `json:"note,omitempty"`
	Changed  []judge.SettingChange `json:"changed,omitempty"`
}

// judgingMarkdown writes the summary's "Settings the head changed" table,
// or the note that the base had no plan; nothing when the head changed
// nothing.
func judgingMarkdown(w io.Writer, j *Judging) {
	if j == nil || (j.Note == "" && len(j.Changed) == 0) {
		return
	}
	fmt.Fprintf(w, "### Settings the head changed\n\n")
	if j.Note != "" {
		fmt.Fprintf(w, "%s\n\n", j.Note)
	}
	if len(j.Changed) == 0 {
		return
	}
	fmt.Fprintf(w, "The head cannot loosen its own gate: each setting is judged at the stricter of the two plans (the base's rule; its pairs and windows as a floor).\n\n")
	fmt.Fprintf(w, "| setting | base | head | judged with |\n|---|---|---|---|\n")
	for _, c := range j.Changed {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", cell(c.Setting), cell(c.Base), cell(c.Head), cell(c.Judged))
	}
	fmt.Fprintln(w)
}

// judgingLines are the terminal summary's lines for the same.
func judgingLines(j *Judging) []string {
	if j == nil {
		return nil
	}
	var out []string
	if j.Note != "" {
		out = append(out, j.Note)
	}
	for _, c := range j.Changed {
		out = append(out, fmt.Sprintf("%s: base %s, head %s, judged with %s", c.Setting, c.Base, c.Head, c.Judged))
	}
	return out
}
