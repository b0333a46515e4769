package services

import (
	"context"
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
