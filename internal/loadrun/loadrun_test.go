package loadrun

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
)

func writePlan(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.toml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const group = "[[group]]\nname = \"a\"\npath = \"/a\"\nexpect = 200\n"

// TestSettings lays the command line's numbers over a real plan's [load].
func TestSettings(t *testing.T) {
	flat := writePlan(t, "[load]\nrate = 4\nwarmup = \"3s\"\nduration = \"5s\"\n"+group)
	staged := writePlan(t, "[load]\nrate = 1\n[[load.stage]]\ntarget = 5\nduration = \"1s\"\n"+group)
	for _, tc := range []struct {
		name    string
		plan    string
		o       Options
		want    plan.Load // Rate, Warmup, Duration compared
		refusal string
	}{
		{name: "the plan's", plan: flat, want: plan.Load{Rate: 4, Warmup: 3 * time.Second, Duration: 5 * time.Second}},
		{name: "flags win", plan: flat, o: Options{Rate: 9, Duration: time.Second, WarmupSet: true}, want: plan.Load{Rate: 9, Duration: time.Second}},
		{name: "a warm-up not given keeps the plan's", plan: flat, o: Options{Warmup: time.Second}, want: plan.Load{Rate: 4, Warmup: 3 * time.Second, Duration: 5 * time.Second}},
		{name: "stages own the duration", plan: staged, o: Options{Duration: time.Second}, refusal: "the plan's stages set the measured duration"},
		{name: "negative warm-up", plan: flat, o: Options{Warmup: -time.Second, WarmupSet: true}, refusal: "--warmup -1s is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := plan.ParseFile(tc.plan)
			if err != nil {
				t.Fatal(err)
			}
			l, err := tc.o.settings(p)
			if tc.refusal != "" {
				if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), tc.refusal) {
					t.Fatalf("err %v, want a refusal naming %q", err, tc.refusal)
				}
				return
			}
			if err != nil || l.Rate != tc.want.Rate || l.Warmup != tc.want.Warmup || l.Duration != tc.want.Duration {
				t.Fatalf("load %+v, %v; want %+v", l, err, tc.want)
			}
		})
	}
}

// TestRun drives a real HTTP server and passes.
func TestRun(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	var out bytes.Buffer
	report := filepath.Join(t.TempDir(), "load.json")
	err := Run(context.Background(), Options{Plan: writePlan(t, group), Target: srv.URL, Rate: 20, Duration: time.Second,
		WarmupSet: true, Seed: 1, Out: report, Stdout: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if _, err := os.Stat(report); err != nil || !strings.Contains(out.String(), srv.URL) {
		t.Fatalf("report %v, summary:\n%s", err, out.String())
	}
	if err := Run(context.Background(), Options{Plan: writePlan(t, group)}); exit.Code(err) != exit.CannotJudge {
		t.Fatalf("no target: %v, want a refusal", err)
	}
}
