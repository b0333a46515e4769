package gate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/arms"
	"github.com/perfgate/perfgate/internal/host"
)

// Owner names this process on the labels of its run's containers and in
// its store's folders, so a later run can tell what a killed run left from
// what a live one uses: "host/boot/pidns/pid/start". The host and boot id
// say which machine and which boot; the pid namespace which pids the pid is
// one of; the start time tells the pid from a later process that reused it.
// In a docker container (the action and its sibling on the host network)
// it is "docker/<container id>" instead: each run has a container of its
// own, with a pid namespace no later run can see into, and the engine
// answers whether the container still runs.
func Owner() string {
	if id := host.SelfContainerID(); id != "" {
		return dockerOwner + id
	}
	return processOwner()
}

// processOwner is the owner "host/boot/pidns/pid/start" of this process.
func processOwner() string {
	start, _ := arms.StartTime(os.Getpid())
	return fmt.Sprintf("%s/%s/%s/%d/%d", hostname(), bootID(), pidNamespace(), os.Getpid(), start)
}

// dockerOwner prefixes the owner that is a docker container.
const dockerOwner = "docker/"

// OwnerGone reports whether the process an Owner string names has ended.
// Only what this process can check counts as gone: another host's owner or
// one in another pid namespace is not; after a reboot of this host, every
// owner of an earlier boot is; a container is gone when the engine has it
// no more or it no longer runs.
func OwnerGone(owner string) bool {
	if id, ok := strings.CutPrefix(owner, dockerOwner); ok {
		return containerGone(id)
	}
	f := strings.Split(owner, "/")
	if len(f) != 5 || f[0] != hostname() {
		return false
	}
	if f[1] != bootID() {
		return true
	}
	if f[2] != pidNamespace() {
		return false
	}
	pid, err1 := strconv.Atoi(f[3])
	want, err2 := strconv.ParseUint(f[4], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return false
	}
	start, ok := arms.StartTime(pid)
	return !ok || start != want
}

// containerGone asks the engine whether container id has ended; an engine
// that does not answer vouches for nothing.
func containerGone(id string) bool {
	if id == "" || strings.ContainsAny(id, " /") {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", "container", "inspect", "--format", "{{.State.Running}}", id)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return strings.Contains(strings.ToLower(stderr.String()), "no such")
	}
	return strings.TrimSpace(string(out)) == "false"
}

func hostname() string {
	h, _ := os.Hostname()
	return strings.ReplaceAll(h, "/", "_")
}

func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}

// pidNamespace is the inode of this process's pid namespace ("4026531836").
func pidNamespace() string {
	l, _ := os.Readlink("/proc/self/ns/pid")
	return strings.TrimSuffix(strings.TrimPrefix(l, "pid:["), "]")
}
