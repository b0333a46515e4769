package services

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/services/servicetest"
	"github.com/perfgate/perfgate/internal/testtier"
)

// A project shaped like FerroFED's: a patient index with its database and
// a seed loader, and nodes that depend on nothing of it.
var pixFiles = map[string]string{
	"compose.yaml": `
services:
  pix:
    image: ferropix:0.0.25
    env_file: pix.env
    volumes:
      - ./pix/config.toml:/etc/pix/config.toml:ro
    ports:
      - "127.0.0.1:${PIX_PORT:-8090}:8090"
    depends_on:
      pixdb:
        condition: service_healthy
  pixdb:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: secret
    healthcheck:
      test: ["CMD", "pg_isready"]
      interval: 1s
  pixseed:
    image: ferropix:0.0.25
    command: ["seed", "/seed/patients.tsv"]
    depends_on: [pixdb]
  node-a:
    image: ferroehr:5.7.0
    ports:
      - target: 8080
        published: "8081"
        host_ip: 127.0.0.1
  node-b:
    image: ferroehr:5.7.0
    ports: ["127.0.0.1:8082:8080"]
`,
	"pix.env":             "PIX_AUTH=client_credentials\n",
	"pix/config.toml":     "[auth]\nmode = \"tokens\"\n",
	"seed/patients.tsv":   "ffd-test-0001\tJane\n",
	"unrelated/README.md": "not mounted\n",
}

func TestDiffDecidesWhatTheBaseCopies(t *testing.T) {
	seeds := map[string][]string{"pixseed": {"seed/patients.tsv"}}
	cases := []struct {
		name   string
		base   map[string]string
		copied []string
		why    string
	}{
		{"identical trees copy nothing", pixFiles, nil, ""},
		{"a file nobody mounts changes nothing", with(pixFiles, map[string]string{"unrelated/README.md": "changed\n"}), nil, ""},
		{"a changed mounted file copies its group", with(pixFiles, map[string]string{"pix/config.toml": "[auth]\nmode = \"basic\"\n"}),
			[]string{"pix+pixdb+pixseed"}, "pix: mounted pix/config.toml content differs"},
		{"a changed seed file alone copies its group", with(pixFiles, map[string]string{"seed/patients.tsv": "ffd-test-0002\tJohn\n"}),
			[]string{"pix+pixdb+pixseed"}, "pixseed: seed seed/patients.tsv content differs"},
		{"a changed env file copies its group", with(pixFiles, map[string]string{"pix.env": "PIX_AUTH=basic\n"}),
			[]string{"pix+pixdb+pixseed"}, "pix: environment.PIX_AUTH differs"},
		{"an image pin at the end of a depends_on chain copies the chain whole",
			with(pixFiles, map[string]string{"compose.yaml": strings.Replace(pixFiles["compose.yaml"], "postgres:16", "postgres:15", 1)}),
			[]string{"pix+pixdb+pixseed"}, `pixdb: image differs (head "postgres:16", base "postgres:15")`},
		{"a node's change copies that node alone",
			with(pixFiles, map[string]string{"compose.yaml": strings.Replace(pixFiles["compose.yaml"], "ports: [\"127.0.0.1:8082:8080\"]", "ports: [\"127.0.0.1:8082:8080\"]\n    environment: {X: y}", 1)}),
			[]string{"node-b"}, "node-b: environment.X differs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head := writeTree(t, pixFiles)
			base := writeTree(t, c.base)
			head.Seeds, base.Seeds = seeds, seeds
			p := mustDiff(t, head, base)
			if got := copiedOf(p); !reflect.DeepEqual(got, c.copied) {
				t.Fatalf("copied groups = %v, want %v (plan %+v)", got, c.copied, p.Groups)
			}
			if len(p.Groups) != 3 {
				t.Fatalf("groups = %+v, want pix+pixdb+pixseed, node-a, node-b", p.Groups)
			}
			for _, g := range p.Groups {
				if g.Copied && g.Why != c.why {
					t.Errorf("why = %q, want %q", g.Why, c.why)
				}
				if !g.Copied && g.Why != "identical" {
					t.Errorf("shared group %v: why = %q", g.Services, g.Why)
				}
			}
		})
	}
}

