package demo

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/scratchimage"
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

// BuildImage makes the dependency's image, FROM scratch around the perfgate
// binary (internal/scratchimage: one docker import, no build steps another
// demo's teardown could cut), tagged with this process's id so two demos
// never share one, and labelled with owner. A binary linked against the C
// library (go run's default with cgo) brings its loader and libraries
// along, as ldd names them.
func BuildImage(ctx context.Context, binary, owner string) (tag string, remove func() error, err error) {
	files := []scratchimage.File{{Path: "/perfgate", From: binary, Mode: 0o755}}
	libs, err := sharedLibraries(ctx, binary)
	if err != nil {
		return "", nil, err
	}
	for _, lib := range libs {
		files = append(files, scratchimage.File{Path: lib, From: lib, Mode: 0o755})
	}
	tag = "perfgate-demo-dependency:" + strconv.Itoa(os.Getpid())
	if err := scratchimage.Import(ctx, scratchimage.Options{
		Tag: tag, Files: files, Entrypoint: []string{"/perfgate"}, Labels: map[string]string{OwnerLabel: owner},
	}); err != nil {
		return "", nil, fmt.Errorf("demo: the dependency's image: %w", err)
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

func firstLine(out []byte, err error) string {
	line, _, _ := strings.Cut(string(bytes.TrimSpace(out)), "\n")
	if line == "" {
		return err.Error()
	}
	return err.Error() + ": " + line
}
