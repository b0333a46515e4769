package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
)

func runPack(_ context.Context, s *IO, args []string) error {
	fs := newFlags("pack", s)
	dir := fs.String("dir", contract.DefaultTarget, "the folder holding perf-base/ and perf-head/")
	out := fs.String("out", "perf-arms.tar.gz", "the archive to write")
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return exit.Refusef("perfgate pack: unexpected argument %q: name the archive with --out", fs.Arg(0))
	}
	if err := contract.Pack(*dir, *out); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "packed %s and %s into %s\n", filepath.Join(*dir, contract.BaseArm), filepath.Join(*dir, contract.HeadArm), *out)
	return nil
}

func runUnpack(_ context.Context, s *IO, args []string) error {
	fs := newFlags("unpack", s)
	dir := fs.String("dir", contract.DefaultTarget, "the folder that receives perf-base/ and perf-head/")
	in := fs.String("in", "perf-arms.tar.gz", "the archive `perfgate pack` wrote")
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return exit.Refusef("perfgate unpack: unexpected argument %q: name the archive with --in", fs.Arg(0))
	}
	if err := contract.Unpack(*in, *dir); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "unpacked %s into %s and %s\n", *in, filepath.Join(*dir, contract.BaseArm), filepath.Join(*dir, contract.HeadArm))
	return nil
}