func TestDiffMovesOnlyTheCopiedGroupsPorts(t *testing.T) {
	head := writeTree(t, pixFiles)
	base := writeTree(t, with(pixFiles, map[string]string{"pix/config.toml": "changed"}))
	p := mustDiff(t, head, base)
	want := []MovedPort{{Service: "pix", From: "127.0.0.1", Port: "8090", Protocol: "tcp"}}
	if !reflect.DeepEqual(p.Moved, want) {
		t.Fatalf("moved = %+v, want %+v", p.Moved, want)
	}
	config := []byte(`pix = "http://127.0.0.1:8090/fhir"
pix_alt = "http://localhost:8090"
node_a = "http://127.0.0.1:8081"
node_b = "http://localhost:8082"
not_a_host = "http://mylocalhost:8090"
longer_port = "127.0.0.1:80901"
listen = "127.0.0.1:8070"
`)
	got := string(p.Rewrite(config))
	wantCfg := `pix = "http://127.0.0.2:8090/fhir"
pix_alt = "http://127.0.0.2:8090"
node_a = "http://127.0.0.1:8081"
node_b = "http://localhost:8082"
not_a_host = "http://mylocalhost:8090"
longer_port = "127.0.0.1:80901"
listen = "127.0.0.1:8070"
`
	if got != wantCfg {
		t.Fatalf("Rewrite:\n%s\nwant:\n%s", got, wantCfg)
	}
	// Nothing copied: the config is untouched.
	same := mustDiff(t, head, writeTree(t, pixFiles))
	if string(same.Rewrite(config)) != string(config) {
		t.Fatal("Rewrite changed the config of a plan that copies nothing")
	}
}

func TestDiffComparesTreesInDifferentFolders(t *testing.T) {
	// Absolute paths of each checkout must not count as a difference, even
	// inside a value.
	files := with(pixFiles, map[string]string{"pix.env": "PIX_AUTH=x\n"})
	files["compose.yaml"] = strings.Replace(files["compose.yaml"], "env_file: pix.env", "env_file: pix.env\n    environment:\n      CONFIG: ${PWD_DIR}/pix/config.toml", 1)
	head := writeTree(t, files)
	base := writeTree(t, files)
	head.Env = []string{"PWD_DIR=" + head.Dir}
	base.Env = []string{"PWD_DIR=" + base.Dir}
	p := mustDiff(t, head, base)
	if c := copiedOf(p); c != nil {
		t.Fatalf("identical trees in two folders: copied %v, plan %+v", c, p.Groups)
	}
}

func TestDiffRefusesABaseBeyondLoopback(t *testing.T) {
	cases := []struct{ name, ports, want string }{
		{"all interfaces in long syntax", "- target: 80\n        published: \"8080\"\n        host_ip: 0.0.0.0", "on 0.0.0.0"},
		{"short syntax without an address", `- "8080:80"`, "all interfaces"},
		{"another address", `- "10.0.0.5:8080:80"`, "on 10.0.0.5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			compose := "services:\n  web:\n    image: x\n    ports:\n      " + c.ports + "\n"
			head := writeTree(t, map[string]string{"compose.yaml": "services:\n  web:\n    image: x\n    ports: [\"127.0.0.1:8080:80\"]\n"})
			base := writeTree(t, map[string]string{"compose.yaml": compose})
			_, err := Diff(context.Background(), head, base)
			if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "127.0.0.1:8080:80") {
				t.Fatalf("Diff = %v (exit %d), want exit 2 naming %q and the fix", err, exit.Code(err), c.want)
			}
		})
	}
	// An unpublished port ("5432") and 127.0.0.2 are fine.
	ok := "services:\n  db:\n    image: x\n    ports: [\"5432\", \"127.0.0.2:9000:9000\"]\n"
	mustDiff(t, writeTree(t, map[string]string{"compose.yaml": ok}), writeTree(t, map[string]string{"compose.yaml": ok}))
}

