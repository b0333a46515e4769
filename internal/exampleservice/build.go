package exampleservice

import (
	"context"
	"fmt"
	"os"

	"github.com/perfgate/perfgate/internal/testbin"
)

// Package is the example service's main package, for `go build`.
const Package = "github.com/perfgate/perfgate/internal/exampleservice/cmd/exampled"

// Build compiles the example service into dir and returns the binary's
// path, for tests and benchmarks that start it as a real process (the
// Go toolchain must be on PATH, and the working directory inside the module).
// A suite-wide prebuilt one (testbin.Env) is used when there is one.
func Build(ctx context.Context, dir string) (string, error) {
	bin, err := testbin.Build(ctx, Package, dir)
	if err != nil {
		return "", fmt.Errorf("building the example service: %w", err)
	}
	return bin, nil
}

// RunTests builds the example service into a temporary folder, sets *bin to
// the binary, runs the package's tests and removes the folder; it returns
// the tests' exit code. It is the TestMain of every package whose tests
// start the service as a real arm (m is the *testing.M).
func RunTests(m interface{ Run() int }, bin *string) int {
	dir, err := os.MkdirTemp("", "exampled-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "making a folder for the example service:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	if *bin, err = Build(context.Background(), dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return m.Run()
}
