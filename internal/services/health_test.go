package services

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/services/servicetest"
)

// TestUpJudgesServicesThatExitZero: a one-shot job that exits 0 is done,
// even when it carries a health check (a loader run from its server's
// image inherits the server's HEALTHCHECK); a service that publishes a
// port and exits 0 is a server that stopped, and the start fails saying so.
func TestUpJudgesServicesThatExitZero(t *testing.T) {
	cases := []struct {
		name string
		job  string // the job's keys beside image and environment
		want string // "" for a start that succeeds
	}{
		{"a job without a health check is done", "", ""},
		{"a job with a health check is done", `
    healthcheck:
      test: ["CMD", "/echo", "-check"]
      interval: 500ms
      timeout: 2s
      retries: 60`, ""},
		{"a job that publishes a port is a server that stopped", `
    ports: ["127.0.0.1:${JOB_PORT}:80"]`, "job exited with code 0 but publishes 127.0.0.1:%d/tcp: a service that publishes a port is a server"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // its own project, ports and run id
			compose := `
services:
  server:
    image: ${IMAGE}
    ports: ["127.0.0.1:${PORT}:80"]
  job:
    image: ${IMAGE}
    environment: {DONE: "1"}` + c.job + "\n"
			port, jobPort := freePort(t), freePort(t)
			for jobPort == port {
				jobPort = freePort(t)
			}
			env := []string{"IMAGE=" + servicetest.Image(t), fmt.Sprintf("PORT=%d", port), fmt.Sprintf("JOB_PORT=%d", jobPort)}
			head := writeTree(t, map[string]string{"compose.yaml": compose}, env...)
			base := writeTree(t, map[string]string{"compose.yaml": compose}, env...)
			head.Project = fmt.Sprintf("pgtest%d", time.Now().UnixNano()%1e9)
			base.Project = head.Project
			p := mustDiff(t, head, base)
			p.WaitTimeout = 60 * time.Second
			_, err := runUp(t, context.Background(), p, fmt.Sprintf("t%d", time.Now().UnixNano()))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Up: %v, want the job done", err)
			case c.want != "":
				want := fmt.Sprintf(c.want, jobPort)
				if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "remove its ports") {
					t.Fatalf("Up = %v, want a failure naming %q and the fix", err, want)
				}
			}
		})
	}
}
