package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/services"
	"github.com/perfgate/perfgate/internal/services/servicetest"
	"github.com/perfgate/perfgate/internal/testtier"
)

func writeComposeTree(t *testing.T, compose, data string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"compose.yaml": compose, "seed/data.txt": data} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const servicesCompose = `
services:
  api:
    image: ${IMAGE:-none}
    environment: {FILE: /seed/data.txt}
    volumes: ["./seed/data.txt:/seed/data.txt:ro"]
    ports: ["127.0.0.1:${API_PORT:-18080}:80"]
    healthcheck: {test: ["CMD", "/echo", "-check"], interval: 500ms, retries: 60}
  node:
    image: ${IMAGE:-none}
    ports: ["${NODE_BIND:-127.0.0.1:18081}:80"]
`

func runCLI(t *testing.T, ctx context.Context, args ...string) (string, error) {
	t.Helper()
	out, errb, err := runCommandErr(ctx, nil, args...)
	return out + errb, err
}

func TestServicesPlanPrintsEachGroup(t *testing.T) {
	head := writeComposeTree(t, servicesCompose, "head")
	base := writeComposeTree(t, servicesCompose, "base")
	out, err := runCLI(t, context.Background(), "services", "plan", "--head", head, "--base", base, "--project", "demo")
	if err != nil {
		t.Fatalf("services plan: %v\n%s", err, out)
	}
	for _, want := range []string{
		"1      api       copied  api: mounted seed/data.txt content differs",
		"2      node      shared  identical",
		"compose project demo-<run id>-perf-base on 127.0.0.2",
		"api: 127.0.0.1:18080/tcp -> 127.0.0.2:18080",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestServicesRefusals(t *testing.T) {
	testtier.Heavy(t, testtier.Docker)
	tree := writeComposeTree(t, servicesCompose, "x")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no base", []string{"services", "plan", "--head", tree}, "--base is required"},
		{"bad seed", []string{"services", "plan", "--head", tree, "--base", tree, "--seed-file", "api"}, "--seed-file \"api\": write SERVICE=FILE"},
		{"down without a run", []string{"services", "down"}, "--run-id is required"},
		// Short syntax without an address publishes on every interface.
		{"base on all interfaces", []string{"services", "up", "--head", tree, "--base", tree, "--run-id", "refused1", "--env", "NODE_BIND=18081", "--log-dir", t.TempDir()}, "all interfaces"},
		{"run id not fit for a project name", []string{"services", "up", "--head", tree, "--base", tree, "--run-id", "run.1", "--log-dir", t.TempDir()}, `run id "run.1"`},
		{"base on 0.0.0.0", []string{"services", "up", "--head", tree, "--base", tree, "--run-id", "refused2", "--env", "NODE_BIND=0.0.0.0:18081", "--log-dir", t.TempDir()}, "on 0.0.0.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := runCLI(t, context.Background(), c.args...)
			if exit.Code(err) != exit.CannotJudge || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d (%v), output:\n%s\nwant exit 2 naming %q", exit.Code(err), err, out, c.want)
			}
			for _, id := range []string{"refused1", "refused2"} {
				if left, err := services.Leftovers(context.Background(), id); err != nil || len(left) > 0 {
					t.Fatalf("a refused run started something: %v %v", left, err)
				}
			}
		})
	}
}

func TestServicesUpAndDown(t *testing.T) {
	testtier.Heavy(t, testtier.Docker)
	img := servicetest.Image(t) // removed by TestMain, after every test that runs it
	api, node := freeBothPorts(t), freeBothPorts(t)
	env := []string{"--env", "IMAGE=" + img, "--env", fmt.Sprintf("API_PORT=%d", api), "--env", fmt.Sprintf("NODE_BIND=127.0.0.1:%d", node)}
	head := writeComposeTree(t, servicesCompose, "head")
	base := writeComposeTree(t, servicesCompose, "base")
	runID := fmt.Sprintf("cli%d", time.Now().UnixNano())
	t.Cleanup(func() {
		if err := services.DownByLabel(context.Background(), runID); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	args := append([]string{"services", "up", "--head", head, "--base", base, "--project", fmt.Sprintf("cli%d", api), "--run-id", runID, "--log-dir", t.TempDir()}, env...)
	out, err := runCLI(t, context.Background(), args...)
	if err != nil {
		t.Fatalf("services up: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	for host, want := range map[string]string{"127.0.0.1": "file=head", "127.0.0.2": "file=base"} {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d/", host, api))
		if err != nil {
			t.Fatalf("GET on %s: %v", host, err)
		}
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		if !strings.Contains(b.String(), want) {
			t.Errorf("api on %s answered %q, want %q", host, b.String(), want)
		}
	}
	out, err = runCLI(t, context.Background(), "services", "down", "--run-id", runID)
	if err != nil || !strings.Contains(out, "nothing labelled perfgate.run="+runID+" remains") {
		t.Fatalf("services down: %v\n%s", err, out)
	}
	if left, err := services.Leftovers(context.Background(), runID); err != nil || len(left) > 0 {
		t.Fatalf("after services down: %v %v", left, err)
	}
}

func freeBothPorts(t *testing.T) int {
	t.Helper()
	for i := 0; i < 50; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.2:%d", port)); err == nil {
			l2.Close()
			return port
		}
	}
	t.Fatal("no port free on both 127.0.0.1 and 127.0.0.2")
	return 0
}

// TestServicesSeedFile: --seed-file names a service's seed file; the old
// --seed still does, with a deprecation warning on stderr.
func TestServicesSeedFile(t *testing.T) {
	head := writeComposeTree(t, servicesCompose, "same")
	base := writeComposeTree(t, servicesCompose, "same")
	// The seed differs, so node (seeded from it) is copied for the base.
	if err := os.WriteFile(filepath.Join(base, "node.seed"), []byte("base"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(head, "node.seed"), []byte("head"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flag, warning string
	}{
		{"--seed-file", ""},
		{"--seed", "warning: perfgate services plan: --seed is deprecated and will go: write --seed-file SERVICE=FILE\n"},
	} {
		stdout, stderr, code := runCommand(t, nil, "services", "plan", "--head", head, "--base", base, "--project", "demo", tc.flag, "node=node.seed")
		if code != exit.Pass || !strings.Contains(stdout, "node      copied") || stderr != tc.warning {
			t.Errorf("%s: exit %d, stdout:\n%s\nstderr %q, want node copied and stderr %q", tc.flag, code, stdout, stderr, tc.warning)
		}
	}
}
