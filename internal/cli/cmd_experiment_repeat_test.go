package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment"
	"github.com/perfgate/perfgate/internal/experiment/target"
	"github.com/perfgate/perfgate/internal/experiment/target/targettest"
)

// Three runs of one experiment, each written as its own report, set side
// by side by --repeat; merge --side-by-side reads those reports back into
// the same tables, and refuses runs of different plans.
func experimentRepeatSideBySide(t *testing.T) {
	// 100 ms of service, for experimentCommand's reasons: at 20 ms one of
	// the three runs, starved beside the suite, served 68/s at c=2 against
	// the others' 88 and 96, and found no knee.
	url := targettest.Start(t, target.Config{Workers: 2, Service: 100 * time.Millisecond})
	planPath := writePlan(t, experimentGroups+`
[experiment]
model = "closed"
latency = "p50"
concurrency = [1, 2, 4]
warmup = "100ms"
stage = "700ms"
`)
	dir := t.TempDir()
	out, htmlOut := filepath.Join(dir, "exp.json"), filepath.Join(dir, "side.html")
	text, err := runCLI(t, context.Background(), "experiment", "--plan", planPath, "--target", url, "--repeat", "3", "--out", out, "--html", htmlOut)
	if err != nil {
		t.Fatalf("experiment --repeat 3: %v\n%s", err, text)
	}
	var files []string
	for i, name := range []string{"exp-1.json", "exp-2.json", "exp-3.json"} {
		path := filepath.Join(dir, name)
		rep, err := experiment.ReadFile(path)
		if err != nil {
			t.Fatalf("run %d's report: %v", i+1, err)
		}
		if rep.Knee == nil {
			t.Errorf("run %d found no knee: %s", i+1, rep.Verdict)
		}
		files = append(files, path)
	}
	for _, want := range []string{"run 3 of 3:", "3 runs of the closed model", "served per second (answers/s):", "p50 latency (ms):",
		"routine numbers:", "the knee over 3 runs: median", "a spread of", filepath.Join(dir, "exp-2.json")} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	page, err := os.ReadFile(htmlOut)
	if err != nil {
		t.Fatal(err)
	}
	// One chart per figure (served, latency, success) and the knee's.
	if n := strings.Count(string(page), "<svg"); n != 4 || !strings.Contains(string(page), "the knee, run by run") {
		t.Errorf("the side-by-side page holds %d charts, want 4 with the knee's", n)
	}

	sideJSON := filepath.Join(dir, "side.json")
	text, err = runCLI(t, context.Background(), append([]string{"merge", "--side-by-side", "--out", sideJSON}, files...)...)
	if err != nil {
		t.Fatalf("merge --side-by-side: %v\n%s", err, text)
	}
	if !strings.Contains(text, "the knee over 3 runs: median") {
		t.Errorf("merge --side-by-side:\n%s", text)
	}
	data, err := os.ReadFile(sideJSON)
	if err != nil || !strings.Contains(string(data), `"kind": "perfgate.experiment.side-by-side"`) || !strings.Contains(string(data), `"spread_pct"`) {
		t.Errorf("side-by-side JSON (%v):\n%s", err, data)
	}

	// A run of another plan is not a repeat.
	other, err := experiment.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	other.Stages = other.Stages[:2]
	otherPath := filepath.Join(dir, "other.json")
	if err := other.WriteFile(otherPath); err != nil {
		t.Fatal(err)
	}
	text, err = runCLI(t, context.Background(), "merge", "--side-by-side", files[0], otherPath)
	if exit.Code(err) != 2 || !strings.Contains(err.Error(), "repeats must run the same plan") {
		t.Errorf("runs of different plans: exit %d, %v\n%s", exit.Code(err), err, text)
	}
	if _, err := runCLI(t, context.Background(), "experiment", "--plan", planPath, "--target", url, "--repeat", "0"); exit.Code(err) != 2 || !strings.Contains(err.Error(), "write --repeat 3") {
		t.Errorf("--repeat 0: %v", err)
	}
}