func TestDiffRefusesBadContracts(t *testing.T) {
	good := map[string]string{"compose.yaml": "services:\n  web:\n    image: x\n"}
	cases := []struct {
		name string
		tree func(t *testing.T) Tree
		want string
	}{
		{"missing compose file", func(t *testing.T) Tree { tr := writeTree(t, good); tr.Files = []string{"perf/compose.yaml"}; return tr }, "perf/compose.yaml"},
		{"no compose files", func(t *testing.T) Tree { tr := writeTree(t, good); tr.Files = nil; return tr }, "no compose files"},
		{"seed of an unknown service", func(t *testing.T) Tree {
			tr := writeTree(t, good)
			tr.Seeds = map[string][]string{"pix": {"x"}}
			return tr
		}, `service "pix"`},
		{"missing seed file", func(t *testing.T) Tree {
			tr := writeTree(t, good)
			tr.Seeds = map[string][]string{"web": {"seed/none.tsv"}}
			return tr
		}, "seed/none.tsv"},
		{"invalid compose", func(t *testing.T) Tree {
			return writeTree(t, map[string]string{"compose.yaml": "services:\n  web:\n    image: x\n    ports: 12\n"})
		}, "loading the base tree"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Diff(context.Background(), writeTree(t, good), c.tree(t))
			if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Diff = %v, want exit 2 naming %q", err, c.want)
			}
		})
	}
}

func TestDiffRefusesPortCollisions(t *testing.T) {
	head := writeTree(t, map[string]string{"compose.yaml": "services:\n  web:\n    image: a\n    ports: [\"127.0.0.2:8080:80\"]\n"})
	base := writeTree(t, map[string]string{"compose.yaml": "services:\n  web:\n    image: b\n    ports: [\"127.0.0.1:8080:80\"]\n"})
	_, err := Diff(context.Background(), head, base)
	if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), "both publish tcp/8080 on 127.0.0.2") {
		t.Fatalf("Diff = %v, want a refused collision", err)
	}
}

// The real-project-shaped files under testdata/compose load, group and diff.
func TestRealProjectShapes(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/compose/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no projects under testdata/compose: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			tree, change, group := projectTree(t, dir)
			p := mustDiff(t, tree, tree)
			if p.Copied() || len(p.Groups) < 2 {
				t.Fatalf("a tree against itself: %+v", p.Groups)
			}
			t.Logf("%s: %d services in %d groups, diff %s", filepath.Base(dir), len(p.head.project.Services), len(p.Groups), p.DiffTime)

			// Two checkouts in other folders, the base's with one mounted
			// file changed: that file's group alone is copied.
			head, base := tree, tree
			head.Dir, base.Dir = copyDir(t, dir), copyDir(t, dir)
			if err := os.WriteFile(filepath.Join(base.Dir, change), []byte("# changed by the test\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			p = mustDiff(t, head, base)
			if got := copiedOf(p); len(got) != 1 || got[0] != group {
				t.Fatalf("changed %s: copied %v, want [%s]; plan %+v", change, got, group, p.Groups)
			}
			// Both resolved files are what the compose tool of this machine accepts.
			for _, proj := range []*types.Project{p.headProject(ProjectName(p.Project, "r1"), types.Labels{RunLabel: "r1"}), p.baseProject(ProjectName(p.Project, "r1")+BaseSuffix, types.Labels{RunLabel: "r1"})} {
				composeAccepts(t, proj)
			}
		})
	}
}

// projectTree reads testdata/compose/<name>/tree.txt: the compose files,
// profiles and seeds the project's gate contract would name.
func projectTree(t *testing.T, dir string) (tr Tree, change, group string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "tree.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tr = Tree{Dir: dir, Project: filepath.Base(dir), Seeds: map[string][]string{}}
	for i, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(key, "#") {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "files":
			tr.Files = strings.Fields(val)
		case "profiles":
			tr.Profiles = strings.Fields(val)
		case "env":
			tr.Env = strings.Fields(val)
		case "seed":
			svc, files, _ := strings.Cut(val, ":")
			tr.Seeds[strings.TrimSpace(svc)] = strings.Fields(files)
		case "change":
			change, group, _ = strings.Cut(val, " ")
		default:
			t.Fatalf("%s/tree.txt:%d: unknown key %q", dir, i+1, key)
		}
	}
	return tr, change, group
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
	return dst
}

