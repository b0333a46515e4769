package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/perfgate/perfgate/internal/verdict"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// timestamps differ from run to run; the golden file shows where they go.
var timestamp = regexp.MustCompile(`"(started_at|completed_at)":"[^"]+"`)

// TestWireGolden records every request a pull request's whole publishing
// sends (the check started twice, completed with annotations, the comment,
// the release line) in testdata/wire.golden, so a change to what GitHub
// receives shows in review. Refresh with go test -run Wire -update.
func TestWireGolden(t *testing.T) {
	f := newFakeGitHub(t)
	f.addRelease("v1.4.0", "## What's changed\n* faster search", false)
	c := f.client()
	ctx := context.Background()
	target := prTarget("perfgate (api)")
	steps := []func() error{
		func() error { return c.CheckInProgress(ctx, target) },
		func() error { return c.CheckInProgress(ctx, target) },
		func() error {
			return c.CheckCompleted(ctx, target, verdict.Outcome{
				Word: verdict.WordCannotJudge, Title: "the base fell behind its schedule",
				Summary:     "## perfgate: cannot judge\n\nThe base arm fell behind its schedule in pair 3.\n",
				Annotations: annotations(2), DetailsURL: "https://github.com/acme/api/actions/runs/42",
			})
		},
		func() error { return c.UpsertComment(ctx, target, "## perfgate: cannot judge") },
		func() error {
			return c.SetReleaseLine(ctx, verdict.CheckTarget{Owner: "acme", Repo: "api"}, "v1.4.0", "Performance gate: compared with v1.3.0; pass.")
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
	var out bytes.Buffer
	for _, call := range f.callsTo("", "") {
		fmt.Fprintf(&out, "%s %s", call.Method, call.Path)
		if q := call.Query.Encode(); q != "" {
			fmt.Fprintf(&out, "?%s", q)
		}
		out.WriteString("\n")
		if len(call.Body) > 0 {
			var pretty bytes.Buffer
			body := timestamp.ReplaceAll(bytes.TrimSpace(call.Body), []byte(`"$1":"<time>"`))
			if err := json.Indent(&pretty, body, "  ", "  "); err != nil {
				t.Fatalf("%s %s: body is not JSON: %v", call.Method, call.Path, err)
			}
			fmt.Fprintf(&out, "  %s\n", pretty.Bytes())
		}
	}
	golden := filepath.Join("testdata", "wire.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run Wire -update to write it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("requests differ from %s (go test -run Wire -update to accept):\n%s", golden, out.String())
	}
}
