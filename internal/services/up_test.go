package services

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/services/servicetest"
)

// A project of two dependency groups: api with its db (health checks,
// depends_on service_healthy, a bind-mounted file) and a node with no health
// check (readiness by its published port).
const twoGroups = `
services:
  api:
    image: ${IMAGE}
    environment:
      MESSAGE: api
      FILE: /seed/data.txt
    volumes:
      - ./seed/data.txt:/seed/data.txt:ro
    ports:
      - "127.0.0.1:${API_PORT}:80"
    healthcheck:
      test: ["CMD", "/echo", "-check"]
      interval: 500ms
      timeout: 2s
      retries: 60
    depends_on:
      db:
        condition: service_healthy
  db:
    image: ${IMAGE}
    environment:
      MESSAGE: db
      SLOW_START: ${DB_SLOW_START:-0s}
      FAIL: ${DB_FAIL:-}
    volumes:
      - dbdata:/data
    healthcheck:
      test: ["CMD", "/echo", "-check"]
      interval: 500ms
      timeout: 2s
      retries: 60
  node:
    image: ${IMAGE}
    environment:
      MESSAGE: node
    ports:
      - target: 80
        published: "${NODE_PORT}"
        host_ip: 127.0.0.1
volumes:
  dbdata: {}
`

type dockerTrees struct {
	head, base        Tree
	apiPort, nodePort int
}

func newDockerTrees(t *testing.T, headData, baseData string, extraEnv ...string) dockerTrees {
	t.Helper()
	img := servicetest.Image(t)
	api, node := freePort(t), freePort(t)
	for node == api {
		node = freePort(t)
	}
	env := append([]string{"IMAGE=" + img, fmt.Sprintf("API_PORT=%d", api), fmt.Sprintf("NODE_PORT=%d", node)}, extraEnv...)
	project := fmt.Sprintf("pgtest%d", time.Now().UnixNano()%1e9)
	head := writeTree(t, map[string]string{"compose.yaml": twoGroups, "seed/data.txt": headData}, env...)
	base := writeTree(t, map[string]string{"compose.yaml": twoGroups, "seed/data.txt": baseData}, env...)
	head.Project, base.Project = project, project
	return dockerTrees{head: head, base: base, apiPort: api, nodePort: node}
}

// runUp starts the plan and registers a teardown that proves nothing of
// the run remains, even when the test fails half-way.
func runUp(t *testing.T, ctx context.Context, p *Plan, runID string) (*Running, error) {
	t.Helper()
	t.Cleanup(func() { assertGone(t, runID) })
	r, err := Up(ctx, p, Start{RunID: runID, LogDir: t.TempDir()})
	if r != nil {
		t.Cleanup(func() {
			if err := r.Down(context.Background()); err != nil {
				t.Errorf("Down: %v", err)
			}
		})
	}
	return r, err
}

