package arms

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// An arm whose root has exited, stopped later, leaves alone a group that
// took its number meanwhile: pid_max is 32768 on this suite's machines, a
// busy one goes round the pids in minutes, and a measured gate's base arm
// was seen SIGKILLed two seconds into its run, as another test's arm
// stopped. The new group's leader is given the old number by writing the
// pid before it to /proc/sys/kernel/ns_last_pid (root only), as CRIU
// restores a process's pid.
func TestStopSparesAGroupThatReusedItsNumber(t *testing.T) {
	// A number that a living task took meanwhile (a thread of this very
	// test binary, started by the runtime between the write to
	// ns_last_pid and the fork, keeps it for good) cannot be given to the
	// new group: a rehearsal's raced run tried 200 times in 1.8 s. The
	// scenario is then built again around a new arm, up to five times.
	for round := 1; round <= 5; round++ {
		a := exitedArm(t)
		victim := leaderWithPid(t, a.root)
		if victim == nil {
			t.Logf("round %d: pid %d is held by a living task; building the scenario again with a new arm", round, a.root.pid)
			continue
		}
		if err := a.Stop(); err != nil {
			t.Logf("stopping the exited arm: %v", err)
		}
		if !running(victim.Process.Pid) {
			t.Fatalf("the group that took the exited arm's number %d was signalled by its Stop", a.pgid)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if got := tree(mustProcs(t), a.root, a.pgid); len(got) != 0 {
			t.Errorf("the exited arm's tree holds %d processes of the group that took its number", len(got))
		}
		return
	}
	t.Fatal("in five rounds a living task held the exited arm's number each time")
}

// exitedArm starts an arm whose root exits when told, after Start has
// returned (one that exited at once could beat Start's readiness check,
// "exited before it was ready", as it did under a rehearsal's raced
// packages), and returns it once the root has exited.
func exitedArm(t *testing.T) *Process {
	t.Helper()
	dir := t.TempDir()
	told := filepath.Join(dir, "exit-now")
	a, err := Start(context.Background(), Spec{Name: "gone", Command: []string{"sh", "-c", `while [ ! -e "$1" ]; do sleep 0.01; done`, "sh", told}, LogPath: filepath.Join(dir, "gone.log")})
	if err != nil {
		t.Fatalf("starting the arm: %v", err)
	}
	t.Cleanup(func() { _ = a.Stop() })
	if err := os.WriteFile(told, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.exited:
	case <-time.After(time.Minute):
		t.Fatal("the arm's root did not exit")
	}
	return a
}

// leaderWithPid starts `sleep` as the leader of a process group of its own
// whose pid is old's, trying until no other fork on the machine takes the
// pid first; it is killed when the test ends. Start times count clock
// ticks (10 ms), so a leader that started in old's tick is tried again: a
// pid reused after going round the pids never starts in the same tick.
// It returns nil when a living task holds the pid, so that no fork can
// get it.
func leaderWithPid(t *testing.T, old procKey) *exec.Cmd {
	t.Helper()
	pid := old.pid
	for try := 0; try < 200; try++ {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			return nil // /proc/PID also answers for a thread's id
		}
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			t.Fatalf("this test gives a process a chosen pid through ns_last_pid, which needs root in the pid namespace: %v", err)
		}
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if p, ok := readStat(cmd.Process.Pid); cmd.Process.Pid == pid && ok && p.start != old.start {
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			return cmd
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	t.Fatalf("no process got pid %d in 200 tries: another fork took it each time", pid)
	return nil
}

func mustProcs(t *testing.T) []procStat {
	t.Helper()
	all, err := allProcs()
	if err != nil {
		t.Fatal(err)
	}
	return all
}
