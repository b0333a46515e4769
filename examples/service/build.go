package service

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// Package is the example service's main package, for `go build`.
const Package = "github.com/perfgate/perfgate/examples/service/cmd/exampled"

// Build compiles the example service into dir and returns the binary's
// path, for tests and benchmarks that start it as a real process (the
// Go toolchain must be on PATH, and the working directory inside the module).
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "exampled")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, Package).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the example service: %w\n%s", err, out)
	}
	return bin, nil
}
