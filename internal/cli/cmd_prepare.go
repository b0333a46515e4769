package cli

import (
	"context"
	"fmt"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
)

// runPrepare is the build job (gate.Prepare): it prints the base's reason
// and where the arms are.
func runPrepare(ctx context.Context, s *IO, args []string) error {
	o, err := prepareOptions(s, args)
	if err != nil {
		return err
	}
	choice, err := gate.Prepare(ctx, o)
	if choice != nil {
		fmt.Fprintln(s.Out, choice.Reason)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "base arm: %s\nhead arm: %s\n", contract.Target(o.Out).Base(), contract.Target(o.Out).Head())
	return nil
}

func prepareOptions(s *IO, args []string) (gate.PrepareOptions, error) {
	fs := newFlags("prepare", s)
	var ef eventFlags
	ef.register(fs, "commit judged (default HEAD; the head arm is always built from the checkout)")
	o := gate.PrepareOptions{Log: s.Err}
	fs.StringVar(&o.Repo, "repo", ".", "the repository's checkout: the head's tree")
	fs.StringVar(&o.Out, "out", contract.DefaultTarget, "the folder that receives perf-base/ and perf-head/")
	if err := exit.ParseFlags(fs, args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, exit.Refusef("perfgate prepare: unexpected argument %q: name revisions with --head, --base-ref, --before or --tag", fs.Arg(0))
	}
	ev, err := ef.event(s)
	o.Event = ev
	return o, err
}
