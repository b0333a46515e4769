//go:build linux

package load

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// This file holds how a request ends in the event loop: recorded as an
// answer or a failure, timed out, retried on a fresh connection, or left
// in flight when the attack stops.

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
	if !c.sentAll() {
		reuse = false // answered before the request was all sent
	}
	r := c.p.result()
	l.rec.add(&hit{kind: hitDone, measured: c.job.measured, half: c.job.half, group: c.job.req.Group,
		intended: c.job.intended, sent: c.sent, done: done, status: r.status, serverDur: r.serverDur,
		bytesIn: r.bytesIn, bytesOut: c.bytes, hitOK: r.hit, hitBeyond: r.hitBeyond,
		wrong: r.wrong, sample: r.sample})
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
