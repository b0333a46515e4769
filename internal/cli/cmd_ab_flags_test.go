package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
)

// TestABRefusesWhatItWouldIgnore: perfgate ab once started a run without
// a word for settings it did not read: a word that ends the flags
// (`--store false` leaves "false" and all after it), a --base-*, --head-*
// or --ready beside --arms, a --rate of NaN. Each is refused before
// anything starts, naming what to write instead.
func TestABRefusesWhatItWouldIgnore(t *testing.T) {
	planPath := writePlan(t, "[[group]]\nname = \"a\"\npath = \"/\"\nexpect = 200\n")
	arms := filepath.Join(t.TempDir(), "arms.toml")
	if err := os.WriteFile(arms, []byte("[base]\ncommand = [\"sleep\", \"60\", \"@PORT@\"]\n[head]\ncommand = [\"sleep\", \"60\", \"@PORT@\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmds := []string{"--base-cmd", "sleep 60 @PORT@", "--head-cmd", "sleep 60 @PORT@"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a bool flag's value after a space", append(cmds, "--store", "false", "--pairs", "2"), `perfgate ab: unexpected argument "false": every setting is a flag, and a flag's value follows it or an = (--store=false)`},
		{"--base-cmd beside --arms", []string{"--arms", arms, "--base-cmd", "sleep 60 @PORT@"}, "ab: --base-cmd cannot go with --arms: the arms file " + arms + " describes both arms"},
		{"--ready and --head-url beside --arms", []string{"--ready", "/healthz", "--arms", arms, "--head-url", "http://127.0.0.1:@PORT@"}, "ab: --head-url, --ready cannot go with --arms"},
		{"--rate NaN", append(cmds, "--rate", "NaN"), "ab: --rate NaN is not an arrival rate; write --rate 30, or leave it out for the default"},
		{"--rate Inf", append(cmds, "--rate", "Inf"), "ab: --rate +Inf is not an arrival rate"},
		{"--pairs negative", append(cmds, "--pairs", "-1"), "ab: --pairs -1 is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			var stdout, stderr strings.Builder
			err := RunIO(t.Context(), append([]string{"ab", "--plan", planPath, "--out", out, "--idle", "0s"}, tc.args...), &IO{Out: &stdout, Err: &stderr})
			if exit.Code(err) != exit.CannotJudge || err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("%v, want exit 2 starting %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(out, "base.log")); err == nil {
				t.Error("an arm was started")
			}
		})
	}
}

// TestABPairsFlagRunsFixed: --pairs N over pairs = "auto" runs N fixed
// pairs (docs/ab.md), also when N is the plan's max_pairs, which read as
// the plan's own adaptive count and ran adaptive.
func TestABPairsFlagRunsFixed(t *testing.T) {
	p, err := plan.Parse("plan.toml", []byte("[ab]\npairs = \"auto\"\n\n[[group]]\nname = \"a\"\npath = \"/\"\nexpect = 200\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{3, p.AB.MaxPairs} {
		ab := p.AB
		prof := profileFlags{pairs: n}
		if err := prof.apply(&ab); err != nil {
			t.Fatal(err)
		}
		if ab.Auto || ab.Pairs != n || ab.MinPairs != 0 || ab.MaxPairs != 0 {
			t.Errorf("--pairs %d over pairs = \"auto\" gave %+v, want %d fixed pairs", n, ab, n)
		}
	}
	ab := p.AB
	if err := (&profileFlags{}).apply(&ab); err != nil || !ab.Auto {
		t.Errorf("without --pairs the plan's adaptive pairs became %+v (%v)", ab, err)
	}
}
