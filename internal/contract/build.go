package contract

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

// The layout of a built arm's folder (target/perf-base/, target/perf-head/).
const (
	ArmBinDir      = "bin"      // the built binary, under its own base name
	ArmContractDir = "contract" // the tree's contract files, at their tree paths
)

// BuildArm runs the tree's own build command in the tree (bash -c, with
// PERFGATE_OUT set to outDir), then keeps the binary and the tree's contract
// side by side in outDir: bin/<binary> and contract/<the gate file and the
// files it names>. A failed build is exit 2: without both builds there is no
// pair to judge.
func (c *Contract) BuildArm(ctx context.Context, outDir string, log io.Writer) error {
	out, err := filepath.Abs(outDir)
	if err != nil {
		return fmt.Errorf("building %s: %w", c.Tree, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("building %s: making %s: %w", c.Tree, out, err)
	}
	cmd, err := c.buildCommand(ctx, out)
	if err != nil {
		return err
	}
	if c.BuildImage != "" {
		fmt.Fprintf(log, "perfgate: building %s in the image %s: %s\n", c.Tree, c.BuildImage, c.Build)
	} else {
		fmt.Fprintf(log, "perfgate: building %s: %s\n", c.Tree, c.Build)
	}
	start := time.Now()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("building %s: %w", c.Tree, ctx.Err())
		}
		return exit.Refusef("%s:%d: the build `%s` in %s failed: %v: fix the build or the build command", GateFile, c.lines["build"], c.Build, c.Tree, err)
	}
	bin := c.path(c.Binary)
	fi, err := os.Stat(bin)
	if err != nil || !fi.Mode().IsRegular() {
		return exit.Refusef("%s:%d: the build `%s` made no file %s in %s: make binary name what the build writes", GateFile, c.lines["binary"], c.Build, c.Binary, c.Tree)
	}
	dst := filepath.Join(out, ArmBinDir, path.Base(filepath.ToSlash(c.Binary)))
	if err := copyFile(bin, dst, 0o755); err != nil {
		return fmt.Errorf("keeping the built %s: %w", c.Binary, err)
	}
	if err := c.keepContract(filepath.Join(out, ArmContractDir)); err != nil {
		return err
	}
	fmt.Fprintf(log, "perfgate: built %s in %s\n", dst, time.Since(start).Round(time.Millisecond))
	return nil
}

// buildCommand is the build: bash -c in the tree on this machine, or, with
// build_image, bash -c in a container of that image, so the build's
// toolchain comes from the image and not from the machine perfgate runs on.
// The tree and the output folder are mounted at their own paths and the
// build runs in the tree, so every path the build sees, PERFGATE_OUT and
// PERFGATE_TREE included, is the same inside and out. The container is
// removed when the build ends and named after its output folder, so a
// cancelled build is stopped by name.
func (c *Contract) buildCommand(ctx context.Context, out string) (*exec.Cmd, error) {
	env := []string{"PERFGATE_OUT=" + out, "PERFGATE_TREE=" + c.Tree}
	if c.BuildImage == "" {
		bash, err := exec.LookPath("bash")
		if err != nil {
			return nil, exit.Refusef("building %s needs bash on PATH: install bash, or name a build_image in %s", c.Tree, GateFile)
		}
		cmd := exec.CommandContext(ctx, bash, "--noprofile", "--norc", "-c", c.Build)
		cmd.Dir = c.Tree
		cmd.Env = append(os.Environ(), env...)
		return cmd, nil
	}
	if !imageRefRe.MatchString(c.BuildImage) {
		return nil, exit.Refusef("%s:%d: build_image %q is not an image reference: write it like golang:1.26-bookworm or ghcr.io/owner/image@sha256:...", GateFile, c.lines["build_image"], c.BuildImage)
	}
	if _, err := exec.LookPath("docker"); err != nil {
		return nil, exit.Refusef("%s:%d: build_image %s needs the docker CLI on PATH and a docker engine: install docker, or build on this machine without build_image", GateFile, c.lines["build_image"], c.BuildImage)
	}
	name := "perfgate-build-" + strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(out))), 16) + "-" + strconv.Itoa(os.Getpid())
	args := []string{"run", "--rm", "--name", name, "--label", "perfgate.build=" + out,
		"-v", c.Tree + ":" + c.Tree, "--workdir", c.Tree}
	if !strings.HasPrefix(out+"/", c.Tree+"/") {
		args = append(args, "-v", out+":"+out)
	}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	args = append(args, "--entrypoint", "bash", c.BuildImage, "--noprofile", "--norc", "-c", c.Build)
	cmd := exec.CommandContext(ctx, "docker", args...)
	// A cancelled build stops its container, not only the docker CLI.
	cmd.Cancel = func() error {
		stop := exec.Command("docker", "rm", "--force", name)
		_ = stop.Run() // gone already is fine
		return cmd.Process.Kill()
	}
	return cmd, nil
}

// imageRefRe is what an image reference may look like: no spaces, not an
// option.
var imageRefRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._/:@+-]*$`)

// keepContract copies what rendering and checking read (the gate file, the
// service config, the overrides or the legacy script, the plan and the
// files it reads) so the arm
// can be rendered after unpack without its tree.
func (c *Contract) keepContract(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clearing %s: %w", dir, err)
	}
	files := []string{GateFile, c.Config, c.Overrides, c.Plan}
	files = append(files, planFiles(c.Tree, c.Plan)...)
	files = append(files, c.controlFiles()...)
	if c.Legacy != nil {
		files = append(files, c.Legacy.Script)
	}
	if c.gateFromHead {
		// A legacy tree has no gate file: the head's, read over it, is kept.
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(filepath.FromSlash(GateFile))), 0o755); err != nil {
			return fmt.Errorf("keeping the contract file %s: %w", GateFile, err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(GateFile)), c.gate, 0o644); err != nil {
			return fmt.Errorf("keeping the contract file %s: %w", GateFile, err)
		}
	}
	for _, f := range files {
		src := c.path(f)
		fi, err := os.Stat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("keeping the contract file %s: %w", f, err)
		}
		if err := copyFile(src, filepath.Join(dir, filepath.FromSlash(f)), fi.Mode().Perm()); err != nil {
			return fmt.Errorf("keeping the contract file %s: %w", f, err)
		}
	}
	return nil
}

// LoadArm reads a built arm's folder: the contract kept beside the binary,
// with Bin pointing at that binary.
func LoadArm(armDir string) (*Contract, error) {
	c, err := loadKept(filepath.Join(armDir, ArmContractDir))
	if err != nil {
		return nil, fmt.Errorf("reading the arm in %s: %w", armDir, err)
	}
	bin, err := filepath.Abs(filepath.Join(armDir, ArmBinDir, path.Base(filepath.ToSlash(c.Binary))))
	if err != nil {
		return nil, fmt.Errorf("reading the arm in %s: %w", armDir, err)
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, exit.Refusef("%s has no built binary %s: run `perfgate prepare` (or `perfgate unpack`) first", armDir, bin)
	}
	c.Bin = bin
	return c, nil
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}
