package services

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
)

// TestDiffResolvesPathsInTheFirstFilesFolder: a gate contract that names
// perf/compose.yaml alone. `docker compose -f perf/compose.yaml` makes
// perf/ the project folder: its ./init.sql is perf/init.sql and its .env
// is perf/.env. The plan must hash and mount the same files, not the tree
// root's namesakes.
func TestDiffResolvesPathsInTheFirstFilesFolder(t *testing.T) {
	files := map[string]string{
		"perf/compose.yaml": "services:\n  db:\n    image: postgres:${PG_TAG}\n    volumes:\n      - ./init.sql:/docker-entrypoint-initdb.d/init.sql:ro\n",
		"perf/init.sql":     "create table perf();\n",
		"perf/.env":         "PG_TAG=16\n",
		"init.sql":          "create table root();\n",
		".env":              "PG_TAG=15\n",
	}
	cases := []struct {
		name   string
		change map[string]string
		why    string // "" when nothing is copied
	}{
		{"the subfolder's mounted file is compared", map[string]string{"perf/init.sql": "drop table perf;\n"}, "db: mounted perf/init.sql content differs"},
		{"the root's file of the same name is not mounted", map[string]string{"init.sql": "drop table root;\n"}, ""},
		{"the subfolder's .env is read", map[string]string{"perf/.env": "PG_TAG=17\n"}, "db: image differs"},
		{"the root's .env is not read", map[string]string{".env": "PG_TAG=14\n"}, ""},
	}
	tree := func(t *testing.T, files map[string]string) Tree {
		tr := writeTree(t, files)
		tr.Files = []string{"perf/compose.yaml"}
		return tr
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head := tree(t, files)
			p := mustDiff(t, head, tree(t, with(files, c.change)))
			var copied []string
			if c.why != "" {
				copied = []string{"db"}
			}
			if got := copiedOf(p); !reflect.DeepEqual(got, copied) {
				t.Fatalf("copied %v, want %v (plan %+v)", got, copied, p.Groups)
			}
			if c.why != "" && !strings.HasPrefix(p.Groups[0].Why, c.why) {
				t.Errorf("why = %q, want %q", p.Groups[0].Why, c.why)
			}
			// What Up writes for the compose CLI mounts the subfolder's file.
			db := p.headProject("pgtest-r1", types.Labels{RunLabel: "r1"}).Services["db"]
			root, err := filepath.EvalSymlinks(head.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, "perf", "init.sql"); len(db.Volumes) != 1 || db.Volumes[0].Source != want {
				t.Errorf("the head's db mounts %+v, want %s", db.Volumes, want)
			}
			if db.Image != "postgres:16" {
				t.Errorf("the head's db runs %q, want postgres:16 from perf/.env", db.Image)
			}
		})
	}
}

// TestDiffNamesAnUnnamedProjectAfterTheTree: without a project name the
// plan takes the tree folder's name, as the gate names a run after its
// checkout, in the characters compose accepts: a folder named
// "FerroFED.git" is no compose project name as it stands.
func TestDiffNamesAnUnnamedProjectAfterTheTree(t *testing.T) {
	tree := func(t *testing.T) Tree {
		dir := filepath.Join(t.TempDir(), "FerroFED.git")
		if err := os.MkdirAll(filepath.Join(dir, "perf"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "perf", "compose.yaml"), []byte("services:\n  web:\n    image: web:1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return Tree{Dir: dir, Files: []string{"perf/compose.yaml"}}
	}
	p := mustDiff(t, tree(t), tree(t))
	if p.Project != "ferrofedgit" {
		t.Fatalf("project %q, want ferrofedgit (the tree folder's name, not perf's)", p.Project)
	}
}
