package testbin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Two builds of one program from two test binaries share one file, and
// the second does not link again: that is what keeps `go test ./...` from
// linking perfgate once per package.
func TestBuildSharesOneCurrentProgram(t *testing.T) {
	t.Setenv(Env, "")
	ctx := context.Background()
	const pkg = "github.com/perfgate/perfgate/internal/exampleservice/cmd/exampled"
	first, err := Build(ctx, pkg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Build(ctx, pkg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(second)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Fatalf("two builds gave %s and %s, want one shared program", first, second)
	}
	// A link writes a new file and moves it into place; go build only
	// touches a program that is current, which keeps the inode.
	if !os.SameFile(before, after) {
		t.Errorf("the second build replaced %s: it linked again", second)
	}
}

// A tool in a module of its own (as actiontest's wftool is) is shared and
// kept as the module's programs are, and a change to its source links it
// again: the kept program is never a stale one.
func TestBuildModuleSharesOneCurrentProgram(t *testing.T) {
	t.Setenv(Env, "")
	ctx := context.Background()
	mod := t.TempDir()
	write := func(says string) {
		t.Helper()
		files := map[string]string{
			"go.mod":  "module example.test/tool\n\ngo 1.22\n",
			"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"" + says + "\") }\n",
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A name of this test's own in the checkout's shared folder.
	name := "testbin-tool-" + filepath.Base(mod)
	build := func() (string, os.FileInfo, string) {
		t.Helper()
		bin, err := BuildModule(ctx, mod, name, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(bin) })
		fi, err := os.Stat(bin)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		return bin, fi, strings.TrimSpace(string(out))
	}
	write("one")
	first, before, said := build()
	if said != "one" {
		t.Fatalf("the tool said %q, want one", said)
	}
	second, after, _ := build()
	if first != second || !os.SameFile(before, after) {
		t.Errorf("the second build of an unchanged tool gave %s (the same file: %v), want %s kept", second, os.SameFile(before, after), first)
	}
	write("two")
	if _, _, said := build(); said != "two" {
		t.Errorf("after its source changed the tool said %q, want two: a stale program was kept", said)
	}
}
