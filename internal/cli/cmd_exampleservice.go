package cli

import (
	"context"
	"errors"
	"flag"

	"github.com/perfgate/perfgate/internal/exampleservice"
	"github.com/perfgate/perfgate/internal/exit"
)

// example-service runs the bundled example service inside perfgate's own
// binary, so `perfgate demo` can start both arms by re-executing itself on
// a machine with nothing but the repository (no build step, no Go toolchain).

func runExampleService(ctx context.Context, s *IO, args []string) error {
	err := exampleservice.Main(ctx, args, s.Out, s.Err)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	// A service that cannot start is refused input or a broken environment,
	// never a regression.
	return exit.Refuse(err)
}
