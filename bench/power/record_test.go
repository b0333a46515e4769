package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFormerProfileNames: a recording made before the "seed" profile was
// renamed "ferrofed" reads as the ferrofed profile (flags' "*" kept), so
// --resample and --from pool it with new recordings; --profile takes the
// former name too.
func TestFormerProfileNames(t *testing.T) {
	for _, tc := range []struct{ recorded, want string }{
		{"seed", "ferrofed"},
		{"seed*", "ferrofed*"},
		{"ferrofed", "ferrofed"},
		{"short*", "short*"},
	} {
		path := filepath.Join(t.TempDir(), "results.jsonl")
		line := `{"profile":{"name":"` + tc.recorded + `","pairs":4,"rate":20},"scenario":"aa","latency_factor":1,"run":1,"code":0,"verdict":"pass"}` + "\n"
		if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		recs, err := readRecords(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1 || recs[0].Profile.Name != tc.want {
			t.Errorf("a recording of profile %q reads as %+v, want profile %q", tc.recorded, recs, tc.want)
		}
		if got := targetOf(recs[0]); tc.want == "ferrofed" && got != "example, profile ferrofed" {
			t.Errorf("targetOf = %q, want example, profile ferrofed", got)
		}
	}
	if _, ok := profiles[currentProfileName("seed")]; !ok {
		t.Error(`--profile seed no longer finds FerroFED's gate's profile`)
	}
}
