package armdb

import (
	"bufio"
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

	"github.com/perfgate/perfgate/internal/testtier"
)

// holdEnv makes the test binary a process that holds a server until it is
// killed: a run that never gets to Stop.
const holdEnv = "STORE_TEST_HOLD_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holdEnv); dir != "" {
		holdServer(dir)
		return
	}
	os.Exit(m.Run())
}

func holdServer(dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{Dir: dir, Settings: quiet(), Owner: pidOwner(os.Getpid())})
	if err != nil {
		fmt.Println("failed", err)
		os.Exit(1)
	}
	fmt.Println("ready", s.PID())
	<-ctx.Done() // killed long before
	_ = s.Stop()
}

// pidOwner and pidGone are the tests' owner: a pid alone, enough on a
// machine where the test holds every pid it names.
func pidOwner(pid int) string { return "pid:" + strconv.Itoa(pid) }

func pidGone(owner string) bool {
	pid, err := strconv.Atoi(strings.TrimPrefix(owner, "pid:"))
	if err != nil {
		return false
	}
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(st), ") Z ")
}

// runtimeOf finds the runtime folder whose owner file names owner, under
// dir or the temp folder.
func runtimeOf(t *testing.T, dir, owner string) string {
	t.Helper()
	for _, root := range []string{dir, os.TempDir()} {
		found, _ := filepath.Glob(filepath.Join(root, runtimePrefix+"*", ownerFile))
		for _, f := range found {
			if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) == owner {
				return filepath.Dir(f)
			}
		}
	}
	t.Fatalf("no runtime folder owned by %s under %s or %s", owner, dir, os.TempDir())
	return ""
}

// holdAndKill starts a process holding a server in dir, kills it with
// SIGKILL (it runs no Stop) and returns its runtime folder, once its
// postmaster, killed by its death signal, is gone.
func holdAndKill(t *testing.T, dir string, alsoKillJanitor bool) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "ready ") {
		t.Fatalf("the holding process: %q %v", line, err)
	}
	postmaster, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ready ")))
	runtime := runtimeOf(t, dir, pidOwner(cmd.Process.Pid))
	if alsoKillJanitor {
		// What a kill of everything (a container stopped, the OOM killer
		// ending a cgroup) does: the janitor dies with the run.
		var janitors int
		for _, pid := range processesMentioning(t, runtime) {
			if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); strings.Contains(string(b), janitorName) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				janitors++
			}
		}
		if janitors != 1 {
			t.Fatalf("found %d janitors of %s, want 1", janitors, runtime)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for end := time.Now().Add(20 * time.Second); pidAlive(postmaster) && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	if pidAlive(postmaster) {
		t.Fatalf("the killed run's postmaster %d outlived it", postmaster)
	}
	return runtime
}

// A run killed with SIGKILL runs no Stop: its server dies by its death
// signal, and its janitor removes the runtime folder (data dir, private
// key) at once.
func TestKilledRunLeavesNoRuntimeFolder(t *testing.T) {
	testtier.Heavy(t, testtier.Postgres)
	dir := serverDir(t)
	runtime := holdAndKill(t, dir, false)
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(runtime); os.IsNotExist(err) {
			return
		}
	}
	t.Fatalf("the killed run's runtime folder %s is still there 20 s after its postmaster ended", runtime)
}

