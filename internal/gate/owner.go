package gate

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/arms"
)

// Owner names this process on the labels of its run's containers and in
// its store's folders, so a later run can tell what a killed run left from
// what a live one uses: "host/boot/pidns/pid/start". The host and boot id
// say which machine and which boot; the pid namespace which pids the pid is
// one of; the start time tells the pid from a later process that reused it.
func Owner() string {
	start, _ := arms.StartTime(os.Getpid())
	return fmt.Sprintf("%s/%s/%s/%d/%d", hostname(), bootID(), pidNamespace(), os.Getpid(), start)
}

// OwnerGone reports whether the process an Owner string names has ended.
// Only what this process can check counts as gone: another host's owner or
// one in another pid namespace is not; after a reboot of this host, every
// owner of an earlier boot is.
func OwnerGone(owner string) bool {
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
