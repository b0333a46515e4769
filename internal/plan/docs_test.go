package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/load"
)

// TestDocsExample keeps docs/plan.md honest: its complete example and its
// stages snippet must parse, and the example must give requests.
func TestDocsExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(pkgDir, "..", "..", "docs", "plan.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```toml\n")
	if len(blocks) < 3 {
		t.Fatalf("docs/plan.md has %d toml blocks, want the complete example and the stages", len(blocks)-1)
	}
	example := blocks[1][:strings.Index(blocks[1], "```")]
	stages := blocks[2][:strings.Index(blocks[2], "```")]

	dir := planDir(t, 0)
	var ids, papers strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&ids, "%d\n", i)
		fmt.Fprintf(&papers, "PMC%d\n", i)
	}
	writeFile(t, filepath.Join(dir, "ids.txt"), ids.String())
	writeFile(t, filepath.Join(dir, "papers.txt"), papers.String())
	if err := os.MkdirAll(filepath.Join(dir, "bodies"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "bodies", "emergency.json"), `{"purpose": "emergency", "tenant": "{tenant}"}`)

	p, err := Parse("plan.toml", []byte(example))
	if err != nil {
		t.Fatalf("the complete example is refused: %v", err)
	}
	if len(p.Groups) != 5 || len(p.Data) != 2 || len(p.Thresholds) != 3 || p.Tolerance["p99.search"] != 0.4 || p.AB.IdleCPU != 0.02 {
		t.Errorf("the example parsed into %d groups, %d data, %d thresholds, tolerance %v, ab %+v", len(p.Groups), len(p.Data), len(p.Thresholds), p.Tolerance, p.AB)
	}
	v, err := ResolveVars(p, nil, env(map[string]string{"PERFGATE_VAR_API_TOKEN": "a", "PERFGATE_VAR_NCP_TOKEN": "n"}))
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := p.Source(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		r := src.Next(load.Measured)
		if strings.Contains(r.Path, "{") || strings.Contains(string(r.Body), "{tenant}") {
			t.Errorf("placeholder left in %s %s", r.Path, r.Body)
		}
	}

	p, err = Parse("plan.toml", []byte(stages+hello))
	if err != nil {
		t.Fatalf("the stages snippet is refused: %v", err)
	}
	if got := p.Load.MeasuredDuration(); got.String() != "7m10s" || p.Load.PeakRate() != 600 {
		t.Errorf("stages: %s, peak %v", got, p.Load.PeakRate())
	}
}
