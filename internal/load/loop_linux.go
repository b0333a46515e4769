//go:build linux

package load

import (
	"context"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

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
	lcWriting          // wbuf, then body, still to send from woff
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
	body  []byte // a large body, sent from the request's own bytes after wbuf
	woff  int    // bytes of wbuf, then body, sent
	out   bool   // registered for EPOLLOUT
	bytes uint64 // request bytes
	rx    int64  // kernel receive time of the latest bytes read (unix ns); 0 if none
	part  bool   // part of the answer has been read
	p     respParser
	slot  int       // index in evloop.busy
	idle  time.Time // when it last went back to the pool
	reuse bool      // it carried a request before this one
}

// sentAll is true once the whole request, wbuf then body, is written.
func (c *lconn) sentAll() bool { return c.woff >= len(c.wbuf)+len(c.body) }

// unsent is what is left to send of the request: the rest of wbuf, then
// of body.
func (c *lconn) unsent() []byte {
	if c.woff < len(c.wbuf) {
		return c.wbuf[c.woff:]
	}
	return c.body[c.woff-len(c.wbuf):]
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
