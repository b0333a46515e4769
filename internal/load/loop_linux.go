//go:build linux

package load

import (
	"context"
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event loop is the engine for plain-HTTP targets on Linux. On a 2-core
// runner the generator's CPU is taken from the arms it judges, and on a VM
// nearly all of it is kernel time per wake-up: measured on the CI machine,
// a bare timer wake costs 17-20 µs of CPU and a loopback write 10-15 µs,
// while everything the engine does in Go is under 1 µs per request. So the
// loop is built to wake once per arrival, not twice:
//
//   - one goroutine owns every connection, the schedule and the recorder:
//     no channel hand-offs and no goroutine per request;
//   - it sleeps with raw syscalls, because a syscall the runtime sees lets
//     sysmon hand the P to another thread, a futex round trip per sleep
//     (measured: 40 µs per wake instead of 17);
//   - between arrivals closer than lazyWait it does not wake for answers:
//     it reads them when it next needs a connection, and takes each
//     answer's time from the kernel's receive timestamp (SO_TIMESTAMPING),
//     so the latency is the one an eager read would have seen.
//
// Anything that cannot wait is read eagerly: a connection still connecting,
// a write the socket only partly took, an answer only partly read (it may
// be held up by the receive window), and every wait longer than lazyWait.

// lazyWait is the longest sleep during which answers wait for the next wake.
const lazyWait = time.Millisecond

// Connection states.
const (
	lcIdle       uint8 = iota
	lcConnecting       // non-blocking connect in flight; the job waits in wbuf
	lcWriting          // wbuf[woff:] still to send
	lcReading          // request sent, answer pending
	lcClosed
)

type lconn struct {
	fd    int
	state uint8
	job   job
	sent  time.Time
	until time.Time // the request's deadline, connecting included
	wbuf  []byte
	woff  int
	out   bool   // registered for EPOLLOUT
	bytes uint64 // request bytes
	rx    int64  // kernel receive time of the latest bytes read (unix ns); 0 if none
	part  bool   // part of the answer has been read
	p     respParser
	slot  int       // index in evloop.busy
	idle  time.Time // when it last went back to the pool
	reuse bool      // it carried a request before this one
}

// urgent is true while the connection needs its events at once.
func (c *lconn) urgent() bool {
	return c.state == lcConnecting || c.state == lcWriting || (c.state == lcReading && c.part)
}

type evloop struct {
	a      *Attack
	ep     *endpoint
	rec    *recorder
	origin time.Time
	sa     unix.Sockaddr
	family int

	epfd, evfd int
	byFD       []*lconn
	free       []*lconn // idle connections, most recently used last
	busy       []*lconn
	retries    []retry // requests to send again on a new connection
	open       int
	stamps     bool // the kernel gives receive timestamps

	rbuf   []byte
	oob    []byte
	iov    unix.Iovec
	msg    unix.Msghdr
	events []unix.EpollEvent

	canceled   atomic.Bool
	sched      schedule
	stopped    time.Time
	nextTick   time.Time // next progress report
	nextExpire time.Time // next look for requests past their deadline
	yielded    time.Time
}

// runLoop runs the attack on the event loop; ok is false when this kernel
// cannot, and the caller falls back to the worker engine.
func runLoop(ctx context.Context, a *Attack, ep *endpoint, origin time.Time) (r *Result, ok bool) {
	if ep.tls != nil {
		return nil, false
	}
	l, err := newEvloop(a, ep, origin)
	if err != nil {
		return nil, false
	}
	defer l.close()
	release := acquireP()
	defer release()
	stopWatch := onCancel(ctx, func() {
		l.sched.cancel()
		l.canceled.Store(true)
		one := [8]byte{1}
		unix.Write(l.evfd, one[:])
	})
	res := make(chan *Result)
	go func() {
		// The loop's thread sleeps with the least timer slack (50 µs by
		// default). It is given back afterwards, not left to exit with
		// the goroutine: a thread's exit fires the Pdeathsig of every
		// child it started, the arms included.
		runtime.LockOSThread()
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		r := l.run()
		unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0)
		runtime.UnlockOSThread()
		res <- r
	}()
	r = <-res
	stopWatch()
	return r, true
}

