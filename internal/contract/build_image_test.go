package contract

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/testtier"
)

// build_image is read from the gate file; a value that is no image
// reference is refused naming the file and line before docker is asked.
func TestBuildImage(t *testing.T) {
	testtier.Heavy(t, testtier.Docker)
	tests := []struct {
		name, image, refusal string
	}{
		{"an option is no image", "--privileged", `perf/gate.toml:1: build_image "--privileged" is not an image reference`},
		{"spaces", "golang 1.26", `build_image "golang 1.26" is not an image reference`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := serviceTree(t, "port", "port = @PORT@\n", "SVC__LOG=info\n")
			files["perf/gate.toml"] = "build_image = \"" + tc.image + "\"\n" + files["perf/gate.toml"]
			c, err := Load(writeTree(t, files))
			if err != nil {
				t.Fatal(err)
			}
			if c.BuildImage != tc.image {
				t.Fatalf("BuildImage %q, want %q", c.BuildImage, tc.image)
			}
			err = c.BuildArm(context.Background(), t.TempDir(), io.Discard)
			if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), tc.refusal) {
				t.Errorf("BuildArm: %v, want a refusal saying %q", err, tc.refusal)
			}
		})
	}
}

// With build_image the build runs in that image: the tree and the output
// folder mounted at their own paths, the build's variables set, the
// container named so a cancelled build stops it.
func TestBuildImageCommand(t *testing.T) {
	testtier.Heavy(t, testtier.Docker)
	files := serviceTree(t, "port", "port = @PORT@\n", "SVC__LOG=info\n")
	files["perf/gate.toml"] = "build_image = \"golang:1.26-bookworm\"\n" + files["perf/gate.toml"]
	c, err := Load(writeTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Fatalf("the build_image command needs the docker CLI on PATH: %v", err)
	}
	out := filepath.Join(t.TempDir(), "perf-head")
	cmd, err := c.buildCommand(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	args := cmd.Args[1:]
	line := strings.Join(args, " ")
	for _, want := range []string{
		"run --rm --name perfgate-build-",
		"-v " + c.Tree + ":" + c.Tree, "--workdir " + c.Tree, "-v " + out + ":" + out,
		"-e PERFGATE_OUT=" + out, "-e PERFGATE_TREE=" + c.Tree,
		"--entrypoint bash golang:1.26-bookworm --noprofile --norc -c",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("docker %s\nlacks %q", line, want)
		}
	}
	if args[len(args)-1] != c.Build {
		t.Errorf("the build command %q is not passed as one word: %q", c.Build, args)
	}
	if !slices.Contains(args, "--label") {
		t.Errorf("the build container carries no label: %q", args)
	}
}
