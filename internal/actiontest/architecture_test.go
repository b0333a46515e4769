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
	t.Parallel() // go list's work, beside the others
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

// Each arrow A --> B of docs/architecture.md's picture is an import: B
// imports A. A picture that drew data flowing against the imports would
// tell a newcomer where a change goes wrongly.
func TestArchitecturePictureIsTheImports(t *testing.T) {
	t.Parallel() // go list's work, beside the others
	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```mermaid\nflowchart LR\n")
	if !ok {
		t.Fatal("docs/architecture.md has no flowchart")
	}
	block, _, _ := strings.Cut(rest, "```")
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \",\"}}", "./internal/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/perfgate/perfgate/internal/"
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		for _, d := range strings.Split(deps, ",") {
			imports[strings.TrimPrefix(pkg, mod)] = append(imports[strings.TrimPrefix(pkg, mod)], strings.TrimPrefix(d, mod))
		}
	}
	// A node is id or id["path and words"]; its package is the label's
	// first word when it has one.
	node := regexp.MustCompile(`^(\w+)(?:\["([^"\s]+)[^"]*"\])?$`)
	pkgOf := map[string]string{}
	resolve := func(tok string) string {
		m := node.FindStringSubmatch(strings.TrimSpace(tok))
		if m == nil {
			t.Fatalf("picture: cannot read node %q", tok)
		}
		if m[2] != "" {
			pkgOf[m[1]] = m[2]
		}
		if p, ok := pkgOf[m[1]]; ok {
			return p
		}
		return m[1]
	}
	edges := 0
	for _, line := range strings.Split(block, "\n") {
		parts := strings.Split(line, "-->")
		for i := 0; i+1 < len(parts); i++ {
			for _, from := range strings.Split(parts[i], "&") {
				for _, to := range strings.Split(parts[i+1], "&") {
					a, b := resolve(from), resolve(to)
					edges++
					if _, ok := imports[b]; !ok {
						t.Errorf("picture: %s is not a package of internal/", b)
						continue
					}
					if !slices.Contains(imports[b], a) {
						t.Errorf("picture: %s --> %s, but internal/%s does not import internal/%s", a, b, b, a)
					}
				}
			}
		}
	}
	if edges < 20 {
		t.Errorf("read %d arrows from the picture; the parser missed them", edges)
	}
}