// acquireP adds a P for the loop while it runs. The loop blocks in raw
// syscalls, which keep its P; without another the rest of the process (an
// in-process target, a paired attack, the arms' samplers) would wait for
// the loop's next wake.
var procs struct {
	sync.Mutex
	loops, saved int
}

func acquireP() (release func()) {
	procs.Lock()
	if procs.loops == 0 {
		procs.saved = runtime.GOMAXPROCS(0)
	}
	procs.loops++
	runtime.GOMAXPROCS(procs.saved + procs.loops)
	procs.Unlock()
	return func() {
		procs.Lock()
		procs.loops--
		runtime.GOMAXPROCS(procs.saved + procs.loops)
		procs.Unlock()
	}
}

func newEvloop(a *Attack, ep *endpoint, origin time.Time) (*evloop, error) {
	addr, err := net.ResolveTCPAddr("tcp", ep.addr)
	if err != nil {
		return nil, err
	}
	l := &evloop{a: a, ep: ep, origin: origin, epfd: -1, evfd: -1, sched: schedule{a: a, origin: origin},
		rbuf: make([]byte, 64<<10), oob: make([]byte, 256), events: make([]unix.EpollEvent, 256)}
	if ip4 := addr.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: addr.Port}
		copy(sa.Addr[:], ip4)
		l.sa, l.family = sa, unix.AF_INET
	} else {
		sa := &unix.SockaddrInet6{Port: addr.Port}
		copy(sa.Addr[:], addr.IP.To16())
		l.sa, l.family = sa, unix.AF_INET6
	}
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, err
	}
	if l.evfd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		l.close()
		return nil, err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(l.evfd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, l.evfd, &ev); err != nil {
		l.close()
		return nil, err
	}
	l.iov.Base = &l.rbuf[0]
	l.iov.SetLen(len(l.rbuf))
	l.msg.Iov = &l.iov
	l.msg.Iovlen = 1
	l.msg.Control = &l.oob[0]
	l.rec = newRecorder(a, origin)
	return l, nil
}

func (l *evloop) close() {
	for _, c := range l.byFD {
		if c != nil && c.state != lcClosed {
			unix.Close(c.fd)
		}
	}
	if l.evfd >= 0 {
		unix.Close(l.evfd)
	}
	if l.epfd >= 0 {
		unix.Close(l.epfd)
	}
}

// run is the schedule: the same arrivals, warm-up and halves as the worker
// engine's attacker.run.
func (l *evloop) run() *Result {
	now := time.Now()
	l.nextTick, l.yielded = now.Add(time.Second), now
	for {
		intended, ok := l.sched.next()
		if !ok {
			break
		}
		if !l.waitUntil(intended) {
			l.stopped = time.Now()
			break
		}
		j, ok := l.sched.take(intended)
		if !ok {
			continue
		}
		c, err := l.connFor(&j)
		if err != nil {
			l.failJob(&j, err)
			continue
		}
		if c == nil {
			l.sched.drop(&j)
			if l.canceled.Load() {
				l.stopped = time.Now()
				break
			}
			continue
		}
		l.send(c, &j)
		l.resend()
		l.chores()
	}
	l.drain()
	l.stopped = l.sched.overdue(l.stopped)
	return l.rec.finish(l.sched.intended, l.sched.dropped, l.stopped)
}

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

// reap reads the answers that have arrived.
func (l *evloop) reap() {
	if len(l.busy) <= 8 {
		for i := 0; i < len(l.busy); {
			c := l.busy[i]
			if c.state == lcReading {
				l.read(c)
			}
			if i < len(l.busy) && l.busy[i] == c {
				i++
			}
		}
	} else {
		l.poll(0)
	}
}

