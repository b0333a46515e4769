package arms

import (
	"slices"
	"testing"
)

// A child whose pid is lower than its parent's (the pids wrapped round) is
// reaped by the parent in the middle of a reading. Read child first, it
// would count twice: its own 30 ticks, then the parent's cutime of 30.
// rereadParentsFirst reads the parent first, so the reading holds it at
// most once, whichever moment the reap falls in.
func TestRereadParentsFirstCountsAReapedChildOnce(t *testing.T) {
	root := procStat{pid: 900, ppid: 1, start: 10}
	parent := procStat{pid: 950, ppid: 900, start: 20}
	child := procStat{pid: 5, ppid: 950, start: 30, self: 30}
	cur := map[procKey]procStat{root.key(): root, parent.key(): parent, child.key(): child}
	for reapAfter := 0; reapAfter <= 3; reapAfter++ {
		reads, reaped := 0, false
		var order []int
		read := func(pid int) (procStat, bool) {
			if reads == reapAfter {
				reaped = true
			}
			reads++
			order = append(order, pid)
			switch pid {
			case child.pid:
				return child, !reaped
			case parent.pid:
				p := parent
				if reaped {
					p.children = child.self
				}
				return p, true
			default:
				return root, true
			}
		}
		got := rereadParentsFirst(cur, read)
		var sum int64
		for _, p := range got {
			sum += p.total()
		}
		if sum > child.self {
			t.Errorf("reaped after %d reads: the reading holds %d ticks, want at most the child's %d once (read order %v)", reapAfter, sum, child.self, order)
		}
		if want := []int{900, 950, 5}; !slices.Equal(order, want) {
			t.Errorf("read order %v, want %v: each parent before its children", order, want)
		}
	}
}

// A member gone between the pass over /proc and the reading again, or its
// pid taken by another process, is left out.
func TestRereadParentsFirstDropsTheGone(t *testing.T) {
	a := procStat{pid: 10, ppid: 1, start: 1}
	b := procStat{pid: 11, ppid: 10, start: 2}
	c := procStat{pid: 12, ppid: 10, start: 3}
	cur := map[procKey]procStat{a.key(): a, b.key(): b, c.key(): c}
	got := rereadParentsFirst(cur, func(pid int) (procStat, bool) {
		switch pid {
		case b.pid:
			return procStat{}, false
		case c.pid:
			return procStat{pid: 12, ppid: 10, start: 99}, true // a new process on c's pid
		}
		return a, true
	})
	if len(got) != 1 || got[a.key()].pid != a.pid {
		t.Fatalf("got %v, want only the root", got)
	}
}