// When the janitor died too, the next run's RemoveStale removes the
// folder, and leaves a live run's folder and a folder without an owner
// alone.
func TestRemoveStaleAfterAKilledRun(t *testing.T) {
	testtier.Heavy(t, testtier.Postgres)
	dir := serverDir(t)
	killed := holdAndKill(t, dir, true)
	time.Sleep(time.Second)
	if _, err := os.Stat(filepath.Join(killed, "data")); err != nil {
		t.Fatalf("the killed run's data dir is gone (%v), though its janitor was killed: nothing to test", err)
	}
	live := startServer(t, Options{Dir: dir, Settings: quiet(), Owner: pidOwner(os.Getpid())})
	liveRuntime := runtimeOf(t, dir, pidOwner(os.Getpid()))
	unowned := filepath.Join(dir, runtimePrefix+"unowned")
	if err := os.Mkdir(unowned, 0o700); err != nil {
		t.Fatal(err)
	}

	removed, err := RemoveStale(dir, pidGone)
	if err != nil {
		t.Fatalf("RemoveStale: %v", err)
	}
	if len(removed) != 1 || removed[0] != killed {
		t.Errorf("removed %v, want [%s]", removed, killed)
	}
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("the killed run's runtime folder %s is still there: %v", killed, err)
	}
	for _, keep := range []string{liveRuntime, unowned} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("RemoveStale removed %s: %v", keep, err)
		}
	}
	if _, err := Commits(context.Background(), live.DSN("postgres"), "postgres"); err != nil {
		t.Errorf("the live server after RemoveStale: %v", err)
	}
}

// A folder whose owner is gone is removed only once no postmaster runs out
// of it. A folder Start made itself (Dir empty) holds its runtime folder
// inside it, so its postmaster.pid is one level down: a check of the
// folder's own data dir alone took a live server's data from under it.
func TestRemoveStaleKeepsAFolderWhosePostmasterRuns(t *testing.T) {
	live := exec.Command("sleep", "120")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Process.Kill(); _ = live.Wait() })
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}

	// Only this test's folders have this owner, so RemoveStale's sweep of
	// the real temp folder leaves every other folder there alone.
	owner := fmt.Sprintf("test-owner-%d-%d", os.Getpid(), time.Now().UnixNano())
	gone := func(o string) bool { return o == owner }

	tests := []struct {
		name       string
		folder     string // under dir, with the owner file
		pidFile    string // postmaster.pid's path inside folder
		pid        int
		wantRemove bool
	}{
		{name: "runtime folder, postmaster runs", folder: runtimePrefix + "live", pidFile: "data/postmaster.pid", pid: live.Process.Pid},
		{name: "runtime folder, postmaster ended", folder: runtimePrefix + "ended", pidFile: "data/postmaster.pid", pid: ended.Process.Pid, wantRemove: true},
		{name: "own folder, nested postmaster runs", folder: ownDirPrefix + "live", pidFile: runtimePrefix + "1/data/postmaster.pid", pid: live.Process.Pid},
		{name: "own folder, nested postmaster ended", folder: ownDirPrefix + "ended", pidFile: runtimePrefix + "1/data/postmaster.pid", pid: ended.Process.Pid, wantRemove: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			folder := filepath.Join(dir, tc.folder)
			pidFile := filepath.Join(folder, tc.pidFile)
			if err := os.MkdirAll(filepath.Dir(pidFile), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(folder, ownerFile), []byte(owner+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			// postmaster.pid's first line is the postmaster's pid, then
			// the data dir and more.
			if err := os.WriteFile(pidFile, []byte(fmt.Sprintf("%d\n%s\n", tc.pid, filepath.Dir(pidFile))), 0o600); err != nil {
				t.Fatal(err)
			}
			removed, err := RemoveStale(dir, gone)
			if err != nil {
				t.Fatalf("RemoveStale: %v", err)
			}
			_, statErr := os.Stat(folder)
			switch {
			case tc.wantRemove && (len(removed) != 1 || removed[0] != folder || !os.IsNotExist(statErr)):
				t.Errorf("removed %v (stat: %v), want [%s] removed", removed, statErr, folder)
			case !tc.wantRemove && (len(removed) != 0 || statErr != nil):
				t.Errorf("removed %v (stat: %v): the folder's postmaster %d still runs", removed, statErr, tc.pid)
			}
		})
	}
}

// TestExistsReadsEPERMAsRunning: signal 0 to another user's process
// answers EPERM, and the process runs; only ESRCH says it is gone.
func TestExistsReadsEPERMAsRunning(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{{nil, true}, {syscall.EPERM, true}, {syscall.ESRCH, false}} {
		if got := exists(tc.err); got != tc.want {
			t.Errorf("exists(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
