package cli

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
)

// TestABFlagsOffLoopback: --base-url, --head-url and --ready off loopback
// are refused before any arm starts.
func TestABFlagsOffLoopback(t *testing.T) {
	planPath := writePlan(t, "[[group]]\nname = \"a\"\npath = \"/\"\nexpect = 200\n")
	for _, tc := range []struct{ flag, val, want string }{
		{"--base-url", "http://10.1.2.3:@PORT@", `ab: --base-url "http://10.1.2.3:@PORT@" names 10.1.2.3, which is not loopback`},
		{"--head-url", "tcp://127.0.0.1:@PORT@", `ab: --head-url "tcp://127.0.0.1:@PORT@" has scheme "tcp"; write http:// or https://`},
		{"--ready", "http://example.com/h", `ab: --ready "http://example.com/h" names example.com, which is not loopback`},
		// The refusal of credentials in a URL must not print them.
		{"--base-url", "http://u:hunter2@127.0.0.1:@PORT@", `ab: --base-url "http://***@127.0.0.1:@PORT@" holds a user name or password`},
	} {
		var out, errb strings.Builder
		err := RunIO(t.Context(), []string{"ab", "--plan", planPath, "--out", t.TempDir(), "--base-cmd", "sleep 60", "--head-cmd", "sleep 60", tc.flag, tc.val},
			&IO{Out: &out, Err: &errb})
		if exit.Code(err) != exit.CannotJudge || err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s %s: %v", tc.flag, tc.val, err)
		}
	}
}

// TestABHelpShowsNoMadeUpDefaults: `ab -h` once showed "(default -1ns)"
// for --warmup and --idle; a given 0s still means none.
func TestABHelpShowsNoMadeUpDefaults(t *testing.T) {
	var out, errb strings.Builder
	if err := RunIO(t.Context(), []string{"ab", "-h"}, &IO{Out: &out, Err: &errb}); err != nil {
		t.Fatalf("ab -h: %v", err)
	}
	help := errb.String() + out.String()
	if strings.Contains(help, "-1ns") || !strings.Contains(help, "-idle") || !strings.Contains(help, "0s skips it") {
		t.Fatalf("ab -h:\n%s", help)
	}
	var prof profileFlags
	fs := newFlags("ab", &IO{Out: &out, Err: &errb})
	prof.register(fs)
	if err := fs.Parse([]string{"--idle", "0s", "--warmup", "2s"}); err != nil {
		t.Fatal(err)
	}
	ab := plan.Default().AB
	if err := prof.apply(&ab); err != nil || ab.Idle != 0 || ab.Warmup != 2*time.Second || ab.Measure != plan.Default().AB.Measure {
		t.Fatalf("--idle 0s --warmup 2s gave %+v (%v)", ab, err)
	}
	if err := fs.Parse([]string{"--idle", "-1s"}); err == nil {
		t.Fatal("--idle -1s accepted")
	}
}

// TestABVariantNeedsAPortOfItsOwn: the variant arm of a plan's variant
// control is the head's command started again beside the head, so a head
// whose port the arms file or --head-url fixes is refused before any arm
// starts, naming the control's line; with @PORT@ the same plan is let
// through to the run (which these arms, sleeping, never get ready for).
func TestABVariantNeedsAPortOfItsOwn(t *testing.T) {
	planPath := writePlan(t, "[[group]]\nname = \"a\"\npath = \"/\"\nexpect = 200\n\n[[counter]]\nname = \"n\"\ngroup = \"a\"\nurl = \"/n\"\nmax_per_request = 5\n\n[[control]]\nkind = \"variant\"\noverrides = [\"A=1\"]\ncounter = \"n\"\n")
	dir := t.TempDir()
	arms := func(head string) string {
		f, err := os.CreateTemp(dir, "arms-*.toml")
		if err != nil {
			t.Fatal(err)
		}
		p := f.Name()
		f.Close()
		// The base exits at once: a run let through ends there.
		if err := os.WriteFile(p, []byte("[base]\ncommand = [\"sh\", \"-c\", \"exit 3\", \"@PORT@\"]\n\n[head]\n"+head), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"arms file with a fixed port", []string{"--arms", arms("command = [\"sleep\", \"60\"]\nport = 8080\n")}, "the head's port is fixed (8080)"},
		{"--head-url with a fixed port", []string{"--base-cmd", "exit 3 @PORT@", "--head-cmd", "sleep 60", "--head-url", "http://127.0.0.1:8080"}, "the head's URL http://127.0.0.1:8080 names a fixed port"},
		{"@PORT@", []string{"--arms", arms("command = [\"sleep\", \"60\", \"@PORT@\"]\n")}, "arm base exited before it was ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb strings.Builder
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			args := append([]string{"ab", "--plan", planPath, "--out", t.TempDir(), "--idle", "0s"}, tc.args...)
			err := RunIO(ctx, args, &IO{Out: &out, Err: &errb})
			if exit.Code(err) != exit.CannotJudge || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want exit 2 naming %q", err, tc.want)
			}
			if tc.name != "@PORT@" && !strings.Contains(err.Error(), "plan.toml:12:") {
				t.Errorf("%v does not name the control's line", err)
			}
		})
	}
}
