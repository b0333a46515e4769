package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment"
)

func init() {
	register(Command{Name: "merge", Summary: "merge the shard reports of one experiment exactly (HDR histograms merge) and judge the whole; --side-by-side sets repeated runs beside each other", Run: runMerge})
}

func runMerge(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("merge", s)
	out := fs.String("out", "", "write the merged JSON report to this `file`")
	htmlOut := fs.String("html", "", "write the merged HTML report to this `file`")
	previous := fs.String("previous", "", "compare the merged knee with this earlier JSON report `file`")
	side := fs.Bool("side-by-side", false, "set the reports (repeated runs of one experiment) side by side instead of adding them: a table and a chart per figure, the knee's spread")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return exit.Refusef("perfgate merge: no shard report given; write perfgate merge --out merged.json shard-0.json shard-1.json ...")
	}
	var reps []*experiment.Report
	for _, f := range fs.Args() {
		r, err := experiment.ReadFile(f)
		if err != nil {
			return exit.Refuse(fmt.Errorf("perfgate merge: %w", err))
		}
		reps = append(reps, r)
	}
	if *side {
		if *previous != "" {
			return exit.Refusef("perfgate merge --side-by-side: --previous compares one run; drop it, or merge without --side-by-side")
		}
		sb, err := experiment.SideBySideOf(reps, fs.Args())
		if err != nil {
			return exit.Refuse(fmt.Errorf("perfgate merge --side-by-side: %w", err))
		}
		return finishSideBySide(s, sb, *out, *htmlOut)
	}
	m, err := experiment.Merge(reps)
	if err != nil {
		return exit.Refuse(fmt.Errorf("perfgate merge: %w", err))
	}
	if *previous != "" {
		prev, err := experiment.ReadFile(*previous)
		if err != nil {
			return exit.Refuse(fmt.Errorf("perfgate merge --previous: %w", err))
		}
		experiment.Compare(m, prev, *previous)
	}
	return finishExperiment(s, m, *out, *htmlOut)
}

// finishSideBySide prints and writes runs set side by side; the exit code
// is the worst run's, as finishExperiment maps one run's.
func finishSideBySide(s *IO, sb *experiment.SideBySide, out, htmlOut string) error {
	if err := experiment.WriteSideBySide(s.Out, sb); err != nil {
		return fmt.Errorf("writing the side-by-side summary: %w", err)
	}
	if out != "" {
		if err := sb.WriteFile(out); err != nil {
			return err
		}
	}
	if htmlOut != "" {
		if err := experiment.WriteSideBySideHTMLFile(htmlOut, sb); err != nil {
			return err
		}
	}
	switch sb.Exit {
	case 0:
		return nil
	case 1:
		return exit.Regressionf("perfgate experiment: a run failed: %s", strings.Join(sb.Verdicts, "; "))
	default:
		return exit.Refusef("perfgate experiment: a run could not answer: %s", strings.Join(sb.Verdicts, "; "))
	}
}
