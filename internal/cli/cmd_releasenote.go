package cli

import (
	"context"
	"fmt"

	"github.com/perfgate/perfgate/internal/base"
	"github.com/perfgate/perfgate/internal/exit"
)

func runReleaseNote(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("release-note", s)
	file := fs.String("base-file", base.DefaultFile, "the base.md the gate wrote")
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return exit.Refusef("perfgate release-note: unexpected argument %q: name the file with --base-file", fs.Arg(0))
	}
	c, err := base.ReadFile(*file)
	if err != nil {
		return err
	}
	fmt.Fprintln(s.Out, c.Note)
	return nil
}
