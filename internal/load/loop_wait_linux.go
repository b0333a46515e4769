//go:build linux

package load

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file holds how the event loop waits: for the next arrival, for
// readiness from epoll, and for its periodic chores (progress and the yield).

// yieldEvery is just under sysmon's 10 ms preemption threshold: a yield
// costs a wake of an idle thread (wakep), a preemption a signal as well,
// so the loop yields as seldom as it can without being preempted.
const yieldEvery = 9 * time.Millisecond

// chores: progress about once a second, and the yield.
func (l *evloop) chores() {
	now := time.Now()
	if !now.Before(l.nextExpire) {
		l.expire()
		l.nextExpire = now.Add(time.Millisecond)
	}
	if l.a.Progress != nil && !now.Before(l.nextTick) {
		l.rec.progress(now)
		l.nextTick = now.Add(time.Second)
	}
	if now.Sub(l.yielded) > yieldEvery {
		runtime.Gosched()
		l.yielded = now
	}
}

// waitUntil sleeps to the arrival's time, handling what events need
// handling meanwhile; false when canceled.
func (l *evloop) waitUntil(at time.Time) bool {
	for {
		if l.canceled.Load() {
			return false
		}
		d := time.Until(at)
		if d <= 0 {
			return true
		}
		if d <= lazyWait && l.stamps && !l.anyUrgent() {
			ts := unix.NsecToTimespec(int64(d))
			syscall.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
			continue
		}
		l.poll(min(d, 100*time.Millisecond))
		l.expire()
		l.resend()
	}
}

func (l *evloop) anyUrgent() bool {
	for _, c := range l.busy {
		if c.urgent() {
			return true
		}
	}
	return false
}

// poll waits up to d for events and handles them.
func (l *evloop) poll(d time.Duration) {
	ts := unix.NsecToTimespec(int64(max(d, 0)))
	n, _, e := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
	if e == syscall.ENOSYS {
		ms := int((d + time.Millisecond - 1) / time.Millisecond)
		n, _, e = syscall.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(ms), 0, 0)
	}
	if e != 0 {
		return
	}
	for _, ev := range l.events[:n] {
		fd := int(ev.Fd)
		if fd == l.evfd {
			continue // canceled: the flag is already set
		}
		if fd >= len(l.byFD) || l.byFD[fd] == nil {
			continue
		}
		c := l.byFD[fd]
		switch c.state {
		case lcConnecting:
			l.connected(c)
		case lcWriting:
			l.write(c)
			if c.state == lcWriting && ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				// The target answers before taking the whole request:
				// read it, or the level-triggered event spins.
				l.read(c)
			}
		case lcReading:
			l.read(c)
		case lcIdle:
			// An idle connection readable means the target closed it (or
			// sent what nobody asked for): it cannot carry a request.
			l.retire(c)
		}
	}
}
