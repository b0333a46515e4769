package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// perfgate is the binary under test, built once: these tests send it real
// signals and read its real exit codes.
var perfgate string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "perfgate-main-test")
	if err != nil {
		panic(err)
	}
	perfgate = filepath.Join(dir, "perfgate")
	if out, err := exec.Command("go", "build", "-o", perfgate, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("running perfgate: %v", err)
	}
	return ee.ExitCode()
}

// running lists the live processes whose command line mentions marker.
func running(t *testing.T, marker string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil || len(b) == 0 {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, marker) {
			if stat, err := os.ReadFile(strings.TrimSuffix(f, "cmdline") + "stat"); err == nil && strings.Contains(string(stat), ") Z ") {
				continue // a zombie holds nothing
			}
			found = append(found, cmd)
		}
	}
	return found
}

func TestBadPlanIsExit2NamingFileAndLine(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.toml")
	os.WriteFile(plan, []byte("[[group]]\nname = \"a\"\npath = \"/x/{nope}\"\nexpect = 200\n"), 0o644)
	cmd := exec.Command(perfgate, "ab", "--plan", plan, "--base-cmd", "sleep 60", "--head-cmd", "sleep 60", "--out", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	code := exitCode(t, cmd.Run())
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr.String())
	}
	msg := strings.TrimSpace(stderr.String())
	if !strings.Contains(msg, plan+":3:") || !strings.Contains(msg, "nope") {
		t.Errorf("the message does not name %s:3 and the placeholder: %q", plan, msg)
	}
	if strings.Count(msg, "\n") > 0 {
		t.Errorf("want one line, got:\n%s", msg)
	}
	if left := running(t, dir); len(left) > 0 {
		t.Errorf("a refused plan left processes running: %q", left)
	}
}

// SIGINT and SIGTERM stop a gate at once: exit 2 (a cut phase is not
// judged), and both arms and the store are gone.
func TestSignalStopsEverything(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			// A folder the postgres user can reach, so the store's data
			// dir lands inside it and a leftover server would show below.
			out, err := os.MkdirTemp("", "pg-sig-")
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(out, 0o755)
			t.Cleanup(func() { os.RemoveAll(out) })
			cmd := exec.Command(perfgate, "demo", "--out", out)
			cmd.Dir = out
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			// Wait for the first pair: by then the store and both arms run.
			sc := bufio.NewScanner(stderr)
			var log strings.Builder
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), "pair 1/4") {
					break
				}
			}
			if n := len(running(t, out)); n < 3 {
				t.Fatalf("want both arms and the store running before the signal, found %d processes (%q); log:\n%s", n, running(t, out), log.String())
			}
			time.Sleep(time.Second)
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			go func() {
				for sc.Scan() {
				}
			}()
			code := exitCode(t, cmd.Wait())
			took := time.Since(sent)
			t.Logf("%s: exit %d after %s", sig, code, took.Round(time.Millisecond))
			if code != 2 {
				t.Errorf("exit %d after %s, want 2", code, sig)
			}
			if took > 20*time.Second {
				t.Errorf("took %s to stop", took)
			}
			if left := running(t, out); len(left) > 0 {
				t.Errorf("left running after %s: %q", sig, left)
			}
		})
	}
}
