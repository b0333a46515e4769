// Package testbin builds the module's programs for tests that run them as
// real processes (perfgate, the example service, perfgate-verdictd), or
// takes them from PERFGATE_TEST_BIN: a folder .ci/test fills once for the
// whole suite, so a dozen test binaries do not each link the same 40 MB
// program while other packages' gates are measuring. It is a test helper:
// no command imports it.
package testbin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Env names the folder of prebuilt programs, each under its main
// package's last path element (perfgate, exampled, perfgate-verdictd).
const Env = "PERFGATE_TEST_BIN"

// Build returns the program of main package pkg (an import path): the
// prebuilt one in $PERFGATE_TEST_BIN when there is one, otherwise one
// `go build` writes into a folder shared by every test binary of this
// checkout. go build does not link again a program whose build ID is
// current, so the packages of one `go test ./...` link each program once
// between them, not once each. The caller must not change the file it
// gets: it is shared. dir is used only when the shared folder cannot be
// made.
func Build(ctx context.Context, pkg, dir string) (string, error) {
	name := filepath.Base(pkg)
	if p, ok := prebuilt(name); ok {
		return p, nil
	}
	return build(ctx, "", pkg, name, dir)
}

// BuildModule is Build for the main package in folder mod, the root of a
// module of its own (a tool under testdata whose dependencies the main
// module cannot hold), named name. It too is linked once per checkout and
// kept while current, where a folder of the test's own would link it
// again at every run.
func BuildModule(ctx context.Context, mod, name, dir string) (string, error) {
	if p, ok := prebuilt(name); ok {
		return p, nil
	}
	return build(ctx, mod, ".", name, dir)
}

// prebuilt is the program name in $PERFGATE_TEST_BIN, if it is there.
func prebuilt(name string) (string, bool) {
	d := os.Getenv(Env)
	if d == "" {
		return "", false
	}
	p := filepath.Join(d, name)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		return p, true
	}
	return "", false
}

// build runs go build for pkg in folder in (the working directory when
// empty) into the shared folder, or dir when there is none.
func build(ctx context.Context, in, pkg, name, dir string) (string, error) {
	if shared, err := sharedDir(); err == nil {
		dir = shared
	}
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir = in
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", filepath.Join(in, pkg), err, out)
	}
	return bin, nil
}

// sharedDir is a folder under the temporary directory named for this
// checkout's module root, so two clones tested side by side do not link
// over each other's programs. It is in the temporary directory because go
// build moves its output there from its own work folder, also there: a
// rename, which a test running the old program does not notice.
func sharedDir() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(root))
	d := filepath.Join(os.TempDir(), "perfgate-testbin-"+strconv.Itoa(os.Getuid()), hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("making the shared folder of test programs: %w", err)
	}
	return d, nil
}

// moduleRoot is the folder holding go.mod above the working directory
// (go test runs each package's tests in its own folder).
func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		d = up
	}
}
