package report

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Text writes the terminal summary of r: the verdict first, since that is
// what a developer at a terminal looks for, then the reasons and a table.
func Text(w io.Writer, r *Report) error {
	v := r.Verdict
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }

	p("perfgate: %s\n", exitLine(v))
	if r.Rejudged {
		p("  judged again offline; tolerances: %s\n", tolerances(r.Input))
	}
	p("  base\t%s\n", armLine(r.Base))
	if r.BaseNote != "" {
		p("  \t%s\n", r.BaseNote)
	}
	p("  head\t%s\n", armLine(r.Head))
	if r.Variant != nil {
		p("  variant\t%s\n", variantLine(*r.Variant))
	}
	p("  run\t%s\n", settingsLine(r.Settings, v.Idle != nil))
	p("  rule\t%s\n", ruleLine(v.Rule))
	p("  groups compared\t%s\n", comparedLine(r))
	if r.Attempt > 0 || r.CPUModel != "" {
		p("  attempt\t%d on %s\n", r.Attempt, orUnknown(r.CPUModel))
	}
	if id := v.Idle; id != nil {
		store := "store not measured"
		if id.StoreMeasured {
			store = fmt.Sprintf("store %s commits/s (under %s) %s", num(id.TxPerSec), num(id.TxLimit), okFail(id.TxFail))
		}
		p("  idle\t%.0f s: CPU %s of one core (under %s) %s; %s\n", id.Seconds, pct2(id.CPU), pct2(id.CPULimit), okFail(id.CPUFail), store)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	list(w, "cannot judge", v.CannotJudge)
	list(w, "failures", v.Failures)
	list(w, "groups left out", v.LeftOut)
	list(w, "settings the head changed", judgingLines(r.Judging))
	var ths []string
	for _, t := range v.Thresholds {
		ths = append(ths, t.Says+" "+okFail(t.Fail))
	}
	list(w, "thresholds", ths)

	if len(v.Metrics) > 0 {
		fmt.Fprintln(w)
		var table bytes.Buffer
		tw = tabwriter.NewWriter(&table, 0, 0, 2, ' ', tabwriter.AlignRight)
		// The writer aligns every column right; padding the first and last
		// columns to one width keeps them reading left-aligned.
		idW, outW := len("metric"), 0
		for _, m := range v.Metrics {
			idW = max(idW, len(m.ID))
			outW = max(outW, len(outcome(m)))
		}
		fmt.Fprintf(tw, "%-*s\tunit\tbase\thead\tratio\tworse\ttolerance\tfloor\tthreshold\tpairs\tinterval\tsamples\tcatches\t%*s\t\n", idW, "metric", outW, "")
		for _, m := range v.Metrics {
			fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%-*s\t\n", idW, m.ID, unitLabel(m.Unit), value(m.Unit, m.Base), value(m.Unit, m.Head),
				ratio(m), worsePct(m), pct(m.Tolerance), pct(m.Floor), pct(m.Threshold), pairsBreached(m), interval(m.CI), samples(m), catches(m), outW, outcome(m))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, line := range strings.SplitAfter(table.String(), "\n") {
			if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+strings.Repeat("\n", strings.Count(line, "\n"))); err != nil {
				return err
			}
		}
	}

	notes := append([]string(nil), v.Notes...)
	for _, m := range v.Metrics {
		notes = append(notes, metricNotes(m)...)
	}
	if n := intervalNote(v); n != "" {
		notes = append(notes, n)
	}
	list(w, "notes", notes)
	return nil
}

func list(w io.Writer, title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	for _, l := range lines {
		fmt.Fprintf(w, "  - %s\n", l)
	}
}

func sortedKeys(m map[string]float64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
