package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

// A plan's [[threshold]] is evaluated by perfgate load, as k6 does: a
// breach exits 1 and names the threshold; a met one passes.
func TestLoadThresholds(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
	}))
	t.Cleanup(srv.Close)
	plan := func(below string) string {
		return `[load]
rate = 20
warmup = "0s"
duration = "1s"

[[group]]
name = "slow"
path = "/slow"
expect = 200

[[threshold]]
group = "slow"
metric = "p90"
below = "` + below + `"

[[threshold]]
metric = "success"
min = 99
`
	}
	tests := []struct {
		name  string
		below string
		code  int
		says  []string
	}{
		{"breached", "5ms", exit.Regression, []string{"threshold (plan line 11): p90 of group slow is", "must be under 5 ms FAIL", "success of all groups (answered as planned) is 100 % over 20 requests, must be at least 99 % ok"}},
		{"met", "2s", exit.Pass, []string{"must be under 2000 ms ok"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "load.json")
			var out, errb bytes.Buffer
			err := RunIO(context.Background(), []string{"load", "--plan", writePlan(t, plan(tc.below)), "--target", srv.URL, "--out", report}, &IO{Out: &out, Err: &errb})
			if exit.Code(err) != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s%s", exit.Code(err), err, tc.code, out.String(), errb.String())
			}
			for _, want := range tc.says {
				if !strings.Contains(out.String(), want) {
					t.Errorf("summary lacks %q:\n%s", want, out.String())
				}
			}
			if tc.code == exit.Regression && !strings.Contains(err.Error(), "p90 of group slow") {
				t.Errorf("error %q does not name the threshold", err)
			}
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			var rep struct{ Notes []string }
			if err := json.Unmarshal(b, &rep); err != nil || len(rep.Notes) != 2 {
				t.Errorf("the load report's notes %q (%v), want both thresholds", rep.Notes, err)
			}
		})
	}
}

// --rate replaces the plan's rate after parsing; the plan's limits still
// hold, so a rate past a group's max_rate is refused before any request.
func TestLoadRateFlagChecked(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	path := writePlan(t, `[load]
rate = 2
duration = "1s"
warmup = "0s"

[[group]]
name = "emergency"
path = "/e"
expect = 200
max_rate = 5
`)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--rate", "50"}, `sends group "emergency" 50 arrivals/s (a 1/1 share of 50/s), reaching its max_rate of 5 (line 10); write a rate of 4 or less`},
		{[]string{"--duration", "1ns"}, "too short to measure anything"},
	} {
		var out, errb bytes.Buffer
		err := RunIO(context.Background(), append([]string{"load", "--plan", path, "--target", srv.URL}, tc.args...), &IO{Out: &out, Err: &errb})
		if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), path+":") {
			t.Errorf("%v: exit %d %v, want exit 2 naming the plan and %q", tc.args, exit.Code(err), err, tc.says)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the target got %d requests from a refused run", n)
	}
}

// A fresh data source that ran out and reshuffled measured a primed
// cache: perfgate load says so under its summary and in its report.
func TestLoadCachePrimedNote(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ids.txt"), []byte("a\nb\nc\nd\ne\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "plan.toml")
	if err := os.WriteFile(path, []byte(`[data.ids]
file = "ids.txt"
warmup_fraction = 0
exhausted = "reshuffle"

[load]
rate = 20
warmup = "0s"
duration = "1s"

[[group]]
name = "item"
path = "/items/{ids}"
expect = 200
`), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "load.json")
	var out, errb bytes.Buffer
	if err := RunIO(context.Background(), []string{"load", "--plan", path, "--target", srv.URL, "--out", report}, &IO{Out: &out, Err: &errb}); err != nil {
		t.Fatalf("perfgate load: %v\n%s%s", err, out.String(), errb.String())
	}
	const want = "values ran out; 15 of 20 draws repeated a value (cache primed)"
	if !strings.Contains(out.String(), "note: data ids: the measured part's 5 "+want) {
		t.Errorf("summary lacks the primed-cache note:\n%s", out.String())
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), want) {
		t.Errorf("the load report lacks the primed-cache note")
	}
}
