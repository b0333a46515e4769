package load

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/internal/redact"
)

// Attack is one open-loop run against one target.
type Attack struct {
	Target       string         // base URL, e.g. http://127.0.0.1:8080 or https://...
	CAFile       string         // TLS: trust this CA
	Source       Source         // the requests, in order
	Groups       []Group        // index = Request.Group
	Pacer        Pacer          // covers warm-up + measured window
	Warmup       time.Duration  // arrivals before this are sent but not measured
	Duration     time.Duration  // measured window after warm-up
	Start        time.Time      // schedule origin shared by paired attacks (zero: now)
	Offset       time.Duration  // every arrival shifted by this (A/B: half an interval)
	ServerTiming string         // "" = parse `Server-Timing: ...;dur=`; else a named header holding ms
	Hit          *HitRule       // optional: which expected answers are hits, by status, a header or a JSON field (hit.go)
	Redact       *redact.Set    // optional: secrets taken out of the wrong answers' bodies a result keeps (answer.go)
	Progress     func(Snapshot) // optional, called about once a second

	// MaxConns caps the connections (one per in-flight request); 0 means
	// 10,000. An arrival finding every connection busy at the cap waits and
	// is sent late.
	MaxConns int
	// MaxLateness is how late an arrival may be sent; one later still is
	// dropped and counted. 0 means 1 s. It also bounds how long a run that
	// fell behind goes on past its window.
	MaxLateness time.Duration
	// Timeout bounds each request, connecting included; 0 means 30 s.
	Timeout time.Duration

	// Model chooses how requests come (model.go); nil is open loop on Pacer.
	Model Model
	// Remote allows a target beyond loopback: a capacity experiment's
	// usual target is a staging host. The gate never sets it.
	Remote bool
	// Engine chooses what sends an open-loop attack's requests (a Model's
	// closed loop, population and clients always run on the worker
	// engine's parts). The zero value is the event loop where it serves
	// (Linux, plain HTTP) and the worker engine elsewhere.
	Engine Engine
	// observe sees every hit before the recorder does (model.go's stages).
	observe func(origin time.Time, h *hit)
	// drawStage, when set, says which part of the data an arrival due at
	// this offset draws from (model_open.go's stages).
	drawStage func(due time.Duration) Stage
}

// Result is what an attack measured, over the measured window only.
type Result struct {
	Groups   []*GroupStats    // index = Request.Group
	Halves   [2][]*GroupStats // first/second half of the measured window (by intended time)
	Schedule Schedule
	Measured time.Duration // the measured window; shorter when canceled
	Start    time.Time     // the schedule origin, offset included
	Canceled bool          // ctx was canceled before the window closed
	Detail   *ModelResult  // per-stage results and the model's figures; nil without a Model
}

// Total merges every group.
func (r *Result) Total() *GroupStats { return Merge(r.Groups) }

// Snapshot is the progress of a running attack.
type Snapshot struct {
	Elapsed  time.Duration // since the schedule origin
	Warmup   bool          // still in the warm-up
	Rate     float64       // requests finished per second over the last interval
	Done     uint64        // measured requests finished
	P50, P99 time.Duration // measured latency so far
	Failures uint64        // measured requests without an expected answer
	Dropped  uint64
}

type hitKind uint8

const (
	hitDone     hitKind = iota // sent and finished: answered or failed
	hitDropped                 // never sent
	hitCanceled                // sent, abandoned on cancel
)

type hit struct {
	kind                 hitKind
	measured             bool
	half                 uint8
	group                int
	intended, sent, done time.Time
	status               int
	errKind              string
	serverDur            int64
	bytesIn, bytesOut    uint64
	hitOK, hitBeyond     bool          // the answer is a hit by Attack.Hit; its JSON field lay past MaxHitBody
	wrong                bool          // the answer fails its group's AnswerRule (answer.go)
	sample               *AnswerSample // the first such answer of its group, else nil
	userRetry            bool          // a population user's retry (Population.RetryShare), counted apart
}

type job struct {
	intended time.Time
	measured bool
	half     uint8
	retried  bool // sent again after a reused connection failed it (stale.go)
	// userRetry is a population user's retry of a slow or failed answer
	// (Population.RetryShare): a request of its own, unlike retried.
	userRetry bool
	req       Request
}

