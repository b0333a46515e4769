package services

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/services/servicetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	servicetest.Cleanup()
	os.Exit(code)
}

// writeTree writes files (relative path -> content) into a fresh folder and
// returns a Tree over its compose.yaml.
func writeTree(t *testing.T, files map[string]string, env ...string) Tree {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Tree{Dir: dir, Files: []string{"compose.yaml"}, Project: "pgtest", Env: env}
}

// with returns a copy of files with some replaced.
func with(files map[string]string, changes map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		out[k] = v
	}
	for k, v := range changes {
		out[k] = v
	}
	return out
}

// freePort finds a TCP port free on both 127.0.0.1 and 127.0.0.2.
func freePort(t *testing.T) int {
	t.Helper()
	for i := 0; i < 50; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.2:%d", port))
		if err != nil {
			continue
		}
		l2.Close()
		return port
	}
	t.Fatal("no port free on both 127.0.0.1 and 127.0.0.2")
	return 0
}

// copiedOf lists the services of the copied groups, for compact asserts.
func copiedOf(p *Plan) []string {
	var out []string
	for _, g := range p.Groups {
		if g.Copied {
			out = append(out, strings.Join(g.Services, "+"))
		}
	}
	return out
}

func mustDiff(t *testing.T, head, base Tree) *Plan {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Diff(ctx, head, base)
	if err != nil {
		t.Fatalf("Diff: %v", err)
	}
	return p
}