// composeAccepts checks the resolved file with `<compose> config -q`.
func composeAccepts(t *testing.T, proj *types.Project) {
	t.Helper()
	// The diff above ran in either tier; the compose tool's own reading
	// of the resolved file needs the docker CLI.
	testtier.Heavy(t, testtier.Docker)
	tool, err := findCompose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	body, err := resolvedYAML(proj)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "compose-"+proj.Name+".yaml")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := tool.command(context.Background(), proj.Name, file, "config", "-q").CombinedOutput()
	if err != nil {
		t.Fatalf("%s refuses the resolved file of %s: %v\n%s\n--- file:\n%s", tool, proj.Name, err, out, body)
	}
}

// The diff of a generated 200-service project: the goal is under a second
// (go run ./bench/services prints the median on a quiet machine); the test
// fails only on a pathology. It bounds the CPU the diff used, not the wall
// time: beside the race detector's binaries a diff that used about a
// second of CPU took 16 s of wall time. The test is serial, so the
// process's CPU over the diff is the diff's.
func TestDiffTimeOn200Services(t *testing.T) {
	head := writeTree(t, servicetest.Generated(200, "a"))
	base := writeTree(t, servicetest.Generated(200, "b"))
	start, cpu0 := time.Now(), processCPU(t)
	p := mustDiff(t, head, base)
	took, cpu := time.Since(start), processCPU(t)-cpu0
	t.Logf("diff of 200 services (%d groups, %d copied): %s of CPU, %s of wall time", len(p.Groups), len(copiedOf(p)), cpu, took)
	if cpu > 10*time.Second {
		t.Errorf("diff of 200 services used %s of CPU, goal under 1 s", cpu)
	}
	if got := len(copiedOf(p)); got != 1 {
		t.Errorf("copied %d groups, want the one whose config differs", got)
	}
}

// processCPU is the user and system time this test process has used.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestDiffRefusesABaseCopyOnTheHostNetwork: a base copy of a service with
// network_mode: host would listen on the head's copy's host ports, where
// nothing moves it to 127.0.0.2. Shared, it runs once and is fine.
func TestDiffRefusesABaseCopyOnTheHostNetwork(t *testing.T) {
	const compose = "services:\n  exporter:\n    image: node-exporter:1\n    network_mode: host\n  web:\n    image: web:1\n"
	const override = "services:\n  exporter:\n    network_mode: host\n"
	cases := []struct {
		name       string
		files      []string
		head, base map[string]string
		want       string // "" when the plan stands
	}{
		{"a copied host-network service", []string{"compose.yaml"},
			map[string]string{"compose.yaml": compose},
			map[string]string{"compose.yaml": strings.Replace(compose, "node-exporter:1", "node-exporter:2", 1)},
			`compose.yaml:4: the base tree's service "exporter" has network_mode: host`},
		{"network_mode set by the second file", []string{"compose.yaml", "perf/compose.yaml"},
			map[string]string{"compose.yaml": strings.Replace(compose, "    network_mode: host\n", "", 1), "perf/compose.yaml": override},
			map[string]string{"compose.yaml": strings.Replace(strings.Replace(compose, "    network_mode: host\n", "", 1), "node-exporter:1", "node-exporter:2", 1), "perf/compose.yaml": override},
			`perf/compose.yaml:3: the base tree's service "exporter" has network_mode: host`},
		{"a shared host-network service", []string{"compose.yaml"},
			map[string]string{"compose.yaml": compose},
			map[string]string{"compose.yaml": strings.Replace(compose, "web:1", "web:2", 1)},
			""},
		// The head runs no exporter: the base's has the host's ports to itself.
		{"a host-network service only the base runs", []string{"compose.yaml"},
			map[string]string{"compose.yaml": "services:\n  web:\n    image: web:1\n"},
			map[string]string{"compose.yaml": strings.Replace(compose, "web:1", "web:2", 1)},
			""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head, base := writeTree(t, c.head), writeTree(t, c.base)
			head.Files, base.Files = c.files, c.files
			p, err := Diff(context.Background(), head, base)
			if c.want == "" {
				if err != nil || !p.Copied() {
					t.Fatalf("Diff = %v, want a plan that copies web", err)
				}
				return
			}
			if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), c.want) ||
				!strings.Contains(err.Error(), "drop network_mode: host") || !strings.Contains(err.Error(), "exporter: image differs") {
				t.Fatalf("Diff = %v (exit %d), want exit 2 naming %q, why the group is copied and the fix", err, exit.Code(err), c.want)
			}
		})
	}
}
