package verdict

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/internal/contract"
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
// a retry ran) and one annotation per failing metric or threshold on the
// plan file.
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
		o.Annotations = annotations(r)
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

// defaultPlanPath is where a plan lives unless the report says otherwise.
const defaultPlanPath = "perf/plan.toml"

// annotations are r's failing metrics and thresholds, each on the plan
// line it comes from: the report's plan_lines for a metric (its tolerance
// key, else its group's [[group]] header) and a threshold's own
// [[threshold]] line. Line 1 stands in for a metric without a line, and
// for every metric of a report from before plan_lines.
func annotations(r *report.Report) []Annotation {
	file := planFile(r.Settings)
	var out []Annotation
	for _, m := range r.Verdict.Metrics {
		if !m.Fail {
			continue
		}
		out = append(out, Annotation{
			Path:  file,
			Line:  max(r.PlanLines[m.ID], 1),
			Title: "perfgate: " + m.ID + " regressed",
			Message: fmt.Sprintf("%s: head %.4g against base %.4g (x%.3f), over the threshold of %.1f %% in %d of %d pairs",
				m.ID, m.Head, m.Base, m.Ratio, 100*m.Threshold, m.PairsBreached, m.Pairs),
		})
	}
	for _, th := range r.Verdict.Thresholds {
		if !th.Fail {
			continue
		}
		subject := "all groups"
		if th.Group != "" {
			subject = th.Group
		}
		out = append(out, Annotation{
			Path:    file,
			Line:    max(th.Line, 1),
			Title:   "perfgate: threshold " + th.Metric + " of " + subject + " not met",
			Message: th.Says,
		})
	}
	return out
}

// planFile is the plan's path in the repository, which GitHub annotates:
// the report's plan_path, else its plan when that is already relative
// and inside the checkout (reports from before plan_path), else
// perf/plan.toml, since an absolute path names no file to GitHub. A path
// into the exported head arm's copy of the contract, which gates before
// issue 20 reported, is its path in the repository: the copy keeps each
// file at its tree path.
func planFile(s report.Settings) string {
	if s.PlanPath != "" {
		p, _ := inRepository(s.PlanPath)
		return p
	}
	p := path.Clean(filepath.ToSlash(s.Plan))
	if in, ok := inRepository(p); ok {
		return in
	}
	if s.Plan == "" || filepath.IsAbs(s.Plan) || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
		return defaultPlanPath
	}
	return p
}

// armCopy is where a path runs into an exported arm's contract files
// (target/perf-run/arms/perf-head/contract/perf/plan.toml).
var armCopy = "/" + contract.HeadArm + "/" + contract.ArmContractDir + "/"

// inRepository is p with an exported arm copy's folders taken off, and
// whether p ran into the copy.
func inRepository(p string) (string, bool) {
	if i := strings.LastIndex("/"+p, armCopy); i >= 0 {
		if rest := ("/" + p)[i+len(armCopy):]; rest != "" {
			return rest, true
		}
	}
	return p, false
}

func cell(s string) string {
	if s == "" {
		return "unknown"
	}
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
