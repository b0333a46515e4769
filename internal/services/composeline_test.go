package services

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

// TestComposeFaultsNameTheirLine breaks a compose file in each way
// compose-go refuses one, and in the way this package refuses a base (a
// port beyond loopback): every refusal names the file and the line of the
// fault, which compose-go itself gives for YAML syntax errors only.
func TestComposeFaultsNameTheirLine(t *testing.T) {
	const good = "services:\n" + // 1
		"  db:\n" + // 2
		"    image: postgres:15\n" + // 3
		"    ports:\n" + // 4
		"      - \"127.0.0.1:15432:5432\"\n" + // 5
		"  cache:\n" + // 6
		"    image: redis:7\n" // 7
	cases := []struct {
		name     string
		files    map[string]string // the base's; "head:compose.yaml" is the head's (default good)
		order    []string          // compose files in merge order (default compose.yaml)
		want     string            // file:line the refusal starts with
		mentions string            // and what it says
	}{
		{"unknown service key", map[string]string{"compose.yaml": good + "    imagee: x\n"}, nil, "compose.yaml:8:", "imagee"},
		{"unknown top-level key", map[string]string{"compose.yaml": good + "servicess: {}\n"}, nil, "compose.yaml:8:", "servicess"},
		{"value of the wrong type", map[string]string{"compose.yaml": good + "    environment: 5\n"}, nil, "compose.yaml:8:", "environment must be a mapping"},
		{"bad host port", map[string]string{"compose.yaml": good + "    ports:\n      - \"127.0.0.1:abc:6379\"\n"}, nil, "compose.yaml:9:", "abc"},
		{"bad long-syntax port", map[string]string{"compose.yaml": good + "    ports:\n      - target: x\n"}, nil, "compose.yaml:9:", "target"},
		{"ports not a list", map[string]string{"compose.yaml": good + "    ports: 12\n"}, nil, "compose.yaml:8:", "ports"},
		{"depends_on an undefined service (list)", map[string]string{"compose.yaml": good + "    depends_on: [nope]\n"}, nil, "compose.yaml:8:", `undefined service "nope"`},
		{"depends_on an undefined service (map)", map[string]string{"compose.yaml": good + "    depends_on:\n      db:\n        condition: service_started\n      nope:\n        condition: service_healthy\n"}, nil, "compose.yaml:11:", `undefined service "nope"`},
		{"undefined network", map[string]string{"compose.yaml": good + "    networks: [nonet]\n"}, nil, "compose.yaml:8:", "nonet"},
		{"undefined volume", map[string]string{"compose.yaml": good + "    volumes:\n      - /tmp:/x\n      - novol:/data\n"}, nil, "compose.yaml:10:", "novol"},
		{"no image", map[string]string{"compose.yaml": "services:\n  db:\n    image: x\n  web:\n    ports: [\"127.0.0.1:1:2\"]\n"}, nil, "compose.yaml:4:", `service "web" has neither an image`},
		{"YAML syntax", map[string]string{"compose.yaml": good + "   bad: [\n"}, nil, "compose.yaml:8:", "did not find expected key"},
		{"YAML flow list left open at the end", map[string]string{"compose.yaml": good + "    ports: [\n"}, nil, "compose.yaml:8:", "yaml"},
		{"YAML key out of line", map[string]string{"compose.yaml": "services:\n  db:\n    image: x\n   cache: 2\n"}, nil, "compose.yaml:4:", "yaml"},
		{"YAML tab", map[string]string{"compose.yaml": good + "\tx: 1\n"}, nil, "compose.yaml:8:", "tab character"},
		{"duplicate key", map[string]string{"compose.yaml": good + "  cache:\n    image: x\n"}, nil, "compose.yaml:8:", `"cache" already defined at line 6`},
		{"fault in the override file", map[string]string{
			"compose.yaml":      good,
			"perf/compose.yaml": "services:\n  cache:\n    image: redis:8\n    depends_on: [nope]\n",
		}, []string{"compose.yaml", "perf/compose.yaml"}, "perf/compose.yaml:4:", "nope"},
		{"schema fault in the override file", map[string]string{
			"compose.yaml":      good,
			"perf/compose.yaml": "services:\n  cache:\n    restart: always\n    imagee: x\n",
		}, []string{"compose.yaml", "perf/compose.yaml"}, "perf/compose.yaml:4:", "imagee"},
		{"base port beyond loopback", map[string]string{"compose.yaml": good + "    ports:\n      - \"127.0.0.1:16380:6380\"\n      - \"0.0.0.0:16379:6379\"\n"}, nil, "compose.yaml:10:", "publishes port 16379 on 0.0.0.0"},
		{"base copy colliding with the head", map[string]string{
			"head:compose.yaml": "services:\n  web:\n    image: a\n    ports: [\"127.0.0.2:8080:80\"]\n",
			"compose.yaml":      "services:\n  web:\n    image: b\n    ports:\n      - \"127.0.0.1:8081:81\"\n      - \"127.0.0.1:8080:80\"\n",
		}, nil, "compose.yaml:6:", "both publish tcp/8080 on 127.0.0.2"},
		{"base long-syntax port on all interfaces", map[string]string{"compose.yaml": good + "    ports:\n      - target: 6379\n        published: \"16379\"\n"}, nil, "compose.yaml:9:", "all interfaces"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			headFile, files := good, map[string]string{}
			for k, v := range c.files {
				if k == "head:compose.yaml" {
					headFile = v
				} else {
					files[k] = v
				}
			}
			base := writeTree(t, files)
			if c.order != nil {
				base.Files = c.order
			}
			head := writeTree(t, map[string]string{"compose.yaml": headFile})
			_, err := Diff(context.Background(), head, base)
			if err == nil {
				t.Fatal("the broken compose file was accepted")
			}
			if exit.Code(err) != exit.CannotJudge {
				t.Errorf("exit %d, want 2: %v", exit.Code(err), err)
			}
			t.Log(err)
			msg := err.Error()
			if !strings.HasPrefix(msg, c.want) || !strings.Contains(msg, c.mentions) {
				t.Errorf("the refusal %q\nwant it to start with %q and mention %q", err, c.want, c.mentions)
			}
			if strings.Contains(msg, base.Dir) {
				t.Errorf("the refusal names the scratch folder, not the tree's own path: %q", err)
			}
		})
	}
}

