package gate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/services"
	"github.com/perfgate/perfgate/internal/testtier"
)

// The run id is what a user needs to remove the services of a killed
// `services up`; on a terminal, where stdout and stderr interleave, it
// must come before the plan table, which can be long enough to push it
// out of sight.
func TestServicesUpSaysItsRunIDBeforeThePlan(t *testing.T) {
	testtier.Heavy(t, testtier.Docker)
	trees := map[string]string{}
	for _, arm := range []string{"head", "base"} {
		dir := filepath.Join(t.TempDir(), arm)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services:\n  api:\n    image: ferroapi:"+arm+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		trees[arm] = dir
	}
	// A log folder that cannot be made stops `up` after it has said
	// everything and before any container starts.
	logDir := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(logDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	runID := fmt.Sprintf("order%d", time.Now().UnixNano())
	t.Cleanup(func() { services.DownByLabel(context.Background(), runID) })
	var terminal bytes.Buffer
	err := ServicesUp(context.Background(), ServicesUpOptions{
		Head:   services.Tree{Dir: trees["head"], Files: []string{"compose.yaml"}, Project: "order"},
		Base:   services.Tree{Dir: trees["base"], Files: []string{"compose.yaml"}, Project: "order"},
		RunID:  runID,
		LogDir: filepath.Join(logDir, "services"),
		Wait:   time.Second,
		Out:    &terminal, Err: &terminal,
	})
	if err == nil || !strings.Contains(err.Error(), "log folder") {
		t.Fatalf("ServicesUp with a file for its log folder: %v, want the log folder named", err)
	}
	out := terminal.String()
	id := strings.Index(out, "run "+runID+": remove its services with: perfgate services down --run-id "+runID)
	table := strings.Index(out, "GROUP")
	if id < 0 || table < 0 || id > table {
		t.Fatalf("the run id (at %d) must come before the plan (at %d):\n%s", id, table, out)
	}
}