// connFor returns a connection ready to take j: an idle one, a new one, or
// one that frees up before the arrival is too late. nil and no error means
// the arrival is dropped (or the attack canceled); an error is a connection
// that could not even be started, which counts as the request's failure.
func (l *evloop) connFor(j *job) (*lconn, error) {
	polled := false
	for reaped := false; ; reaped = true {
		for len(l.free) > 0 {
			c := l.free[len(l.free)-1]
			if c.state == lcIdle && !polled && time.Since(c.idle) > staleAfter {
				// The target may have closed it meanwhile, an event
				// the lazy mode has not read: read the events first.
				l.poll(0)
				polled = true
				continue
			}
			l.free = l.free[:len(l.free)-1]
			if c.state == lcIdle {
				c.reuse = true
				return c, nil
			}
		}
		if !reaped && len(l.busy) > 0 {
			// Answers are read when a connection is needed, all that
			// arrived at once: at high rates one epoll_wait and a batch
			// of reads instead of a read (often empty) per request.
			l.reap()
			continue
		}
		if l.open < l.a.MaxConns {
			return l.dial()
		}
		late := time.Until(j.intended.Add(l.a.MaxLateness))
		if late <= 0 || l.canceled.Load() {
			return nil, nil
		}
		l.poll(min(late, 100*time.Millisecond))
		l.expire()
	}
}

// dial starts a non-blocking connect; the connection is writable once
// connected, and its request waits in wbuf until then.
func (l *evloop) dial() (*lconn, error) {
	fd, err := unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPING, unix.SOF_TIMESTAMPING_RX_SOFTWARE|unix.SOF_TIMESTAMPING_SOFTWARE) == nil {
		l.stamps = true
	}
	if err := unix.Connect(fd, l.sa); err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP, Fd: int32(fd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	c := &lconn{fd: fd, state: lcConnecting, wbuf: make([]byte, 0, 512), slot: -1, out: true}
	for fd >= len(l.byFD) {
		l.byFD = append(l.byFD, nil)
	}
	l.byFD[fd] = c
	l.open++
	return c, nil
}

// send starts j on c: written now, or once c is connected.
func (l *evloop) send(c *lconn, j *job) {
	c.job = *j
	c.wbuf = appendRequest(c.wbuf[:0], l.ep, &j.req)
	c.woff, c.bytes, c.rx, c.part = 0, uint64(len(c.wbuf)), 0, false
	c.p.resetHit(j.req.Method == "HEAD", l.ep.timingHd, l.ep.hit)
	c.slot = len(l.busy)
	l.busy = append(l.busy, c)
	c.sent = time.Now()
	c.until = c.sent.Add(l.a.Timeout)
	if c.state == lcConnecting {
		return
	}
	c.state = lcWriting
	l.write(c)
}

// connected finishes a non-blocking connect.
func (l *evloop) connected(c *lconn) {
	errno, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && errno != 0 {
		err = syscall.Errno(errno)
	}
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			l.fail(c, err)
		} else {
			l.fail(c, &net.OpError{Op: "dial", Net: "tcp", Err: err})
		}
		return
	}
	c.state = lcWriting
	l.write(c)
}

// watch sets the events c is registered for (level-triggered).
func (l *evloop) watch(c *lconn, events uint32) {
	ev := unix.EpollEvent{Events: events, Fd: int32(c.fd)}
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev)
}

func (l *evloop) write(c *lconn) {
	for c.woff < len(c.wbuf) {
		b := c.wbuf[c.woff:]
		n, _, e := syscall.RawSyscall6(unix.SYS_SENDTO, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), unix.MSG_NOSIGNAL, 0, 0)
		switch e {
		case 0:
			c.woff += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			if !c.out {
				// The socket is full: wake when it drains.
				l.watch(c, unix.EPOLLIN|unix.EPOLLOUT|unix.EPOLLRDHUP)
				c.out = true
			}
			c.state = lcWriting
			return
		default:
			// The target may have answered before taking the whole
			// request (a 413) and closed: that answer is the
			// request's, as the workers keep it too. read completes
			// or fails c when it finds one.
			if l.read(c); c.state != lcClosed && c.state != lcIdle {
				l.fail(c, e)
			}
			return
		}
	}
	if c.out {
		l.watch(c, unix.EPOLLIN|unix.EPOLLRDHUP)
		c.out = false
	}
	c.state = lcReading
}

