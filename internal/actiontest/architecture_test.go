package actiontest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/architecture.md's table names every package of the module outside
// bench/, and nothing else: a package added, renamed or removed without
// the doc fails here.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "./internal/...", "./cmd/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var listed []string
	for _, p := range strings.Fields(string(out)) {
		listed = append(listed, strings.TrimPrefix(p, "github.com/perfgate/perfgate/"))
	}
	// A row's first cell: `internal/a`, `internal/b` | ...
	cell := regexp.MustCompile("(?m)^\\| ((?:`[^`]+`(?:, )?)+) \\|")
	name := regexp.MustCompile("`([^`]+)`")
	var named []string
	for _, m := range cell.FindAllStringSubmatch(string(doc), -1) {
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			named = append(named, n[1])
		}
	}
	for _, p := range listed {
		if !slices.Contains(named, p) {
			t.Errorf("docs/architecture.md has no row for %s (go list names it)", p)
		}
	}
	for _, n := range named {
		if !slices.Contains(listed, n) {
			t.Errorf("docs/architecture.md names %s, which go list does not", n)
		}
	}
}
