package arms

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"
)

// snapshot reads the arm's tree from /proc and folds it into the arm's
// counters. Called with a.mu held.
//
// CPU: every live member's own time plus what it reaped (cutime/cstime),
// so a child that exited and was waited for by the arm still counts. A member
// that vanished while its last known parent was outside the tree (an orphan
// re-parented to init) was reaped by someone else: its last-seen time would
// fall out of every counter, so it is kept in a.lost. One whose parent
// vanished in the same interval went with its parent (leftTheTree).
func (a *Process) snapshot() {
	if a.rootGone {
		return
	}
	all, err := allProcs()
	if err != nil {
		return
	}
	cur := rereadParentsFirst(tree(all, a.root, a.pgid), readStat)
	var ticksNow, rss int64
	for _, p := range cur {
		ticksNow += p.total()
		if p.alive() {
			rss += p.rssPages * pageSize
		}
	}
	prevByPid := byPid(a.seen)
	curByPid := byPid(cur)
	for k, old := range a.seen {
		if _, still := cur[k]; still {
			continue
		}
		if leftTheTree(old.ppid, prevByPid, curByPid) {
			a.lost += old.total()
		}
	}
	a.seen = cur
	a.remember(all, cur)
	if cpu := ticks(ticksNow + a.lost); cpu > a.cpuMax {
		a.cpuMax = cpu
	}
	a.lastRSS = rss
	if rss > a.peak {
		a.peak = rss
	}
}

// leftTheTree reports whether the time of a member that vanished since the
// last reading (prev, by pid), whose parent then was ppid, left the arm's tree:
// reaped by a process outside it. A parent still in the tree (cur) reaped
// it, and its cutime holds it. A parent that vanished too most likely
// reaped it first (a helper shell waiting for its command, then exiting):
// the member's time went with the parent's, so it left the tree only if
// the parent's did. Counting it as lost there counted it twice, in a.lost
// and in the cutime of whoever reaped the parent: a 300 ms command under
// `sh -c 'cmd; true'` read as 580 ms. Where the parent died first and the
// member, re-parented outside, ended within the same interval, its time is
// missed instead, a rarer case that only reads low.
func leftTheTree(ppid int, prev, cur map[int]procStat) bool {
	for range len(prev) + 1 {
		parent, wasMember := prev[ppid]
		if !wasMember {
			// Not in the tree at the last reading: outside it, unless a
			// member now holds that pid (one started since, then parent).
			_, inTree := cur[ppid]
			return !inTree
		}
		if now, ok := cur[ppid]; ok && now.start == parent.start {
			return false
		}
		ppid = parent.ppid
	}
	return true
}

// byPid indexes one reading of the tree by pid (a pid names one process
// within a reading).
func byPid(procs map[procKey]procStat) map[int]procStat {
	m := make(map[int]procStat, len(procs))
	for _, p := range procs {
		m[p.pid] = p
	}
	return m
}

// rereadParentsFirst reads the tree's members again, each process before
// its children, and returns them as read then (a member gone by then is
// left out). One pass over /proc, in pid order, is not one instant: where
// the pids wrapped round (pid_max is 32768 on this suite's machines) a
// child comes before its parent, and a child read alive, then reaped by
// its parent before the parent's line was read, counted twice in that
// reading: in its own time and in the parent's cutime. The arm's CPU never
// decreases, so it kept the double, up to a whole child's time: the likeliest
// reading of run 209 in docs/testing.md, where two 300 ms burners counted
// 810 ms. Read parents first, such a child is in neither, a reading too low
// that the next corrects.
func rereadParentsFirst(cur map[procKey]procStat, read func(pid int) (procStat, bool)) map[procKey]procStat {
	members := byPid(cur)
	depth := make(map[int]int, len(cur))
	for pid, p := range members {
		n := 0
		// Bounded by the tree's size: a parent link never loops, but
		// two readings of a reused pid could seem to.
		for q, ok := members[p.ppid]; ok && n < len(members); q, ok = members[q.ppid] {
			n++
		}
		depth[pid] = n
	}
	order := slices.SortedFunc(maps.Keys(members), func(a, b int) int {
		return cmp.Or(cmp.Compare(depth[a], depth[b]), cmp.Compare(a, b))
	})
	out := make(map[procKey]procStat, len(cur))
	for _, pid := range order {
		if p, ok := read(pid); ok && p.start == members[pid].start {
			out[p.key()] = p
		}
	}
	return out
}

// sample refreshes the counters every SampleEvery until Stop or ctx.
func (a *Process) sample(ctx context.Context) {
	defer a.sampler.Done()
	t := time.NewTicker(a.spec.SampleEvery)
	defer t.Stop()
	for {
		a.mu.Lock()
		a.snapshot()
		a.mu.Unlock()
		select {
		case <-t.C:
		case <-a.quit:
			return
		case <-ctx.Done():
			return
		case <-a.exited:
			return
		}
	}
}

// CPU is the cumulative CPU time (user+system) of the arm's process and all
// its descendants, live or reaped, since it started. It never decreases.
// Resolution is the kernel's clock tick (10ms).
func (a *Process) CPU() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.snapshot()
	return a.cpuMax
}

// RSS is the current resident memory of the arm's tree in bytes (the sum of
// its processes' RSS; pages shared between them count once per process).
func (a *Process) RSS() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rootGone {
		return 0
	}
	a.snapshot()
	return a.lastRSS
}

// ResetPeak starts a new peak window at the current resident memory.
func (a *Process) ResetPeak() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.peak = 0
	a.snapshot()
	if !a.rootGone {
		a.hwmOK = resetHWM(a.root.pid)
	}
}

// Peak is the highest resident memory of the arm's tree since the last
// ResetPeak (or since Start): the highest sample, raised to the root
// process's own kernel-kept peak (VmHWM) so a spike between two samples of
// a single-process service is not missed.
func (a *Process) Peak() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.snapshot()
	peak := a.peak
	if a.hwmOK && !a.rootGone {
		if p, ok := readStat(a.root.pid); ok && p.start == a.root.start {
			if hwm, ok := peakHWM(a.root.pid); ok && hwm > peak {
				peak = hwm
			}
		}
	}
	if peak > a.peak {
		a.peak = peak
	}
	return peak
}
