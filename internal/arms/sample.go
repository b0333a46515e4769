package arms

import (
	"context"
	"time"
)

// snapshot reads the arm's tree from /proc and folds it into the arm's
// counters. Called with a.mu held.
//
// CPU: every live member's own time plus what it reaped (cutime/cstime),
// so a child that exited and was waited for by the arm still counts. A member
// that vanished while its last known parent was outside the tree (an orphan
// re-parented to init) was reaped by someone else: its last-seen time would
// fall out of every counter, so it is kept in a.lost.
func (a *Process) snapshot() {
	if a.rootGone {
		return
	}
	all, err := allProcs()
	if err != nil {
		return
	}
	cur := tree(all, a.root, a.pgid)
	var ticksNow, rss int64
	for _, p := range cur {
		ticksNow += p.total()
		if p.alive() {
			rss += p.rssPages * pageSize
		}
	}
	for k, old := range a.seen {
		if _, still := cur[k]; still {
			continue
		}
		parentInTree := false
		for pk := range cur {
			if pk.pid == old.ppid {
				parentInTree = true
				break
			}
		}
		if !parentInTree {
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