// Run drives the attack and returns what the measured window measured.
// Canceling ctx stops at once and returns the partial result with
// Result.Canceled set and a nil error; an error means nothing ran.
func Run(ctx context.Context, a Attack) (*Result, error) {
	if a.Model != nil && a.observe == nil {
		return runModel(ctx, a)
	}
	switch {
	case a.Source == nil:
		return nil, errors.New("attack has no request source")
	case a.Pacer == nil:
		return nil, errors.New("attack has no pacer")
	case a.Duration <= 0:
		return nil, fmt.Errorf("attack duration %v: the measured window must be longer than zero", a.Duration)
	case a.Warmup < 0:
		return nil, fmt.Errorf("attack warm-up %v is negative", a.Warmup)
	}
	if a.Timeout <= 0 {
		a.Timeout = 30 * time.Second
	}
	if a.MaxLateness <= 0 {
		a.MaxLateness = time.Second
	}
	if a.MaxConns <= 0 {
		a.MaxConns = 10000
	}
	ep, err := endpointFor(ctx, &a, a.Timeout)
	if err != nil {
		return nil, err
	}
	origin := a.origin(0)
	if a.Engine != EngineWorkers {
		if r, ok := runLoop(ctx, &a, ep, origin); ok {
			return r, nil
		}
	}
	sl, err := newSleeper()
	if err != nil {
		return nil, err
	}
	t := &attacker{
		a: &a, ep: ep, sl: sl, origin: origin, sched: schedule{a: &a, origin: origin},
		work:  make(chan job),
		hits:  make(chan hit, 4096),
		conns: map[*conn]struct{}{},
	}
	go t.run(ctx)
	return collect(ctx, &a, t), nil
}

// origin is the schedule's origin, Offset included, read on the monotonic
// clock; lead is how far ahead of now a run without a Start begins. A Start
// parsed from text (the shards' shared --start) carries only the wall
// clock, and every wait and lateness measured against it would follow the
// wall clock's steps: on a virtual machine whose clock was stepped forward
// by seconds, five processes of one sharded experiment took every arrival
// for late and dropped them all, sending nothing. Read once here, the wall
// clock only says where the schedule begins.
func (a *Attack) origin(lead time.Duration) time.Time {
	now := time.Now()
	if a.Start.IsZero() {
		return now.Add(lead + a.Offset)
	}
	// Sub reads the monotonic clock when Start has it too, so a Start made
	// from time.Now comes back as the same instant.
	return now.Add(a.Start.Sub(now) + a.Offset)
}

// Engine is what sends an open-loop attack's requests.
type Engine uint8

const (
	// EngineAuto is the event loop (loop_linux.go) where it serves, and
	// the worker engine for TLS targets and systems without the loop.
	EngineAuto Engine = iota
	// EngineWorkers is the worker engine everywhere: a goroutine per
	// connection, the same parser and recorder. The tests run each case on
	// both engines with it.
	EngineWorkers
)

// attacker is the worker engine: a scheduling goroutine hands each arrival
// to a goroutine per connection, and collect records their hits.
type attacker struct {
	a        *Attack
	ep       *endpoint
	sl       *sleeper
	origin   time.Time
	work     chan job
	hits     chan hit
	stopping atomic.Bool
	wg       sync.WaitGroup
	workers  int

	mu    sync.Mutex
	conns map[*conn]struct{}

	// Written by run before it closes hits.
	sched   schedule
	stopped time.Time // when cancel stopped the schedule; zero if it ran out
}

// run is the scheduling loop. It owns the workers: it starts them, closes
// their work channel, waits for them, and then closes hits.
func (t *attacker) run(ctx context.Context) {
	defer close(t.hits)
	defer t.sl.close()
	stopWatch := onCancel(ctx, func() {
		t.sched.cancel()
		t.stopping.Store(true)
		t.abortAll()
	})
	a := t.a
	for {
		intended, ok := t.sched.next()
		if !ok {
			break
		}
		if !t.sleepUntil(ctx, intended) {
			t.stopped = time.Now()
			break
		}
		j, ok := t.sched.take(intended)
		if !ok {
			continue
		}
		select {
		case t.work <- j:
			continue
		default:
		}
		if t.workers < a.MaxConns {
			t.workers++
			t.wg.Add(1)
			go t.worker(ctx)
			t.work <- j
			continue
		}
		// Every connection is busy and no more may open: wait for one, but
		// not past the arrival's lateness bound.
		tooLate := time.NewTimer(time.Until(intended.Add(a.MaxLateness)))
		select {
		case t.work <- j:
		case <-tooLate.C:
			t.sched.drop(&j)
		case <-ctx.Done():
			t.sched.drop(&j)
		}
		tooLate.Stop()
	}
	close(t.work)
	t.wg.Wait()
	stopWatch()
	if t.stopped.IsZero() && ctx.Err() != nil {
		t.stopped = time.Now()
	}
	t.stopped = t.sched.overdue(t.stopped)
}

