package demo

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DockerReady says why no docker engine can run the dependency ("" when
// one can): the CLI, the engine, and a compose tool.
func DockerReady(ctx context.Context) string {
	if _, err := exec.LookPath("docker"); err != nil {
		return "no docker CLI on PATH"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		return fmt.Sprintf("no docker engine answers (%s)", firstLine(out, err))
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return ""
	}
	if err := exec.CommandContext(ctx, "docker", "compose", "version").Run(); err != nil {
		return "no compose tool (docker compose or docker-compose)"
	}
	return ""
}

// OwnerLabel labels the dependency's image with the demo process that
// built it, so a later demo removes what a killed one left.
const OwnerLabel = "perfgate.demo.owner"

// BuildImage builds the dependency's image FROM scratch around the perfgate
// binary, tagged with this process's id so two demos never share one, and
// labelled with owner. A binary linked against the C library (go run's
// default with cgo) brings its loader and libraries along, as ldd names
// them.
func BuildImage(ctx context.Context, binary, owner string) (tag string, remove func() error, err error) {
	dir, err := os.MkdirTemp("", "perfgate-demo-image-")
	if err != nil {
		return "", nil, fmt.Errorf("demo: building the dependency's image: %w", err)
	}
	defer os.RemoveAll(dir)
	copies := []string{"COPY perfgate /perfgate"}
	if err := copyFile(binary, filepath.Join(dir, "perfgate"), 0o755); err != nil {
		return "", nil, err
	}
	libs, err := sharedLibraries(ctx, binary)
	if err != nil {
		return "", nil, err
	}
	for i, lib := range libs {
		name := "lib" + strconv.Itoa(i)
		if err := copyFile(lib, filepath.Join(dir, name), 0o755); err != nil {
			return "", nil, err
		}
		copies = append(copies, "COPY "+name+" "+lib)
	}
	dockerfile := "FROM scratch\n" + strings.Join(copies, "\n") + "\nENTRYPOINT [\"/perfgate\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return "", nil, fmt.Errorf("demo: building the dependency's image: %w", err)
	}
	tag = "perfgate-demo-dependency:" + strconv.Itoa(os.Getpid())
	if out, err := exec.CommandContext(ctx, "docker", "build", "-q", "--label", OwnerLabel+"="+owner, "-t", tag, dir).CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("demo: docker build of the dependency's image: %s", firstLine(out, err))
	}
	remove = func() error {
		out, err := exec.Command("docker", "rmi", "-f", tag).CombinedOutput()
		if err != nil {
			return fmt.Errorf("demo: removing the image %s: %s", tag, firstLine(out, err))
		}
		return nil
	}
	return tag, remove, nil
}

// RemoveStaleImages removes the dependency images of demos whose owner gone
// reports as ended (a demo killed before its teardown) and returns their
// tags.
func RemoveStaleImages(ctx context.Context, gone func(owner string) bool) ([]string, error) {
	ids, err := exec.CommandContext(ctx, "docker", "images", "-q", "--filter", "label="+OwnerLabel).Output()
	if err != nil {
		return nil, fmt.Errorf("demo: listing earlier demos' images: %w", err)
	}
	var removed []string
	seen := map[string]bool{}
	for _, id := range strings.Fields(string(ids)) {
		if seen[id] {
			continue
		}
		seen[id] = true
		out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "--format",
			`{{index .Config.Labels "`+OwnerLabel+`"}}{{range .RepoTags}} {{.}}{{end}}`, id).Output()
		if err != nil {
			continue // removed meanwhile
		}
		fields := strings.Fields(string(out))
		if len(fields) < 2 || !gone(fields[0]) {
			continue
		}
		for _, tag := range fields[1:] {
			if out, err := exec.CommandContext(ctx, "docker", "rmi", "-f", tag).CombinedOutput(); err != nil {
				return removed, fmt.Errorf("demo: removing the image %s a killed demo left: %s", tag, firstLine(out, err))
			}
			removed = append(removed, tag)
		}
	}
	return removed, nil
}

// sharedLibraries lists the files a dynamically linked binary loads
// (absolute paths, the loader included); none for a static one.
func sharedLibraries(ctx context.Context, binary string) ([]string, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return nil, fmt.Errorf("demo: reading %s: %w", binary, err)
	}
	defer f.Close()
	dynamic := false
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			dynamic = true
		}
	}
	if !dynamic {
		return nil, nil
	}
	out, err := exec.CommandContext(ctx, "ldd", binary).Output()
	if err != nil {
		return nil, fmt.Errorf("demo: %s is dynamically linked and ldd cannot list its libraries (%w): build perfgate with CGO_ENABLED=0", binary, err)
	}
	var libs []string
	for _, line := range strings.Split(string(out), "\n") {
		for _, field := range strings.Fields(line) {
			if strings.HasPrefix(field, "/") {
				libs = append(libs, field)
			}
		}
	}
	return libs, nil
}

func copyFile(from, to string, mode os.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("demo: copying %s into the image: %w", from, err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		return fmt.Errorf("demo: copying %s into the image: %w", from, err)
	}
	return nil
}

func firstLine(out []byte, err error) string {
	line, _, _ := strings.Cut(string(bytes.TrimSpace(out)), "\n")
	if line == "" {
		return err.Error()
	}
	return err.Error() + ": " + line
}
