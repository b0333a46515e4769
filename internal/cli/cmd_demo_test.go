package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/demo"
	"github.com/perfgate/perfgate/internal/testtier"
)

// storeFolderOf finds the store runtime folder (data dir, private key)
// owned by pid: under the demo's store folder, or the temp folder when the
// postgres user cannot reach that (tmp, the demo's $TMPDIR).
func storeFolderOf(out, tmp string, pid int) string {
	for _, root := range []string{filepath.Join(out, "store"), tmp} {
		owners, _ := filepath.Glob(filepath.Join(root, "perfgate-pg-*", "owner"))
		for _, f := range owners {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			fields := strings.Split(strings.TrimSpace(string(b)), "/")
			if len(fields) == 5 && fields[3] == strconv.Itoa(pid) {
				return filepath.Dir(f)
			}
		}
	}
	return ""
}

// killJanitorOf kills the store janitor that watches folder.
func killJanitorOf(t *testing.T, folder string) {
	t.Helper()
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		b, err := os.ReadFile(c)
		if err != nil || !strings.Contains(string(b), "perfgate-store-janitor\x00"+folder+"\x00") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(c)))
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no store janitor watches %s", folder)
}

// A demo killed with SIGKILL runs no Stop: its PostgreSQL dies with it.
// When its store's janitor dies as well, the store's data folder (about
// 40 MB, with the server's private key) stays; the next demo removes it at
// its start and says so. The demos run without the compose dependency
// (--no-docker): what a killed demo leaves in docker, and how the next one
// removes it, is internal/demo's test. Killed before its pairs, the demo
// judges nothing, so the test runs beside the package's other parallel ones.
func TestKilledDemoLeavesNoStoreFolder(t *testing.T) {
	testtier.Heavy(t, testtier.Postgres)
	if !demo.HavePostgres() {
		t.Fatal("this test needs PostgreSQL's initdb and postgres (apt-get install postgresql)")
	}
	t.Parallel()
	bin := buildPerfgate(t)
	out := filepath.Join(t.TempDir(), "demo")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	// Every gate sweeps the killed runs' folders from the temp folder at its
	// start, so a gate of a parallel test could remove the killed demo's
	// before the next demo does. The two demos get a temp folder of their
	// own, reachable by the postgres user, with a short path (the socket's
	// path must fit sun_path).
	tmp, err := os.MkdirTemp("", "pgkd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	ownTmp := func(c *exec.Cmd) *exec.Cmd { c.Env = append(c.Env, "TMPDIR="+tmp); return c }

	first := ownTmp(perfgateIn(ctx, bin, t.TempDir(), "demo", "--out", out, "--no-docker"))
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- first.Wait() }()
	t.Cleanup(func() { _ = first.Process.Kill(); <-done; done <- nil })
	var folder string
	for folder == "" {
		// The store is ready once the arms start: head.log exists.
		if _, err := os.Stat(filepath.Join(out, "head.log")); err == nil {
			folder = storeFolderOf(out, tmp, first.Process.Pid)
			if folder == "" {
				t.Fatal("the demo's arms run but no store folder names it as its owner")
			}
			break
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the demo ended before its arms started: %v", err)
		case <-ctx.Done():
			t.Fatal("the demo's arms never started")
		case <-time.After(200 * time.Millisecond):
		}
	}
	// Everything of the demo dies at once, as when its container stops:
	// the store's janitor too, which would otherwise remove the folder
	// the moment the demo dies (internal/armdb tests that).
	killJanitorOf(t, folder)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	done <- nil
	// Its postmaster dies by its death signal; give it the moment it takes.
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(filepath.Join(folder, "data")); err != nil {
		t.Fatalf("the killed demo's data dir is gone by itself (%v): nothing to test", err)
	}
	t.Cleanup(func() { os.RemoveAll(folder) })

	// The next demo: stopped (SIGTERM) as soon as it started its own store.
	second := ownTmp(perfgateIn(ctx, bin, t.TempDir(), "demo", "--out", out, "--no-docker"))
	stderr := attach(t, second)
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	done2 := make(chan error, 1)
	go func() { done2 <- second.Wait() }()
	t.Cleanup(func() { _ = second.Process.Kill(); <-done2; done2 <- nil })
	for !strings.Contains(stderr.String(), "store: PostgreSQL") {
		select {
		case err := <-done2:
			done2 <- err
			t.Fatalf("the next demo ended before its store started (%v):\n%s", err, stderr.String())
		case <-ctx.Done():
			t.Fatalf("the next demo never started its store:\n%s", stderr.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	_ = second.Process.Signal(syscall.SIGTERM)
	<-done2
	done2 <- nil
	if _, err := os.Stat(folder); !os.IsNotExist(err) {
		t.Errorf("the killed demo's store folder %s is still there after the next demo started (%v):\n%s", folder, err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "store: removed "+folder) {
		t.Errorf("the next demo did not say it removed %s:\n%s", folder, stderr.String())
	}
	if left := storeFolderOf(out, tmp, second.Process.Pid); left != "" {
		t.Errorf("the stopped demo left its own store folder %s", left)
	}
}

// demo -h names the demo's short profile as the profile flags' defaults,
// not a plan's (8 pairs at 30/s), which the demo never runs.
func TestDemoHelpNamesTheDemosProfile(t *testing.T) {
	var out, errb strings.Builder
	if err := RunIO(t.Context(), []string{"demo", "-h"}, &IO{Out: &out, Err: &errb}); err != nil {
		t.Fatalf("demo -h: %v", err)
	}
	help := errb.String() + out.String()
	p := demo.Profile
	for _, want := range []string{
		fmt.Sprintf("default: the demo's %d;", p.Pairs),
		fmt.Sprintf("default: the demo's %g/s;", p.Rate),
		fmt.Sprintf("default: the demo's %gs;", p.Warmup.Seconds()),
		fmt.Sprintf("default: the demo's %gs;", p.Measure.Seconds()),
		fmt.Sprintf("default: the demo's %gs;", p.Idle.Seconds()),
	} {
		if !strings.Contains(help, want) {
			t.Errorf("demo -h lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "the plan's, ") {
		t.Errorf("demo -h names a plan's defaults:\n%s", help)
	}
}
