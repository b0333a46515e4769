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
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return exit.Refusef("perfgate merge: no shard report given; write perfgate merge --out merged.json shard-0.json shard-1.json ...")
	}
	m, err := experiment.MergeFiles(fs.Args(), *previous)
	if err != nil {
		return err
	}
	return experiment.Finish(s.Out, m, *out, *htmlOut)
}
