package cli

import (
	"context"
	"fmt"

	"github.com/perfgate/perfgate/internal/check"
	"github.com/perfgate/perfgate/internal/exit"
)

// runCheck prints one line per check of internal/check, then exits with the
// first failure.
func runCheck(ctx context.Context, s *IO, args []string) error {
	o, err := checkOptions(s, args)
	if err != nil {
		return err
	}
	rep, err := check.Run(ctx, o)
	if err != nil {
		return err
	}
	for _, r := range rep.Results {
		fmt.Fprintln(s.Out, r.Line())
	}
	if rep.First != nil {
		fmt.Fprintf(s.Out, "%d check(s) failed; the first:\n", rep.Fails)
		return rep.First
	}
	fmt.Fprintln(s.Out, "every check passed")
	return nil
}

func checkOptions(s *IO, args []string) (check.Options, error) {
	fs := newFlags("check", s)
	var o check.Options
	fs.StringVar(&o.Repo, "repo", ".", "the repository's checkout (the head)")
	fs.StringVar(&o.Base, "base", "", "check only this commit's tree as the base arm (default: every base the events resolve to)")
	fs.StringVar(&o.BaseRef, "base-ref", "", "pull_request and merge_group: the base branch (default: main, master or origin/main, the first that exists)")
	fs.StringVar(&o.Tag, "tag", "", "release: the release's tag (default: the newest tag on HEAD; no tag skips the release base)")
	if err := exit.ParseFlags(fs, args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, exit.Refusef("perfgate check: unexpected argument %q: name the checkout with --repo", fs.Arg(0))
	}
	return o, nil
}
