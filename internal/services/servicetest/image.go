// Package servicetest makes the one image the services tests run: the echo
// server from a static Go binary in a FROM scratch image, since this machine
// has no image registry to pull from.
package servicetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfgate/perfgate/internal/scratchimage"
	"github.com/perfgate/perfgate/internal/testtier"
)

var (
	once  sync.Once
	image string
	err   error
)

// Image builds the echo image once per test binary and returns its tag.
// Call Cleanup from TestMain to remove it.
func Image(t testing.TB) string {
	t.Helper()
	testtier.Heavy(t, testtier.Docker)
	once.Do(func() { image, err = build() })
	if err != nil {
		t.Fatalf("building the test image: %v (needs a running docker engine and the docker CLI)", err)
	}
	return image
}

// Cleanup removes the image when one was built.
func Cleanup() {
	if image != "" {
		_ = exec.Command("docker", "rmi", "-f", image).Run()
	}
}

func build() (string, error) {
	if out, err := exec.Command("docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		return "", fmt.Errorf("docker engine not reachable: %v: %s", err, bytes.TrimSpace(out))
	}
	// The module's root from go itself: this file's own path is no guide
	// under -trimpath (.ci/test sets it), and the caller's folder varies.
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(gomod)) == "" || strings.TrimSpace(string(gomod)) == os.DevNull {
		return "", fmt.Errorf("finding the module's go.mod (go env GOMOD): %v %q", err, gomod)
	}
	src := filepath.Join(filepath.Dir(strings.TrimSpace(string(gomod))), "internal", "services", "testdata", "echo")
	dir, err := os.MkdirTemp("", "perfgate-echo-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("go", "build", "-ldflags=-s -w", "-o", filepath.Join(dir, "echo"), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build of the echo server: %v: %s", err, out)
	}
	// One docker import, not a docker build: every test binary that runs
	// the services' tests makes this image of the same bytes, and with the
	// build cache's shared step images one binary's Cleanup could cut
	// another's build (internal/scratchimage).
	tag := fmt.Sprintf("perfgate-services-test:%d", os.Getpid())
	if err := scratchimage.Import(context.Background(), scratchimage.Options{
		Tag: tag, Files: []scratchimage.File{{Path: "/echo", From: filepath.Join(dir, "echo"), Mode: 0o755}}, Entrypoint: []string{"/echo"},
	}); err != nil {
		return "", err
	}
	return tag, nil
}
