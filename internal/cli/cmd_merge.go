package cli

import (
	"context"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment"
)

// runMerge is experiment.MergeFiles and Finish over the shard reports given.
func runMerge(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("merge", s)
	out := fs.String("out", "", "write the merged JSON report to this `file`")
	htmlOut := fs.String("html", "", "write the merged HTML report to this `file`")
	previous := fs.String("previous", "", "compare the merged knee with this earlier JSON report `file`")
	side := fs.Bool("side-by-side", false, "set the reports (repeated runs of one experiment) side by side instead of adding them: a table and a chart per figure, the knee's spread")
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return exit.Refusef("perfgate merge: no shard report given; write perfgate merge --out merged.json shard-0.json shard-1.json ...")
	}
	if *side {
		if *previous != "" {
			return exit.Refusef("perfgate merge --side-by-side: --previous compares one run; drop it, or merge without --side-by-side")
		}
		sb, err := experiment.SideBySideFiles(fs.Args())
		if err != nil {
			return err
		}
		return experiment.FinishSideBySide(s.Out, sb, *out, *htmlOut)
	}
	m, err := experiment.MergeFiles(fs.Args(), *previous)
	if err != nil {
		return err
	}
	return experiment.Finish(s.Out, m, *out, *htmlOut)
}
