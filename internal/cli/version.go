package cli

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Version is set at build time with -ldflags "-X
// github.com/perfgate/perfgate/internal/cli.Version=v1.2.3" (the
// Dockerfile's VERSION); "dev" when nothing set it.
var Version = "dev"

func runVersion(_ context.Context, s *IO, _ []string) error {
	_, err := fmt.Fprintln(s.Out, "perfgate", version(Version, debug.ReadBuildInfo))
	return err
}

// version is the stamped version, else the module version `go install
// github.com/perfgate/perfgate/cmd/perfgate@v1.2.3` records, else "dev".
func version(stamped string, info func() (*debug.BuildInfo, bool)) string {
	if stamped != "dev" && stamped != "" {
		return stamped
	}
	if bi, ok := info(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
