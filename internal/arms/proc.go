package arms

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat. The kernel fixes
// USER_HZ at 100 for user space on every architecture Go supports (procfs
// assumes the same), so no sysconf call is needed.
const userHZ = 100

var pageSize = int64(os.Getpagesize())

// procStat is what the arm needs from one line of /proc/<pid>/stat.
type procStat struct {
	pid, ppid, pgrp int
	state           byte
	// self is utime+stime; children is cutime+cstime (reaped descendants).
	self, children int64 // clock ticks
	start          uint64
	rssPages       int64
}

// key names a process across pid reuse: a pid seen again with another start
// time is another process.
type procKey struct {
	pid   int
	start uint64
}

func (p procStat) key() procKey   { return procKey{p.pid, p.start} }
func (p procStat) total() int64   { return p.self + p.children }
func (p procStat) alive() bool    { return p.state != 'Z' && p.state != 'X' }
func ticks(n int64) time.Duration { return time.Duration(n) * time.Second / userHZ }

// CPUResolution is the step CPU times move in: one clock tick.
const CPUResolution = time.Second / userHZ

// parseStat parses /proc/<pid>/stat. The command name sits in parentheses
// and may itself hold spaces and parentheses, so fields are counted from the
// last ')'.
func parseStat(b []byte) (procStat, error) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return procStat{}, fmt.Errorf("no command name in %q", truncate(b))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil {
		return procStat{}, fmt.Errorf("pid of %q: %w", truncate(b), err)
	}
	f := strings.Fields(string(b[closing+1:]))
	// f[0] is field 3 (state) of proc(5); field n is f[n-3]. rss is field 24.
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("only %d fields in %q", len(f)+2, truncate(b))
	}
	num := func(n int) int64 {
		if err != nil {
			return 0
		}
		var v int64
		v, err = strconv.ParseInt(f[n-3], 10, 64)
		return v
	}
	p := procStat{pid: pid, state: f[0][0]}
	p.ppid = int(num(4))
	p.pgrp = int(num(5))
	p.self = num(14) + num(15)
	p.children = num(16) + num(17)
	p.start = uint64(num(22))
	p.rssPages = num(24)
	if err != nil {
		return procStat{}, fmt.Errorf("fields of %q: %w", truncate(b), err)
	}
	return p, nil
}

func truncate(b []byte) string {
	if len(b) > 120 {
		b = b[:120]
	}
	return string(b)
}

// readStat reads one process's stat; ok is false when it is gone.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	p, err := parseStat(b)
	return p, err == nil
}

// allProcs reads every process's stat. Processes that vanish while the
// directory is read are skipped: that is the normal churn of a live system.
func allProcs() ([]procStat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("reading /proc: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("reading /proc: %w", err)
	}
	out := make([]procStat, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, ok := readStat(pid); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// tree is the arm's processes: the root, every process reached from it by
// parent links, and every member of its process group (an orphan of the arm
// re-parented to init stays in the group, so it is still counted and still
// stopped).
func tree(all []procStat, root procKey, pgid int) map[procKey]procStat {
	byPid := make(map[int]procStat, len(all))
	kids := make(map[int][]int, len(all))
	for _, p := range all {
		byPid[p.pid] = p
		kids[p.ppid] = append(kids[p.ppid], p.pid)
	}
	out := map[procKey]procStat{}
	var walk func(pid int)
	walk = func(pid int) {
		p, ok := byPid[pid]
		if !ok {
			return
		}
		if _, seen := out[p.key()]; seen {
			return
		}
		out[p.key()] = p
		for _, k := range kids[pid] {
			walk(k)
		}
	}
	if r, ok := byPid[root.pid]; ok && r.start == root.start {
		walk(root.pid)
	}
	if leader, ok := byPid[pgid]; pgid > 0 && groupIsTheArms(leader, ok, root) {
		for _, p := range all {
			if p.pgrp == pgid {
				walk(p.pid)
			}
		}
	}
	return out
}

// groupIsTheArms reports whether the process group numbered like the arm's
// root (pid and group id, root.pid) is still the arm's, given the process
// now at that pid, if any (found). Linux hands out no pid that a live
// process still uses as its group id, so the number names another group
// only once a process started later holds that pid: by then every member
// of the arm's group had gone, and a group of that number is the new
// process's. With pid_max at 32768 (as on this suite's machines) a busy
// machine goes round the pids in minutes: a SIGKILL to the old number
// then killed another test's arm, started a second before.
func groupIsTheArms(leader procStat, found bool, root procKey) bool {
	return !found || root.start == 0 || leader.start == root.start
}

// groupIsOurs is groupIsTheArms for the arm's group as it is now.
func (a *Process) groupIsOurs() bool {
	leader, ok := readStat(a.pgid)
	return groupIsTheArms(leader, ok, a.root)
}

// peakHWM reads VmHWM (peak resident set, bytes) from /proc/<pid>/status.
func peakHWM(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, false
			}
			return kb * 1024, true
		}
	}
	return 0, false
}

// resetHWM sets the process's VmHWM back to its current RSS (proc(5),
// clear_refs value 5), so short spikes between two samples are still seen
// in the new peak window.
func resetHWM(pid int) bool {
	f, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	_, err = f.WriteString("5")
	cerr := f.Close()
	return err == nil && cerr == nil
}

// signalKeyed signals a process only if the pid still names the process we
// saw (same start time), so a reused pid is never hit.
func signalKeyed(k procKey, sig syscall.Signal) {
	p, ok := readStat(k.pid)
	if !ok || p.start != k.start || !p.alive() {
		return
	}
	_ = syscall.Kill(k.pid, sig)
}

// StartTime is when process pid started, in clock ticks since boot (field
// 22 of /proc/<pid>/stat): with the pid it names one process across pid
// reuse. ok is false when no such process runs; a zombie runs nothing.
func StartTime(pid int) (start uint64, ok bool) {
	p, ok := readStat(pid)
	if !ok || !p.alive() {
		return 0, false
	}
	return p.start, true
}
