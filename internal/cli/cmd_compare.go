package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
	gatepkg "github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/report"
)

func init() {
	register(Command{Name: "compare", Summary: "judge a JSON report again offline, tolerances overridable", Run: runCompare})
}

func runCompare(_ context.Context, s *IO, args []string) error {
	fs := newFlags("compare", s)
	path := fs.String("report", "", "the JSON report a gate wrote (target/perf/latest.json)")
	summary := fs.String("summary", "", "write the Markdown summary of the new judgement here")
	jsonOut := fs.String("json", "", "write the report with the new judgement here")
	var tols listFlag
	fs.Var(&tols, "tolerance", "KEY=PERCENT: a tolerance for a class (latency, cpu, throughput, memory, transactions) or a metric (p99.search); repeatable")
	rule := fs.String("rule", "", "judge by this rule instead of the report's own: paired or medians (docs/judge.md)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return exit.Refusef("compare: give the report to judge: perfgate compare --report target/perf/latest.json")
	}
	if fs.NArg() > 0 {
		return exit.Refusef("compare: unexpected argument %q: the report goes after --report", fs.Arg(0))
	}
	if err := gateReportKind(*path); err != nil {
		return err
	}
	r, err := report.Read(*path)
	if err != nil {
		return err
	}
	before := r.Verdict
	tol, err := overrideTolerances(r.Input, tols)
	if err != nil {
		return err
	}
	r.Input.Tolerance = tol
	if *rule != "" {
		name, _ := judge.CanonicalRule(*rule) // the medians rule's former name is still read
		if !slices.Contains(judge.Rules, name) {
			return exit.Refusef("compare: --rule %q: write --rule paired or --rule medians", *rule)
		}
		r.Input.Rule = name
	}
	r.Verdict = judge.Judge(r.Input)
	// The after-run checks compare with what was sent, not with a
	// tolerance: their lines and their effect on the verdict (a failed
	// check of the head is a regression, a control that did not fail is
	// cannot judge) carry over as the gate applied them.
	if c := r.Controls; c != nil {
		r.Verdict.AddChecks(c.Failures, c.CannotJudge, c.Notes)
	}
	r.Rejudged = true

	if err := report.Text(s.Out, r); err != nil {
		return fmt.Errorf("writing the summary: %w", err)
	}
	if before.Code != r.Verdict.Code {
		fmt.Fprintf(s.Out, "\nThe report's own verdict was %s (exit %d); judged again it is %s (exit %d).\n", before.Word(), before.Code, r.Verdict.Word(), r.Verdict.Code)
	}
	if *summary != "" {
		if err := writeCompareSummary(*summary, r); err != nil {
			return err
		}
	}
	if *jsonOut != "" {
		if err := report.Write(*jsonOut, r); err != nil {
			return err
		}
	}
	return gatepkg.VerdictError(r.Verdict)
}

// gateReportKind refuses a report of another kind, such as the one
// `perfgate load --out` writes, which would otherwise be read as a gate's
// report that "names no metric". A file that cannot be read or parsed is
// left to report.Read, which says why.
func gateReportKind(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(b, &head) != nil || head.Kind == "" {
		return nil
	}
	if head.Kind == load.ReportKind {
		return exit.Refusef("compare: %s is a `perfgate load` report (kind %q): it measured one target and holds no base and head to judge; give the report of an A/B gate (`perfgate ab` or `perfgate run` write latest.json)", path, head.Kind)
	}
	return exit.Refusef("compare: %s is a report of kind %q, not an A/B gate's report; give the latest.json that `perfgate ab` or `perfgate run` wrote", path, head.Kind)
}

// overrideTolerances lays the command line's tolerances over the report's.
// A key must name a class or a metric of this report, so a typo is refused
// rather than silently judged with the default.
func overrideTolerances(in judge.Input, flags []string) (map[string]float64, error) {
	out := maps.Clone(in.Tolerance)
	if out == nil {
		out = map[string]float64{}
	}
	known := map[string]bool{}
	for _, c := range judge.Classes {
		known[string(c)] = true
	}
	for _, m := range in.Metrics {
		known[m.ID] = true
	}
	for _, f := range flags {
		key, val, ok := strings.Cut(f, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, exit.Refusef("compare: --tolerance %q: write KEY=PERCENT, e.g. --tolerance latency=30 or --tolerance p99.search=40", f)
		}
		if !known[key] {
			return nil, exit.Refusef("compare: --tolerance %q: %q is no class and no metric of this report; the classes are %s and the metrics %s", f, key, compareClasses(), compareMetricIDs(in))
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(val), "%"), 64)
		if err != nil || pct < 0 || pct != pct || pct > 1e6 {
			return nil, exit.Refusef("compare: --tolerance %q: the tolerance is a percentage of 0 or more, e.g. %s=30", f, key)
		}
		out[key] = pct / 100
	}
	return out, nil
}

func compareClasses() string {
	s := make([]string, len(judge.Classes))
	for i, c := range judge.Classes {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

func compareMetricIDs(in judge.Input) string {
	s := make([]string, len(in.Metrics))
	for i, m := range in.Metrics {
		s[i] = m.ID
	}
	return strings.Join(s, ", ")
}

// writeCompareSummary writes the Markdown summary of r to path.
func writeCompareSummary(path string, r *report.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the summary: %w", err)
	}
	if err := report.Markdown(f, r); err != nil {
		f.Close()
		return fmt.Errorf("writing the summary %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the summary %s: %w", path, err)
	}
	return nil
}
