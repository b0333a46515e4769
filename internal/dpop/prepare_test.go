package dpop_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/dpop"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
)

// prepareGate is a gate file whose [prepare] step mints the contact
// point's DPoP key into the run's folder, as FerroFED's gate does under
// target/perf-run/.
const prepareGate = `build = "true"
binary = "bin/svc"
start = "@BIN@ serve"
check = "@BIN@ check"
config = "perf/service.toml"
config_env = "SVC_CONFIG"
prefix = "SVC__"
ready = "/health"

[prepare]
commands = [
  "openssl ecparam -name prime256v1 -genkey -noout -out @DIR@/dpop.pem",
  "sh -c 'printf tok-%%s 42 > @DIR@/ncp.token'",
]
`

const preparePlan = `[vars]
ncp_token = { file = "../target/perf-run/ncp.token" }

[[group]]
name = "summary"
path = "/fhir/Patient/$summary"
headers = { Authorization = "Bearer {ncp_token}" }
dpop_key_file = "../target/perf-run/dpop.pem"
expect = 200
`

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPrepareMintsTheKeyTheProofsUse: the contract's [prepare] step runs
// openssl in the checkout, and the plan's DPoP group signs with the key it
// made and binds its proofs to the token it wrote.
func TestPrepareMintsTheKeyTheProofsUse(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatalf("this test mints a key with openssl, as FerroFED's gate does: install it (%v)", err)
	}
	tree := t.TempDir()
	writeFiles(t, tree, map[string]string{
		"perf/gate.toml":    strings.ReplaceAll(prepareGate, "%%", "%"),
		"perf/service.toml": "listen = \"127.0.0.1:@PORT@\"\n",
		"perf/arm.env":      "SVC__LOG=info\n",
		"perf/plan.toml":    preparePlan,
	})
	c, err := contract.Load(tree)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Prepare) != 2 {
		t.Fatalf("the contract holds %d prepare commands, want 2", len(c.Prepare))
	}
	var log strings.Builder
	if err := c.RunPrepare(context.Background(), tree, filepath.Join(tree, "target", "perf-run"), &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "prepare: openssl ecparam") {
		t.Errorf("the log does not name the command: %q", log.String())
	}
	key, err := dpop.ReadKey(filepath.Join(tree, "target", "perf-run", "dpop.pem"))
	if err != nil {
		t.Fatalf("the minted key: %v", err)
	}
	p, err := plan.ParseFile(filepath.Join(tree, "perf", "plan.toml"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := plan.ResolveVars(p, nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := p.Source(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	const target = "http://127.0.0.1:8080"
	w, stop, err := p.DPoP(context.Background(), src, v, target)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	req := w.Next(0)
	var proof, auth string
	for _, h := range req.Header {
		switch h.Name {
		case "DPoP":
			proof = h.Value
		case "Authorization":
			auth = h.Value
		}
	}
	if auth != "DPoP tok-42" {
		t.Fatalf("Authorization %q, want the minted token in the DPoP scheme", auth)
	}
	verifier := &dpop.Verifier{Key: &key.PublicKey}
	if _, err := verifier.Verify(proof, "GET", target+req.Path, auth); err != nil {
		t.Fatalf("the proof does not verify against the minted key: %v", err)
	}
}

func TestPrepareRefusals(t *testing.T) {
	base := strings.Split(prepareGate, "[prepare]")[0]
	cases := []struct {
		name, prepare, want string
	}{
		{"port placeholder", "[prepare]\ncommands = [\"mint @PORT@\"]\n", "perf/gate.toml:11: [prepare] command \"mint @PORT@\" uses the placeholder @PORT@"},
		{"no commands", "[prepare]\ncommands = []\n", "[prepare] has no commands"},
		{"unknown key", "[prepare]\ncommand = [\"x\"]\n", "unknown key \"prepare.command\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tree := t.TempDir()
			writeFiles(t, tree, map[string]string{"perf/gate.toml": base + c.prepare, "perf/service.toml": "x = 1\n", "perf/arm.env": "SVC__LOG=info\n"})
			_, err := contract.Load(tree)
			if err == nil || !strings.Contains(err.Error(), c.want) || exit.Code(err) != exit.CannotJudge {
				t.Fatalf("Load = %v, want exit 2 naming %q", err, c.want)
			}
		})
	}
	t.Run("a failing command", func(t *testing.T) {
		tree := t.TempDir()
		writeFiles(t, tree, map[string]string{"perf/gate.toml": base + "[prepare]\ncommands = [\"sh -c 'echo no key for you; exit 3'\"]\n", "perf/service.toml": "x = 1\n", "perf/arm.env": "SVC__LOG=info\n"})
		c, err := contract.Load(tree)
		if err != nil {
			t.Fatal(err)
		}
		err = c.RunPrepare(context.Background(), tree, t.TempDir(), nil)
		if err == nil || !strings.Contains(err.Error(), "[prepare] command 1") || !strings.Contains(err.Error(), "no key for you") || exit.Code(err) != exit.CannotJudge {
			t.Fatalf("RunPrepare = %v", err)
		}
	})
}
