package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// driver runs the closed-loop, population and client models on the worker
// engine's parts: one goroutine per connection, each waiting for its answer
// before it sends again, the shared parser (client.go) and the recorder fed
// from one collecting goroutine. These models have at most one request in
// flight per connection and decide their next send from the last answer,
// which the event loop's one-goroutine schedule is not built to express.
type driver struct {
	a      *Attack
	ep     *endpoint
	origin time.Time
	end    time.Time // the last stage's end
	split  *splitter

	srcMu sync.Mutex // the Source is not safe for concurrent use
	hits  chan hit
	wg    sync.WaitGroup

	stopping atomic.Bool
	mu       sync.Mutex
	conns    map[*conn]struct{}
	stopped  time.Time // when cancel (or an abort) stopped the run; zero if it ran out
	stopOnce sync.Once
}

func newDriver(ctx context.Context, a *Attack, split *splitter, shard Shard) (*driver, error) {
	if err := shard.check(); err != nil {
		return nil, err
	}
	ep, err := endpointFor(ctx, a, a.Timeout)
	if err != nil {
		return nil, err
	}
	// Without a Start, a little ahead, so the first stage's first sends
	// are not late for the goroutines' start-up.
	origin := a.origin(5 * time.Millisecond)
	return &driver{a: a, ep: ep, origin: origin, end: origin.Add(split.spans[len(split.spans)-1].end()), split: split,
		hits: make(chan hit, 4096), conns: map[*conn]struct{}{}}, nil
}

// stop ends the run early: no new request goes out and the ones in flight
// fail at once (reported as abandoned).
func (d *driver) stop() {
	d.stopOnce.Do(func() {
		d.mu.Lock()
		d.stopped = time.Now()
		d.stopping.Store(true)
		for c := range d.conns {
			c.nc.SetDeadline(time.Unix(1, 0))
		}
		d.mu.Unlock()
	})
}

// go starts one of the model's goroutines; collect waits for them all.
func (d *driver) start(f func()) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f()
	}()
}

// collect records the goroutines' hits until they have all returned, then
// closes the result. It runs on the goroutine that called Run.
func (d *driver) collect(ctx context.Context) *Result {
	stopWatch := onCancel(ctx, d.stop)
	go func() {
		d.wg.Wait()
		close(d.hits)
	}()
	rc := newRecorder(d.a, d.origin)
	var tick <-chan time.Time
	if d.a.Progress != nil {
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		tick = tk.C
	}
	var sent uint64
	for done := false; !done; {
		select {
		case h, ok := <-d.hits:
			if !ok {
				done = true
				break
			}
			if h.measured && h.kind != hitDropped {
				sent++
			}
			rc.add(&h)
		case now := <-tick:
			rc.progress(now)
		}
	}
	stopWatch()
	d.mu.Lock()
	stopped := d.stopped
	d.mu.Unlock()
	return rc.finish(sent, 0, stopped)
}

// sleepUntil waits on the runtime's timer; false when the run stopped.
func (d *driver) sleepUntil(ctx context.Context, at time.Time) bool {
	if wait := time.Until(at); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
	return !d.stopping.Load() && ctx.Err() == nil
}

// job makes the request due at intended, drawn from the part of the data
// its stage's window calls for.
func (d *driver) job(intended time.Time) job {
	j := d.at(intended)
	stage := Warmup
	if j.measured {
		stage = Measured
	}
	d.srcMu.Lock()
	j.req = d.a.Source.Next(stage)
	d.srcMu.Unlock()
	return j
}

// at is a job due at intended, filed under the window it falls in, with
// no request yet: job draws one, a user's retry sends its first one again.
func (d *driver) at(intended time.Time) job {
	_, measured := d.split.stageOf(intended.Sub(d.origin))
	j := job{intended: intended, measured: measured}
	if intended.Sub(d.origin) >= d.a.Duration/2 {
		j.half = 1
	}
	return j
}

// exchange sends one job on *c (dialling when nil), the way the worker
// engine's workers do: a stale pooled connection is dropped before use, an
// idempotent request the target's close crossed goes once more. It returns
// the hit, already sent to the collector.
func (d *driver) exchange(ctx context.Context, c **conn, j *job) hit {
	h := hit{measured: j.measured, half: j.half, group: j.req.Group, intended: j.intended, serverDur: -1, userRetry: j.userRetry}
	h.sent = time.Now()
	if *c != nil && h.sent.Sub((*c).idle) > staleAfter && (*c).closedByTarget() {
		d.forget(*c)
		*c = nil
	}
	reused := *c != nil
	var keep bool
	var err error
	for attempt := 1; ; attempt++ {
		if *c == nil {
			*c, err = dial(ctx, d.ep)
			if err == nil {
				d.remember(*c)
			}
		}
		if err != nil {
			break
		}
		(*c).nc.SetDeadline(h.sent.Add(d.a.Timeout))
		if d.stopping.Load() {
			err = context.Canceled
			break
		}
		var resp response
		resp, keep, err = (*c).do(d.ep, &j.req)
		h.status, h.serverDur, h.bytesIn, h.bytesOut, h.hitOK, h.hitBeyond = resp.status, resp.serverDur, resp.bytesIn, resp.bytesOut, resp.hit, resp.hitBeyond
		h.wrong, h.sample = resp.wrong, resp.sample
		if err == nil || attempt > 1 || !reused || resp.bytesIn > 0 || !retryable(j.req.Method, err) {
			break
		}
		d.forget(*c)
		*c = nil
		h.sent = time.Now()
	}
	h.done = time.Now()
	if *c != nil {
		(*c).idle = h.done
	}
	if err != nil {
		// Cut by the caller's cancel before stopping was set: abandoned,
		// as in attack.go.
		if d.stopping.Load() || ctx.Err() != nil {
			h.kind = hitCanceled
		} else {
			h.errKind = errorKind(err)
		}
	}
	if (err != nil || !keep) && *c != nil {
		d.forget(*c)
		*c = nil
	}
	d.hits <- h
	return h
}

func (d *driver) remember(c *conn) {
	d.mu.Lock()
	d.conns[c] = struct{}{}
	if d.stopping.Load() {
		c.nc.SetDeadline(time.Unix(1, 0))
	}
	d.mu.Unlock()
}

func (d *driver) forget(c *conn) {
	d.mu.Lock()
	delete(d.conns, c)
	d.mu.Unlock()
	c.close()
}

// release closes a goroutine's connection when it is done with it.
func (d *driver) release(c *conn) {
	if c != nil {
		d.forget(c)
	}
}

// failed says whether a finished hit is a failure the plan did not expect.
func (d *driver) failed(h *hit) bool {
	if h.kind != hitDone {
		return false
	}
	var want []int
	if h.group >= 0 && h.group < len(d.a.Groups) {
		want = d.a.Groups[h.group].Expect
	}
	return !answeredRight(want, h)
}
