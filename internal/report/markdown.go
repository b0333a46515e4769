package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
)

// Mark is the sign a Markdown summary puts before a verdict of this exit
// code (exit.Pass, exit.Regression, exit.CannotJudge); "" for any other
// code, which no verdict has.
func Mark(code int) string {
	switch code {
	case exit.Pass:
		return "✅"
	case exit.Regression:
		return "❌"
	case exit.CannotJudge:
		return "⚠️"
	}
	return ""
}

// Markdown writes the GitHub job summary of r: the verdict and its
// reasons, base and head, the idle figures against their limits, a table
// of every metric, the notes and a Mermaid chart of per-pair latency.
func Markdown(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	v := r.Verdict
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }

	p("## %s perfgate: %s\n\n", Mark(int(v.Code)), exitLine(v))
	if r.Rejudged {
		p("_Judged again offline by `perfgate compare`, tolerances: %s._\n\n", tolerances(r.Input))
	}
	switch {
	case len(v.CannotJudge) > 0 && v.Code == judge.Regression:
		// An idle failure or a wrong status stands over phases that
		// cannot be judged (docs/judge.md).
		p("**The load phases cannot be judged**, but the failures below stand whatever the runner did:\n\n")
		bullets(bw, v.CannotJudge)
	case len(v.CannotJudge) > 0:
		p("**Cannot judge:** this run says nothing about the code.\n\n")
		bullets(bw, v.CannotJudge)
	}
	if len(v.Failures) > 0 {
		p("**Failures:**\n\n")
		bullets(bw, v.Failures)
	}

	p("| | |\n|---|---|\n")
	p("| base | %s |\n", cell(armLine(r.Base)))
	if r.BaseNote != "" {
		p("| why this base | %s |\n", cell(r.BaseNote))
	}
	p("| head | %s |\n", cell(armLine(r.Head)))
	if r.Variant != nil {
		p("| variant | %s |\n", cell(variantLine(*r.Variant)))
	}
	p("| run | %s |\n", cell(settingsLine(r.Settings, v.Idle != nil)))
	p("| rule | %s |\n", cell(ruleLine(v.Rule)))
	p("| groups compared | %s |\n", cell(comparedLine(r)))
	if r.Attempt > 0 || r.CPUModel != "" {
		p("| attempt | %d on %s |\n", r.Attempt, cell(orUnknown(r.CPUModel)))
	}
	p("| tool | %s, report version %d, %s |\n\n", cell(r.Tool), Version, r.Created.UTC().Format("2006-01-02 15:04 UTC"))
	judgingMarkdown(bw, r.Judging)

	p("### Idle\n\n")
	if v.Idle == nil {
		p("No idle phase ran.\n\n")
	} else {
		id := v.Idle
		p("The head alone, %.0f s with no request; the limits are absolute.\n\n", id.Seconds)
		p("| figure | head | limit | |\n|---|---:|---:|---|\n")
		p("| CPU | %s of one core | under %s | %s |\n", pct2(id.CPU), pct2(id.CPULimit), okFail(id.CPUFail))
		if id.StoreMeasured {
			p("| store commits | %s/s | under %s/s | %s |\n", num(id.TxPerSec), num(id.TxLimit), okFail(id.TxFail))
		} else {
			p("| store commits | not measured (no store) | under %s/s | |\n", num(id.TxLimit))
		}
		p("\n")
	}

	if len(v.Metrics) > 0 {
		p("### Metrics\n\n")
		p("%s\n\n", ruleExplained(v, len(r.Input.Base)))
		p("| metric | base | head | ratio | worse | tolerance | floor | threshold | pairs breached | interval | samples | catches | |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|\n")
		for _, m := range v.Metrics {
			out := outcome(m)
			if m.Fail {
				out = "**FAIL**"
			}
			p("| %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				cell(m.ID), unitLabel(m.Unit), value(m.Unit, m.Base), value(m.Unit, m.Head), ratio(m), worsePct(m),
				pct(m.Tolerance), pct(m.Floor), pct(m.Threshold), pairsBreached(m), interval(m.CI), samples(m), catches(m), out)
		}
		p("\n")
	}

	if len(v.LeftOut) > 0 {
		p("### Groups left out\n\n")
		bullets(bw, v.LeftOut)
	}

	if len(v.Thresholds) > 0 {
		p("### Thresholds\n\n")
		p("The plan's absolute limits, on the head over all its measured windows.\n\n")
		p("| plan line | threshold | |\n|---:|---|---|\n")
		for _, t := range v.Thresholds {
			p("| %d | %s | %s |\n", t.Line, cell(t.Says), okFail(t.Fail))
		}
		p("\n")
	}

	notes := append([]string(nil), v.Notes...)
	for _, m := range v.Metrics {
		notes = append(notes, metricNotes(m)...)
	}
	if n := intervalNote(v); n != "" {
		notes = append(notes, n)
	}
	if len(notes) > 0 {
		p("### Notes\n\n")
		bullets(bw, notes)
	}

	if charts := latencyCharts(r); charts != "" {
		p("### Latency per pair\n\n")
		p("Bars are the base, the line is the head; each point is one group in one pair.\n\n")
		p("%s", charts)
	}
	return bw.Flush()
}

func bullets(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(w, "- %s\n", l)
	}
	fmt.Fprintln(w)
}

// cell keeps a value from breaking a Markdown table row.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func okFail(fail bool) string {
	if fail {
		return "**FAIL**"
	}
	return "ok"
}

// pct2 keeps two decimals, since idle limits are small fractions.
func pct2(f float64) string { return fmt.Sprintf("%.2f %%", f*100) }

func orUnknown(s string) string {
	if s == "" {
		return "an unknown CPU model"
	}
	return s
}

// tolerances lists the tolerances an input sets, or "the defaults".
func tolerances(in judge.Input) string {
	if len(in.Tolerance) == 0 {
		return "the defaults"
	}
	var parts []string
	for _, k := range sortedKeys(in.Tolerance) {
		parts = append(parts, fmt.Sprintf("%s %s", k, pct(in.Tolerance[k])))
	}
	return strings.Join(parts, ", ")
}
