package testbin

import (
	"context"
	"os"
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
