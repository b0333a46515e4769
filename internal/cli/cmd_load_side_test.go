package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

// A plan that sets server_timing judges its thresholds on the server's own
// figure unless one says side = "client": a target that takes 30 ms on
// the wire but reports 1 ms of its own meets "p90 below 5ms" by default
// and breaches it from the client's side.
func TestLoadThresholdSide(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(30 * time.Millisecond)
		w.Header().Set("Server-Timing", "total;dur=1")
	}))
	t.Cleanup(srv.Close)
	plan := func(side string) string {
		return `server_timing = "Server-Timing"

[load]
rate = 20
warmup = "0s"
duration = "1s"

[[group]]
name = "slow"
path = "/slow"
expect = 200

[[threshold]]
metric = "p90"
below = "5ms"
` + side
	}
	for _, tc := range []struct {
		name, side string
		code       int
		says       string
	}{
		{"server by default", "", exit.Pass, "p90 of all groups (server side) is 1 ms over 20 answers, must be under 5 ms ok"},
		{"client when asked", `side = "client"`, exit.Regression, "must be under 5 ms FAIL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			err := RunIO(context.Background(), []string{"load", "--plan", writePlan(t, plan(tc.side)), "--target", srv.URL}, &IO{Out: &out, Err: &errb})
			if exit.Code(err) != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s%s", exit.Code(err), err, tc.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tc.says) {
				t.Errorf("output lacks %q:\n%s", tc.says, out.String())
			}
		})
	}
}
