package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/plan"
)

// writeEarlierReports leaves what a finished earlier run wrote in out.
func writeEarlierReports(t *testing.T, out string) {
	t.Helper()
	for _, f := range []string{ReportFile, SummaryFile} {
		if err := os.WriteFile(filepath.Join(out, f), []byte("an earlier run's verdict\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func assertNoReports(t *testing.T, out string) {
	t.Helper()
	for _, f := range []string{ReportFile, SummaryFile} {
		if _, err := os.Stat(filepath.Join(out, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s of the earlier run is still in %s (%v): the workflow would upload it as this run's", f, out, err)
		}
	}
}

// A run interrupted mid-way writes no report of its own; the folder must
// not hold the previous run's in its place.
func TestInterruptedRunLeavesNoEarlierReport(t *testing.T) {
	out := t.TempDir()
	writeEarlierReports(t, out)
	p := shortPlan(t, 0)
	vars, err := plan.ResolveVars(p, nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		// Interrupt once both arms run, as a SIGTERM would.
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(out, "head.log")); err == nil {
				time.Sleep(500 * time.Millisecond)
				cancel()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	_, err = Run(ctx, Options{Plan: p, Vars: vars, Arms: Pair(service(), service()), OutDir: out, Seed: 1})
	if err == nil {
		t.Fatal("an interrupted run returned no error")
	}
	t.Logf("interrupted: %v", err)
	assertNoReports(t, out)
}

// `perfgate run` stopped before the gate starts (here: nothing prepared)
// clears them too.
func TestPreparedRunClearsEarlierReports(t *testing.T) {
	target := t.TempDir()
	out := filepath.Join(target, "perf-run")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	writeEarlierReports(t, out)
	_, err := Prepared{Target: target, Repo: t.TempDir()}.Run(context.Background())
	if err == nil {
		t.Fatal("a run over nothing prepared returned no error")
	}
	assertNoReports(t, out)
}
