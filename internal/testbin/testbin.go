// Package testbin builds the module's programs for tests that run them as
// real processes (perfgate, the example service, perfgate-verdictd), or
// takes them from PERFGATE_TEST_BIN: a folder .ci/test fills once for the
// whole suite, so a dozen test binaries do not each link the same 40 MB
// program while other packages' gates are measuring. It is a test helper:
// no command imports it.
package testbin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Env names the folder of prebuilt programs, each under its main
// package's last path element (perfgate, exampled, perfgate-verdictd).
const Env = "PERFGATE_TEST_BIN"

// Build returns the program of main package pkg (an import path): the
// prebuilt one in $PERFGATE_TEST_BIN when there is one, otherwise `go
// build` into dir. The caller must not change the file it gets: a
// prebuilt one is shared by every test of the suite.
func Build(ctx context.Context, pkg, dir string) (string, error) {
	name := filepath.Base(pkg)
	if d := os.Getenv(Env); d != "" {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	bin := filepath.Join(dir, name)
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}