// TestServiceLine: the one walk behind the refusals this package makes
// itself, each case for both of its callers' paths: the network_mode
// refusal's key and the port refusals' entry (base beyond loopback, a
// collision, perfgate check's PortLine). Compose merges compose.yaml,
// then perf/compose.yaml; the last file that sets a key wins, so it is
// the one named.
func TestServiceLine(t *testing.T) {
	const (
		firstSets = "services:\n" + // 1
			"  db:\n" + // 2
			"    image: postgres:15\n" + // 3
			"    network_mode: host\n" + // 4
			"    ports:\n" + // 5
			"      - \"0.0.0.0:16379:6379\"\n" // 6
		firstBare = "services:\n" + // 1
			"  db:\n" + // 2
			"    image: postgres:15\n" // 3
		lastSets = "services:\n" + // 1
			"  cache:\n" + // 2
			"    image: redis:7\n" + // 3
			"  db:\n" + // 4
			"    network_mode: host\n" + // 5
			"    ports:\n" + // 6
			"      - target: 6379\n" + // 7
			"        published: \"16379\"\n" // 8
		lastBare = "services:\n" + // 1
			"  cache:\n" + // 2
			"    image: redis:7\n" + // 3
			"  db:\n" + // 4
			"    restart: always\n" // 5
		lastNoDB = "services:\n  cache:\n    image: redis:7\n"
	)
	paths := []struct {
		caller string
		path   []string
	}{
		{"network_mode refusal", []string{"network_mode"}},
		{"port refusals", []string{"ports", portEntry("16379")}},
	}
	cases := []struct {
		name        string
		first, last string // "" writes no file
		svc         string
		want        [2]string // file:line for each of paths; "" for ("", 0)
	}{
		{"in the first file only", firstSets, lastBare, "db",
			[2]string{"compose.yaml:4", "compose.yaml:6"}},
		{"in the last file only (long-syntax port)", firstBare, lastSets, "db",
			[2]string{"perf/compose.yaml:5", "perf/compose.yaml:7"}},
		{"in both: the last wins", firstSets, lastSets, "db",
			[2]string{"perf/compose.yaml:5", "perf/compose.yaml:7"}},
		{"in neither: the service in the last file naming it", firstBare, lastBare, "db",
			[2]string{"perf/compose.yaml:4", "perf/compose.yaml:4"}},
		{"in neither, the service in the first file only", firstBare, lastNoDB, "db",
			[2]string{"compose.yaml:2", "compose.yaml:2"}},
		{"the last file missing", firstSets, "", "db",
			[2]string{"compose.yaml:4", "compose.yaml:6"}},
		{"the last file not YAML", firstSets, "services: [\n", "db",
			[2]string{"compose.yaml:4", "compose.yaml:6"}},
		{"service absent", firstSets, lastSets, "web",
			[2]string{"", ""}},
	}
	for _, c := range cases {
		files := map[string]string{"compose.yaml": c.first}
		if c.last != "" {
			files["perf/compose.yaml"] = c.last
		}
		dir := writeTree(t, files).Dir
		order := []string{filepath.Join(dir, "compose.yaml"), filepath.Join(dir, "perf", "compose.yaml")}
		for i, p := range paths {
			t.Run(c.name+", "+p.caller, func(t *testing.T) {
				file, line := serviceLine(order, c.svc, p.path...)
				got := ""
				if file != "" {
					rel, err := filepath.Rel(dir, file)
					if err != nil {
						t.Fatal(err)
					}
					got = fmt.Sprintf("%s:%d", filepath.ToSlash(rel), line)
				} else if line != 0 {
					got = fmt.Sprintf("no file, line %d", line)
				}
				if got != c.want[i] {
					t.Errorf("serviceLine(%q, %q) = %q, want %q", c.svc, p.path, got, c.want[i])
				}
			})
		}
	}
}

// A ports key that lacks the port names the service, not the ports key.
func TestServiceLinePortNotListed(t *testing.T) {
	dir := writeTree(t, map[string]string{"compose.yaml": "services:\n  db:\n    image: x\n    ports: [\"127.0.0.1:15432:5432\"]\n"}).Dir
	file, line := serviceLine([]string{filepath.Join(dir, "compose.yaml")}, "db", "ports", portEntry("16379"))
	if file != filepath.Join(dir, "compose.yaml") || line != 2 {
		t.Errorf("serviceLine = %s:%d, want compose.yaml:2 (the service db)", file, line)
	}
}
