package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/armsfile"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
)

func TestCommandArms(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, head CommandArm
		ready      string
		refusal    string // "" for none
	}{
		{name: "loopback", base: CommandArm{Cmd: "a @PORT@", URL: "http://127.0.0.1:@PORT@"}, head: CommandArm{Cmd: "b --addr=127.0.0.1:@PORT@"}, ready: "/healthz"},
		{name: "fixed url, no @PORT@", base: CommandArm{Cmd: "a --addr 127.0.0.1:8070", URL: "http://127.0.0.1:8070"}, head: CommandArm{Cmd: "b @PORT@"}},
		{name: "remote head", base: CommandArm{Cmd: "a"}, head: CommandArm{Cmd: "b", URL: "http://example.com/"}, refusal: "ab: --head-url \"http://example.com/\""},
		{name: "credentials hidden", base: CommandArm{Cmd: "a", URL: "http://me:hunter2@example.com:@PORT@/"}, head: CommandArm{Cmd: "b"}, refusal: "ab: --base-url \"http://***@example.com:@PORT@/\""},
		{name: "remote ready", base: CommandArm{Cmd: "a"}, head: CommandArm{Cmd: "b"}, ready: "tcp://10.0.0.1:80", refusal: "ab: --ready"},
		// Such an arm listens where perfgate never sends: it was let
		// through to wait out the ready timeout.
		{name: "base without @PORT@", base: CommandArm{Cmd: "a --addr 127.0.0.1:8070"}, head: CommandArm{Cmd: "b @PORT@"}, refusal: "ab: --base-cmd names @PORT@ nowhere"},
		{name: "head without @PORT@, url with it", base: CommandArm{Cmd: "a @PORT@"}, head: CommandArm{Cmd: "b", URL: "http://127.0.0.1:@PORT@"}, refusal: "ab: --head-cmd names @PORT@ nowhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arms, err := CommandArms(tc.base, tc.head, tc.ready)
			if tc.refusal == "" {
				if err != nil || len(arms) != 2 || arms[1].Command[2] != "exec "+tc.head.Cmd || arms[0].Ready != tc.ready || arms[0].Cwd != StartHere || arms[1].Cwd != StartHere {
					t.Fatalf("arms %+v, %v", arms, err)
				}
				return
			}
			if exit.Code(err) != exit.CannotJudge || err == nil || !strings.HasPrefix(err.Error(), tc.refusal) || strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error %v, want a refusal starting %q without the password", err, tc.refusal)
			}
		})
	}
}

// TestABArmsStartWhereTheOperatorRuns: perfgate ab's arms, from the
// command line or an arms file, start in the folder perfgate runs in, so
// a relative program path (docs/ab.md's target/perf-head/bin/svc) is
// found there; they started in their own @DIR@, where it is not.
func TestABArmsStartWhereTheOperatorRuns(t *testing.T) {
	here := t.TempDir()
	t.Chdir(here)
	if err := os.Mkdir("bin", 0o755); err != nil {
		t.Fatal(err)
	}
	// The arm writes down where it started, then exits before it is ready.
	if err := os.WriteFile(filepath.Join("bin", "svc"), []byte("#!/bin/sh\npwd -P > \"$1/started-in\"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fromFlags, err := CommandArms(CommandArm{Cmd: "bin/svc @DIR@ @PORT@"}, CommandArm{Cmd: "bin/svc @DIR@ @PORT@"}, "")
	if err != nil {
		t.Fatal(err)
	}
	f, err := armsfile.Parse("arms.toml", []byte("[base]\ncommand = [\"bin/svc\", \"@DIR@\", \"@PORT@\"]\n[head]\ncommand = [\"bin/svc\", \"@DIR@\", \"@PORT@\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	wantDir, err := filepath.EvalSymlinks(here)
	if err != nil {
		t.Fatal(err)
	}
	p := shortPlan(t, 0)
	vars, err := plan.ResolveVars(p, nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for name, arms := range map[string][]ArmSpec{"flags": fromFlags, "arms file": FromArmsFile(f)} {
		out := filepath.Join(here, "out-"+strings.ReplaceAll(name, " ", "-"))
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		_, err := Run(ctx, Options{Plan: p, Vars: vars, Arms: arms, OutDir: out, Seed: 1})
		cancel()
		if err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
			t.Fatalf("%s: %v, want the base's exit before it was ready", name, err)
		}
		got, err := os.ReadFile(filepath.Join(out, "base", "started-in"))
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(out, "base.log"))
			t.Fatalf("%s: the base never ran bin/svc (%v); its log:\n%s", name, err, log)
		}
		if strings.TrimSpace(string(got)) != wantDir {
			t.Errorf("%s: the base started in %s, want %s", name, strings.TrimSpace(string(got)), wantDir)
		}
	}
}

// TestArmsInOneFolderAreRefused: two arms in one folder would write one
// store.dsn, the later arm's database taking both arms' commits; the run
// is refused before any arm starts, also when a given folder is the other
// arm's default one (OUT/base).
func TestArmsInOneFolderAreRefused(t *testing.T) {
	p := shortPlan(t, 0)
	vars, err := plan.ResolveVars(p, nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, tc := range []struct{ name, baseDir, headDir string }{
		{"--base-dir and --head-dir alike", filepath.Join(out, "arm"), filepath.Join(out, "arm") + "/."},
		{"the head in the base's default folder", "", filepath.Join(out, "base")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "started")
			cmd := "touch " + marker + "; sleep 60 @PORT@"
			arms, err := CommandArms(CommandArm{Cmd: cmd, Dir: tc.baseDir}, CommandArm{Cmd: cmd, Dir: tc.headDir}, "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = Run(t.Context(), Options{Plan: p, Vars: vars, Arms: arms, OutDir: out, Seed: 1})
			if exit.Code(err) != exit.CannotJudge || err == nil || !strings.Contains(err.Error(), "the base and head arms would share the folder") {
				t.Fatalf("%v, want exit 2 naming the shared folder", err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("an arm started before the refusal")
			}
		})
	}
}