// maxReadsPerWake bounds how much of one answer read takes at a time
// (16 x 64 KiB). A target that streams faster than it is read (an endless
// body, or anything else the parser's bounds do not end) would otherwise
// keep read looping here for ever, with every arrival, deadline and cancel
// waiting behind it; the rest is read on the connection's next event.
const maxReadsPerWake = 16

// read takes what has arrived of c's answer.
func (l *evloop) read(c *lconn) {
	for reads := 1; ; reads++ {
		l.msg.SetControllen(len(l.oob))
		n, _, e := syscall.RawSyscall(unix.SYS_RECVMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&l.msg)), unix.MSG_DONTWAIT)
		switch e {
		case 0:
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return
		default:
			l.fail(c, e)
			return
		}
		if n == 0 {
			done, err := c.p.eof()
			if err != nil {
				l.fail(c, err)
			} else if done {
				c.rx = 0 // the close, not data, ended it: now is its time
				l.complete(c, false)
			}
			return
		}
		if ts := rxStamp(l.oob[:l.msg.Controllen]); ts != 0 {
			c.rx = ts
		}
		used, done, err := c.p.feed(l.rbuf[:n])
		if err != nil {
			l.fail(c, err)
			return
		}
		c.part = true
		if done {
			// Bytes past the answer were never asked for: the
			// connection's framing is lost, so it is not reused.
			l.complete(c, used == int(n))
			return
		}
		if int(n) < len(l.rbuf) || reads == maxReadsPerWake || l.canceled.Load() {
			return
		}
		if time.Now().After(c.until) {
			l.fail(c, os.ErrDeadlineExceeded)
			return
		}
	}
}

// rxStamp reads the software receive time from SCM_TIMESTAMPING.
func rxStamp(oob []byte) int64 {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if h.Len < unix.SizeofCmsghdr || int(h.Len) > len(oob) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPING && int(h.Len) >= unix.CmsgLen(3*int(unsafe.Sizeof(unix.Timespec{}))) {
			ts := (*unix.Timespec)(unsafe.Pointer(&oob[unix.CmsgLen(0)]))
			return ts.Nano()
		}
		oob = oob[unix.CmsgSpace(int(h.Len)-unix.CmsgLen(0)):]
	}
	return 0
}

// complete records c's answer; reuse says the connection may carry another.
func (l *evloop) complete(c *lconn, reuse bool) {
	now := time.Now()
	done := now
	if c.rx != 0 {
		// The kernel's clock is the wall clock; carry it onto the
		// intended time, which holds the monotonic reading.
		at := c.job.intended.Add(time.Duration(c.rx - c.job.intended.UnixNano()))
		if !at.Before(c.sent) && !at.After(now) {
			done = at
		}
	}
	if c.woff < len(c.wbuf) {
		reuse = false // answered before the request was all sent
	}
	r := c.p.result()
	l.rec.add(&hit{kind: hitDone, measured: c.job.measured, half: c.job.half, group: c.job.req.Group,
		intended: c.job.intended, sent: c.sent, done: done, status: r.status, serverDur: r.serverDur,
		bytesIn: r.bytesIn, bytesOut: c.bytes, hitOK: r.hit, hitBeyond: r.hitBeyond})
	l.unbusy(c)
	if reuse && c.p.keep() {
		c.state, c.idle = lcIdle, now
		l.free = append(l.free, c)
		return
	}
	l.retire(c)
}

