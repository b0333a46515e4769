package cli

import (
	"context"
	"fmt"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment"
)

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
	var reps []*experiment.Report
	for _, f := range fs.Args() {
		r, err := experiment.ReadFile(f)
		if err != nil {
			return exit.Refuse(fmt.Errorf("perfgate merge: %w", err))
		}
		reps = append(reps, r)
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
	return experiment.Finish(s.Out, m, *out, *htmlOut)
}
