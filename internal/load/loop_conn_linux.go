//go:build linux

package load

import (
	"errors"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file holds the event loop's connections: finding or dialing one for
// a request, writing the request and reading the answer.

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
	c.wbuf, c.body = appendRequest(c.wbuf[:0], l.ep, &j.req)
	c.woff, c.bytes, c.rx, c.part = 0, uint64(len(c.wbuf)+len(c.body)), 0, false
	c.p.begin(j.req.Method == "HEAD", l.ep.timingHd, l.ep.hit, l.ep.answer(j.req.Group))
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
	for !c.sentAll() {
		b := c.unsent()
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