// fail records c's request as failed with err and closes c; a request the
// target closed a reused connection under goes again instead (stale.go).
func (l *evloop) fail(c *lconn, err error) {
	if c.reuse && !c.part && !c.job.retried && retryable(c.job.req.Method, err) {
		j := c.job
		j.retried = true
		l.retries = append(l.retries, retry{j, err})
		l.unbusy(c)
		l.retire(c)
		return
	}
	now := time.Now()
	r := c.p.result()
	l.rec.add(&hit{kind: hitDone, measured: c.job.measured, half: c.job.half, group: c.job.req.Group,
		intended: c.job.intended, sent: c.sent, done: now, status: r.status, serverDur: -1,
		bytesIn: r.bytesIn, bytesOut: c.bytes, errKind: errorKind(err)})
	l.unbusy(c)
	l.retire(c)
}

func (l *evloop) unbusy(c *lconn) {
	if c.slot < 0 {
		return
	}
	last := l.busy[len(l.busy)-1]
	l.busy[c.slot] = last
	last.slot = c.slot
	l.busy = l.busy[:len(l.busy)-1]
	c.slot = -1
}

// retire closes a connection that carries no request.
func (l *evloop) retire(c *lconn) {
	if c.state == lcClosed {
		return
	}
	c.state = lcClosed
	l.byFD[c.fd] = nil
	unix.Close(c.fd) // closing also takes it out of the epoll set
	l.open--
}

// expire fails the requests past their deadline.
func (l *evloop) expire() {
	if len(l.busy) == 0 {
		return
	}
	now := time.Now()
	for i := 0; i < len(l.busy); {
		c := l.busy[i]
		if now.After(c.until) {
			l.fail(c, os.ErrDeadlineExceeded)
			continue // the last one moved into slot i
		}
		i++
	}
}

// drain waits for the answers still due after the last arrival, each up to
// its deadline; a cancel abandons them.
func (l *evloop) drain() {
	for (len(l.busy) > 0 || len(l.retries) > 0) && !l.canceled.Load() {
		l.resend()
		l.poll(100 * time.Millisecond)
		l.expire()
		l.chores()
	}
	if l.canceled.Load() && l.stopped.IsZero() {
		l.stopped = time.Now()
	}
	for _, r := range l.retries {
		l.rec.add(&hit{kind: hitCanceled, measured: r.job.measured, half: r.job.half, group: r.job.req.Group,
			intended: r.job.intended, serverDur: -1})
	}
	l.retries = l.retries[:0]
	for len(l.busy) > 0 {
		c := l.busy[0]
		l.rec.add(&hit{kind: hitCanceled, measured: c.job.measured, half: c.job.half, group: c.job.req.Group,
			intended: c.job.intended, sent: c.sent, serverDur: -1})
		l.unbusy(c)
		l.retire(c)
	}
}

// retry is a request to send again, and what failed it the first time.
type retry struct {
	job job
	err error
}

// resend sends the requests fail queued, each on a new connection (or an
// idle one when no more may open); one that gets none fails as it first
// did. It runs between events, never inside a batch of them: a new
// connection may take the number of a descriptor just closed.
func (l *evloop) resend() {
	for len(l.retries) > 0 {
		r := l.retries[len(l.retries)-1]
		l.retries = l.retries[:len(l.retries)-1]
		var c *lconn
		err := r.err
		if l.open < l.a.MaxConns {
			c, err = l.dial()
		} else {
			for len(l.free) > 0 && c == nil {
				if f := l.free[len(l.free)-1]; f.state == lcIdle {
					c, f.reuse = f, true
				}
				l.free = l.free[:len(l.free)-1]
			}
		}
		if c == nil {
			l.failJob(&r.job, err)
			continue
		}
		l.send(c, &r.job)
	}
}

// failJob records j as failed with err before it had a connection.
func (l *evloop) failJob(j *job, err error) {
	now := time.Now()
	l.rec.add(&hit{kind: hitDone, measured: j.measured, half: j.half, group: j.req.Group,
		intended: j.intended, sent: now, done: now, serverDur: -1, errKind: errorKind(err)})
}
