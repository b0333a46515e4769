package contract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
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
	bash, err := exec.LookPath("bash")
	if err != nil {
		return exit.Refusef("building %s needs bash on PATH: install bash", c.Tree)
	}
	fmt.Fprintf(log, "perfgate: building %s: %s\n", c.Tree, c.Build)
	start := time.Now()
	cmd := exec.CommandContext(ctx, bash, "--noprofile", "--norc", "-c", c.Build)
	cmd.Dir = c.Tree
	cmd.Env = append(os.Environ(), "PERFGATE_OUT="+out, "PERFGATE_TREE="+c.Tree)
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

// keepContract copies what rendering and checking read (the gate file, the
// service config, the overrides or the legacy script, the plan) so the arm
// can be rendered after unpack without its tree.
func (c *Contract) keepContract(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clearing %s: %w", dir, err)
	}
	files := []string{GateFile, c.Config, c.Overrides, c.Plan}
	if c.Legacy != nil {
		files = append(files, c.Legacy.Script)
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
	c, err := Load(filepath.Join(armDir, ArmContractDir))
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