func assertGone(t *testing.T, runID string) {
	t.Helper()
	if err := DownByLabel(context.Background(), runID); err != nil {
		t.Errorf("DownByLabel: %v", err)
	}
	left, err := Leftovers(context.Background(), runID)
	if err != nil {
		t.Fatalf("listing leftovers: %v", err)
	}
	if len(left) > 0 {
		t.Errorf("run %s left behind: %v", runID, left)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}

func containersOf(t *testing.T, runID, service string) []string {
	t.Helper()
	out, err := docker(context.Background(), "ps", "-q", "--filter", "label="+RunLabel+"="+runID, "--filter", "label=com.docker.compose.service="+service)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(out)
}

func TestUpGivesTheBaseItsOwnCopyOfWhatDiffers(t *testing.T) {
	t.Parallel() // separate projects, ports and run ids
	tr := newDockerTrees(t, "head data", "base data")
	p := mustDiff(t, tr.head, tr.base)
	if got := copiedOf(p); len(got) != 1 || got[0] != "api+db" {
		t.Fatalf("copied %v, want [api+db]", got)
	}
	runID := fmt.Sprintf("t%d", time.Now().UnixNano())
	start := time.Now()
	r, err := runUp(t, context.Background(), p, runID)
	if err != nil {
		t.Fatalf("Up: %v", err)
	}
	t.Logf("services up -> all healthy: %s (%d projects, %s)", time.Since(start).Round(time.Millisecond), len(r.Projects), tool)

	if got := get(t, fmt.Sprintf("http://127.0.0.1:%d/", tr.apiPort)); got != "message=api file=head data" {
		t.Errorf("head's api on 127.0.0.1 answered %q", got)
	}
	if got := get(t, fmt.Sprintf("http://127.0.0.2:%d/", tr.apiPort)); got != "message=api file=base data" {
		t.Errorf("base's api on 127.0.0.2 answered %q", got)
	}
	if got := get(t, fmt.Sprintf("http://127.0.0.1:%d/", tr.nodePort)); got != "message=node file=" {
		t.Errorf("shared node answered %q", got)
	}
	if n := len(containersOf(t, runID, "node")); n != 1 {
		t.Errorf("the shared node runs %d times, want once", n)
	}
	for _, svc := range []string{"api", "db"} {
		if n := len(containersOf(t, runID, svc)); n != 2 {
			t.Errorf("%s runs %d times, want twice (head and base copy)", svc, n)
		}
	}
	cfg := fmt.Sprintf("api = \"http://127.0.0.1:%d\"\nnode = \"http://127.0.0.1:%d\"\n", tr.apiPort, tr.nodePort)
	want := fmt.Sprintf("api = \"http://127.0.0.2:%d\"\nnode = \"http://127.0.0.1:%d\"\n", tr.apiPort, tr.nodePort)
	if got := string(p.Rewrite([]byte(cfg))); got != want {
		t.Errorf("Rewrite = %q, want %q", got, want)
	}

	// The sweep after the run can only prove what carries the label.
	kinds := map[string]int{}
	left, _ := Leftovers(context.Background(), runID)
	for _, l := range left {
		kind, _, _ := strings.Cut(l, " ")
		kinds[kind]++
	}
	if kinds["container"] != 5 || kinds["network"] != 2 || kinds["volume"] != 2 {
		t.Errorf("labelled while running: %v, want 5 containers, 2 networks, 2 volumes", kinds)
	}
	downStart := time.Now()
	if err := r.Down(context.Background()); err != nil {
		t.Fatalf("Down: %v", err)
	}
	t.Logf("down: %s", time.Since(downStart).Round(time.Millisecond))
	if _, err := os.Stat(filepath.Join(r.LogDir(), r.Projects[1].Name, "api-1.log")); err != nil {
		t.Errorf("the base copy's api log was not kept: %v", err)
	}
	if left, _ := Leftovers(context.Background(), runID); len(left) > 0 {
		t.Fatalf("after Down: %v", left)
	}
}

func TestUpIdenticalTreesStartOneProject(t *testing.T) {
	t.Parallel() // separate projects, ports and run ids
	tr := newDockerTrees(t, "same", "same")
	p := mustDiff(t, tr.head, tr.base)
	if p.Copied() {
		t.Fatalf("identical trees copied %v", copiedOf(p))
	}
	runID := fmt.Sprintf("t%d", time.Now().UnixNano())
	start := time.Now()
	r, err := runUp(t, context.Background(), p, runID)
	if err != nil {
		t.Fatalf("Up: %v", err)
	}
	t.Logf("up (one project): %s", time.Since(start))
	if len(r.Projects) != 1 {
		t.Fatalf("projects %+v, want the head's alone", r.Projects)
	}
	if n := len(containersOf(t, runID, "api")); n != 1 {
		t.Errorf("api runs %d times, want once", n)
	}
	// A cancelled run's teardown: killed rather than stopped, the logs
	// kept all the same, nothing left.
	abortStart := time.Now()
	if err := r.Abort(context.Background()); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	t.Logf("abort: %s", time.Since(abortStart).Round(time.Millisecond))
	for _, svc := range []string{"api-1", "db-1", "node-1"} {
		if b, err := os.ReadFile(filepath.Join(r.LogDir(), r.Projects[0].Name, svc+".log")); err != nil || len(b) == 0 {
			t.Errorf("Abort kept no log of %s: %v", svc, err)
		}
	}
	if left, _ := Leftovers(context.Background(), runID); len(left) > 0 {
		t.Fatalf("after Abort: %v", left)
	}
}

func TestUpTearsDownAfterAFailedStart(t *testing.T) {
	t.Parallel() // separate projects, ports and run ids
	tr := newDockerTrees(t, "head", "base", "DB_FAIL=1")
	p := mustDiff(t, tr.head, tr.base)
	p.WaitTimeout = 40 * time.Second
	runID := fmt.Sprintf("t%d", time.Now().UnixNano())
	r, err := runUp(t, context.Background(), p, runID)
	if err == nil || r != nil {
		t.Fatalf("Up with a failing db: %v, want an error", err)
	}
	t.Logf("failed start: %v", err)
	if left, lerr := Leftovers(context.Background(), runID); lerr != nil || len(left) > 0 {
		t.Fatalf("after a failed start: %v %v", left, lerr)
	}
}

// TestUpNamesTheLogOfAServiceThatExited: a service that dies at start is
// reported with the path of the log Down kept for it.
func TestUpNamesTheLogOfAServiceThatExited(t *testing.T) {
	t.Parallel() // its own project, port and run id
	const dies = "services:\n  job:\n    image: ${IMAGE}\n    environment: {FAIL: \"1\"}\n    ports: [{target: 80, published: \"${PORT}\", host_ip: 127.0.0.1}]\n"
	env := []string{"IMAGE=" + servicetest.Image(t), fmt.Sprintf("PORT=%d", freePort(t))}
	head, base := writeTree(t, map[string]string{"compose.yaml": dies}, env...), writeTree(t, map[string]string{"compose.yaml": dies}, env...)
	head.Project = fmt.Sprintf("pgtest%d", time.Now().UnixNano()%1e9)
	base.Project = head.Project
	p := mustDiff(t, head, base)
	p.WaitTimeout = 40 * time.Second
	_, err := runUp(t, context.Background(), p, fmt.Sprintf("t%d", time.Now().UnixNano()))
	if err == nil {
		t.Fatal("Up with a service that exits: no error")
	}
	m := regexp.MustCompile(`job exited with code 3 \(its log: ([^)]+\.log)\)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("the failure names no log path: %v", err)
	}
	if _, serr := os.Stat(m[1]); serr != nil {
		t.Errorf("the named log %s: %v", m[1], serr)
	}
}

func TestUpTearsDownWhenCancelledMidStart(t *testing.T) {
	t.Parallel() // separate projects, ports and run ids
	tr := newDockerTrees(t, "head", "base", "DB_SLOW_START=60s")
	p := mustDiff(t, tr.head, tr.base)
	runID := fmt.Sprintf("t%d", time.Now().UnixNano())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel as soon as the first container of the run exists: compose is
	// then still waiting for db to turn healthy.
	go func() {
		for ctx.Err() == nil {
			if left, _ := Leftovers(context.Background(), runID); len(left) > 0 {
				for _, l := range left {
					if strings.HasPrefix(l, "container ") {
						cancel()
						return
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	_, err := runUp(t, ctx, p, runID)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Up cancelled mid-start: %v, want context.Canceled", err)
	}
	if left, lerr := Leftovers(context.Background(), runID); lerr != nil || len(left) > 0 {
		t.Fatalf("after a cancel mid-start: %v %v", left, lerr)
	}
}
