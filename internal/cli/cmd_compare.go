package cli

import (
	"context"
	"fmt"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/report"
)

// runCompare is report.Rejudge over a report file: it prints the new
// judgement and writes the files asked for.
func runCompare(_ context.Context, s *IO, args []string) error {
	fs := newFlags("compare", s)
	path := fs.String("report", "", "the JSON report a gate wrote (target/perf/latest.json)")
	summary := fs.String("summary", "", "write the Markdown summary of the new judgement here")
	jsonOut := fs.String("json", "", "write the report with the new judgement here")
	var tols listFlag
	fs.Var(&tols, "tolerance", "KEY=PERCENT: a tolerance for a class (latency, cpu, throughput, memory, transactions) or a metric (p99.search); repeatable")
	rule := fs.String("rule", "", "judge by this rule instead of the report's own: paired or medians (docs/judge.md)")
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return exit.Refusef("compare: give the report to judge: perfgate compare --report target/perf/latest.json")
	}
	if fs.NArg() > 0 {
		return exit.Refusef("compare: unexpected argument %q: the report goes after --report", fs.Arg(0))
	}
	if err := report.CheckKind(*path); err != nil {
		return err
	}
	r, err := report.Read(*path)
	if err != nil {
		return err
	}
	before := r.Verdict
	if err := report.Rejudge(r, tols, *rule); err != nil {
		return err
	}
	if err := report.Text(s.Out, r); err != nil {
		return fmt.Errorf("writing the summary: %w", err)
	}
	if before.Code != r.Verdict.Code {
		fmt.Fprintf(s.Out, "\nThe report's own verdict was %s (exit %d); judged again it is %s (exit %d).\n", before.Word(), before.Code, r.Verdict.Word(), r.Verdict.Code)
	}
	if *summary != "" {
		if err := report.WriteMarkdownFile(*summary, r); err != nil {
			return err
		}
	}
	if *jsonOut != "" {
		if err := report.Write(*jsonOut, r); err != nil {
			return err
		}
	}
	return gate.VerdictError(r.Verdict)
}