// sleepUntil waits for an arrival's intended time; false when canceled.
func (t *attacker) sleepUntil(ctx context.Context, at time.Time) bool {
	for {
		if t.stopping.Load() || ctx.Err() != nil {
			return false
		}
		d := time.Until(at)
		switch {
		case d <= 0:
			return true
		case d > 50*time.Millisecond:
			// A long gap (a zero-rate stage, a start in the future): wait
			// on the runtime's timer, which can be interrupted, and finish
			// with the precise sleeper.
			tm := time.NewTimer(d - 10*time.Millisecond)
			select {
			case <-ctx.Done():
				tm.Stop()
				return false
			case <-tm.C:
			}
		case d < 20*time.Microsecond:
			runtime.Gosched()
		default:
			t.sl.sleep(d)
		}
	}
}

func (t *attacker) worker(ctx context.Context) {
	defer t.wg.Done()
	var c *conn
	defer func() {
		if c != nil {
			t.forget(c)
		}
	}()
	for j := range t.work {
		h := hit{measured: j.measured, half: j.half, group: j.req.Group, intended: j.intended, serverDur: -1}
		if t.stopping.Load() {
			h.kind = hitDropped
			t.hits <- h
			continue
		}
		h.sent = time.Now()
		if c != nil && h.sent.Sub(c.idle) > staleAfter && c.closedByTarget() {
			t.forget(c) // closed while it sat idle: no request's failure
			c = nil
		}
		reused := c != nil
		var keep bool
		var err error
		for attempt := 1; ; attempt++ {
			if c == nil {
				c, err = dial(ctx, t.ep)
				if err == nil {
					t.remember(c)
				}
			}
			if err != nil {
				break
			}
			c.nc.SetDeadline(h.sent.Add(t.a.Timeout))
			if t.stopping.Load() { // after the deadline, so abortAll's cannot be overwritten unseen
				err = context.Canceled
				break
			}
			var resp response
			resp, keep, err = c.do(t.ep, &j.req)
			h.status, h.serverDur, h.bytesIn, h.bytesOut, h.hitOK, h.hitBeyond = resp.status, resp.serverDur, resp.bytesIn, resp.bytesOut, resp.hit, resp.hitBeyond
			h.wrong, h.sample = resp.wrong, resp.sample
			if err == nil || attempt > 1 || !reused || resp.bytesIn > 0 || !retryable(j.req.Method, err) {
				break
			}
			// The target closed the reused connection as the request
			// went out: once more on a new one (stale.go).
			t.forget(c)
			c = nil
			h.sent = time.Now()
		}
		h.done = time.Now()
		if c != nil {
			c.idle = h.done
		}
		if err != nil {
			// A dial or request cut by the caller's cancel, before the
			// watcher set stopping, was abandoned too: not the target's
			// failure (it showed as one "connect" error on a loaded runner).
			if t.stopping.Load() || ctx.Err() != nil {
				h.kind = hitCanceled
			} else {
				h.errKind = errorKind(err)
			}
		}
		if (err != nil || !keep) && c != nil {
			t.forget(c)
			c = nil
		}
		t.hits <- h
	}
}

func (t *attacker) remember(c *conn) {
	t.mu.Lock()
	t.conns[c] = struct{}{}
	t.mu.Unlock()
}

func (t *attacker) forget(c *conn) {
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
	c.close()
}

// abortAll makes every in-flight read and write fail at once.
func (t *attacker) abortAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.conns {
		c.nc.SetDeadline(time.Unix(1, 0))
	}
}

// onCancel runs f once if ctx ends before the returned stop is called. stop
// returns only after f has finished, so f never outlives what it touches
// (the workers' connections, the loop's eventfd).
func onCancel(ctx context.Context, f func()) (stop func()) {
	ran := make(chan struct{})
	after := context.AfterFunc(ctx, func() {
		defer close(ran)
		f()
	})
	return func() {
		if !after() {
			<-ran
		}
	}
}
