package plan

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/load"
)

// refusalShape is what every refusal must look like, from any input.
var refusalShape = regexp.MustCompile(`^[^\n]+:[1-9][0-9]*: [^\n]+$`)

// FuzzParse feeds the parser arbitrary plans in a folder holding the data
// and body files the corpus names: it must never panic, every refusal must
// be one exit-2 line naming a file and line, and every accepted plan must
// give a source that can draw requests.
func FuzzParse(f *testing.F) {
	for _, tc := range refusals {
		f.Add([]byte(tc.plan))
	}
	f.Add([]byte(varsPlan))
	f.Add([]byte("a = 0b\n")) // a refusal once quoted this newline and took two lines
	f.Add([]byte(itemPlan(`draw = "zipf"` + "\nexponent = 0.7")))
	if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "plans", "example.toml")); err == nil {
		f.Add(b)
	}
	// No Chdir: the fuzzing engine reads testdata/fuzz from the package folder.
	dir := f.TempDir()
	var ids strings.Builder
	for i := 0; i < 50; i++ {
		ids.WriteString("id-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + "\n")
	}
	for name, content := range map[string]string{
		"ids.txt": ids.String(), "body.json": "{\"n\": \"{ids}\"}\n", "dup.txt": "a\na\n",
		"example-ids.txt": ids.String(), "space.txt": "a b\n", "three.txt": "x\ny\nz\n", "session.txt": "s\n", "region.txt": "r\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(filepath.Join(dir, "plan.toml"), data)
		if testing.Verbose() {
			t.Logf("parse: %v", err)
		}
		if err != nil {
			if exit.Code(err) != exit.CannotJudge {
				t.Fatalf("refusal with exit %d: %v", exit.Code(err), err)
			}
			if !refusalShape.MatchString(err.Error()) {
				t.Fatalf("refusal is not one FILE:LINE: line: %q", err)
			}
			return
		}
		getenv := func(k string) string { return "v-" + strings.ToLower(k) }
		v, err := ResolveVars(p, nil, getenv)
		if err != nil {
			if exit.Code(err) != exit.CannotJudge {
				t.Fatalf("variables refused with exit %d: %v", exit.Code(err), err)
			}
			return
		}
		src, groups, err := p.Source(v, 1)
		if err != nil {
			t.Fatalf("an accepted plan gives no source: %v", err)
		}
		for i := 0; i < 20; i++ {
			r := src.Next(load.Stage(i % 2))
			if r.Group < 0 || r.Group >= len(groups) || !strings.HasPrefix(r.Path, "/") {
				t.Fatalf("request %+v from groups %v", r, groups)
			}
		}
		if err := p.CheckLoad(p.Load); err != nil && exit.Code(err) != exit.CannotJudge {
			t.Fatalf("CheckLoad: %v", err)
		}
	})
}
