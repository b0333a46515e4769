package cli

import (
	"context"
	"fmt"
)

// Version is set at build time with -ldflags "-X .../internal/cli.Version=v1.2.3".
var Version = "dev"

func init() {
	register(Command{Name: "version", Summary: "print perfgate's version", Run: func(_ context.Context, s *IO, _ []string) error {
		_, err := fmt.Fprintln(s.Out, "perfgate", Version)
		return err
	}})
}
