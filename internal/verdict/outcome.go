package verdict

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/report"
)

// releaseNotePrefix starts the release-notes line, as base.md writes it.
const releaseNotePrefix = "Performance: "

// releaseLine is the release-notes line of the deciding attempt: empty
// when its gate named no base (no base SHA or no sentence saying why).
func releaseLine(a *Attempt) string {
	if a.Facts.BaseSHA == "" || a.BaseNote == "" {
		return ""
	}
	return releaseNotePrefix + a.BaseNote
}

// title is the check's one-line title.
func title(a *Attempt, word string) string {
	r, _ := decodeReport(a)
	switch word {
	case WordPass:
		return "pass"
	case WordRegression:
		if r != nil && len(r.Verdict.Failures) > 0 {
			return "regression: " + r.Verdict.Failures[0]
		}
		return "regression"
	}
	if r != nil && len(r.Verdict.CannotJudge) > 0 {
		return "cannot judge: " + r.Verdict.CannotJudge[0]
	}
	return "cannot judge: the last attempt ended without a verdict"
}

// outcome is what the check and the PR comment say: the deciding
// attempt's Markdown summary, the attempts table (CPU model, verdict, why
// a retry ran) and one annotation per failing metric on the plan file.
func outcome(run *Run, final *Attempt, all []Attempt) (Outcome, error) {
	o := Outcome{Word: run.Verdict, Title: run.Title, DetailsURL: final.Facts.DetailsURL}
	var b strings.Builder
	r, err := decodeReport(final)
	if err != nil {
		return o, err
	}
	if r != nil {
		if err := report.Markdown(&b, r); err != nil {
			return o, fmt.Errorf("writing the summary of run %d: %w", run.RunID, err)
		}
		planPath := r.Settings.Plan
		if planPath == "" {
			planPath = "perf/plan.toml"
		}
		for _, m := range r.Verdict.Metrics {
			if !m.Fail {
				continue
			}
			o.Annotations = append(o.Annotations, Annotation{
				Path:  planPath,
				Title: "perfgate: " + m.ID + " regressed",
				Message: fmt.Sprintf("%s: head %.4g against base %.4g (x%.3f), over the threshold of %.1f %% in %d of %d pairs",
					m.ID, m.Head, m.Base, m.Ratio, 100*m.Threshold, m.PairsBreached, m.Pairs),
			})
		}
	} else {
		fmt.Fprintf(&b, "## perfgate: %s\n\n", run.Title)
	}
	b.WriteString("\n### Attempts\n\n| attempt | CPU model | verdict | next | why |\n|---|---|---|---|---|\n")
	for _, a := range all {
		v := a.Verdict
		if v == "" {
			v = "no exit code"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", a.Facts.Attempt, cell(a.Facts.CPUModel), v, a.Decision.Next, cell(a.Decision.Reason))
	}
	o.Summary = b.String()
	return o, nil
}

func cell(s string) string {
	if s == "" {
		return "unknown"
	}
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
