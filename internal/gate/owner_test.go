package gate

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/arms"
	"github.com/perfgate/perfgate/internal/services/servicetest"
)

func TestOwnerGone(t *testing.T) {
	// A process that ran and ended, and one that runs.
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	alive := exec.Command("sleep", "60")
	if err := alive.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = alive.Process.Kill(); _ = alive.Wait() })
	start, ok := arms.StartTime(alive.Process.Pid)
	if !ok {
		t.Fatal("no start time for a running process")
	}
	self := processOwner()
	f := strings.Split(self, "/")
	if len(f) != 5 {
		t.Fatalf("processOwner() = %q, want host/boot/pidns/pid/start", self)
	}
	host, boot, ns := f[0], f[1], f[2]
	owner := func(host, boot, ns string, pid int, start uint64) string {
		return fmt.Sprintf("%s/%s/%s/%d/%d", host, boot, ns, pid, start)
	}
	cases := []struct {
		name  string
		owner string
		gone  bool
	}{
		{"this process", self, false},
		{"a running child", owner(host, boot, ns, alive.Process.Pid, start), false},
		{"an ended process", owner(host, boot, ns, ended.Process.Pid, 1), true},
		// The pid runs, but it is another process than the one named.
		{"a reused pid", owner(host, boot, ns, alive.Process.Pid, start+1), true},
		{"an earlier boot of this host", owner(host, "00000000-0000-0000-0000-000000000000", ns, os.Getpid(), 1), true},
		// What this process cannot check is never gone.
		{"another host", owner("elsewhere", boot, ns, ended.Process.Pid, 1), false},
		{"another pid namespace", owner(host, boot, "1", ended.Process.Pid, 1), false},
		{"not an owner", "perfgate", false},
		{"empty", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := OwnerGone(c.owner); got != c.gone {
				t.Errorf("OwnerGone(%q) = %t, want %t", c.owner, got, c.gone)
			}
		})
	}
}

// In a container (the action, its sibling) the owner is the container,
// and the engine says whether it still runs.
func TestContainerOwnerGone(t *testing.T) {
	img := servicetest.Image(t)
	docker := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	running := docker("run", "-d", img)
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", running).Run() })
	created := docker("create", img)
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", created).Run() })
	if OwnerGone(dockerOwner + running) {
		t.Errorf("a running container's owner is gone")
	}
	if !OwnerGone(dockerOwner + created) {
		t.Errorf("a container that does not run (created, never started) still owns its run")
	}
	docker("rm", "-f", running)
	if !OwnerGone(dockerOwner + running) {
		t.Errorf("a removed container (as --rm does when it is killed) still owns its run")
	}
	if OwnerGone(dockerOwner + "not an id") {
		t.Errorf("a malformed container owner is gone")
	}
}
