package load

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Clients brings clients up one after another, as opensearch-benchmark's
// ramp-up does: client i (from 0) starts at i*RampUp/Clients. Throttled
// (Throughput > 0), each client sends Throughput/Clients requests a second
// on its own schedule, so the clients share the total; flat out
// (Throughput 0) each sends its next request when the previous returns.
// The measured window opens after Warmup (equal to RampUp, it opens when
// every client is up). With AbortOnError the run stops at the first failed
// request and Detail.Abort says how many clients were running.
type Clients struct {
	Clients          int
	RampUp           time.Duration
	Throughput       float64 // total requests/s over all clients; 0 = as fast as they can
	Warmup, Duration time.Duration
	AbortOnError     bool
	Shard            Shard
}

func (m *Clients) spans() ([]span, error) {
	switch {
	case m.Clients < 1:
		return nil, fmt.Errorf("%d clients: write 1 or more", m.Clients)
	case m.RampUp < 0 || m.Throughput < 0:
		return nil, fmt.Errorf("a ramp-up of %s at %g requests/s: neither may be negative", m.RampUp, m.Throughput)
	case m.Duration <= 0 || m.Warmup < 0:
		return nil, fmt.Errorf("clients measured for %s after %s: the duration must be longer than zero", m.Duration, m.Warmup)
	}
	return []span{{name: fmt.Sprintf("%d clients", m.Clients), level: float64(m.Clients), offered: m.Throughput, warm: m.Warmup, length: m.Duration}}, nil
}

// StartOf is when client i starts, from the origin.
func (m *Clients) StartOf(i int) time.Duration {
	return time.Duration(int64(m.RampUp) * int64(i) / int64(m.Clients))
}

func (m *Clients) drive(ctx context.Context, a *Attack, split *splitter) (*Result, error) {
	d, err := newDriver(ctx, a, split, m.Shard)
	if err != nil {
		return nil, err
	}
	end := d.end
	starts := make([]time.Duration, m.Clients)
	var running atomic.Int64
	var abortMu sync.Mutex
	var abort *Abort
	onHit := func(h *hit) {
		if !m.AbortOnError || !d.failed(h) {
			return
		}
		abortMu.Lock()
		defer abortMu.Unlock()
		if abort != nil {
			return
		}
		n := int(running.Load())
		abort = &Abort{At: h.done.Sub(d.origin), Clients: n, Status: h.status, Error: h.errKind}
		if h.group >= 0 && h.group < len(a.Groups) {
			abort.Group = a.Groups[h.group].Name
		}
		if h.errKind != "" {
			abort.Status = 0
		}
		if m.Throughput > 0 {
			abort.Rate = m.Throughput * float64(n) / float64(m.Clients)
		}
		d.stop()
	}
	var interval time.Duration
	if m.Throughput > 0 {
		interval = time.Duration(float64(m.Clients) / m.Throughput * 1e9)
	}
	client := func(i int, start time.Time) {
		var c *conn
		defer func() { d.release(c) }()
		starts[i] = time.Since(d.origin)
		running.Add(1)
		next := start
		for next.Before(end) && !d.stopping.Load() && ctx.Err() == nil {
			if interval > 0 && !d.sleepUntil(ctx, next) {
				return
			}
			intended := next
			if interval == 0 {
				intended = time.Now()
			}
			j := d.job(intended)
			h := d.exchange(ctx, &c, &j)
			onHit(&h)
			if interval > 0 {
				next = next.Add(interval) // latency counts from this intended time
			} else {
				next = h.done
			}
		}
	}
	for i := range m.Clients {
		if !m.Shard.mine(i) {
			continue
		}
		// Each client waits on the runtime's own timer, which every P
		// checks as it schedules; a timerfd through the netpoller waits
		// for sysmon's 10 ms poll while the clients keep every P busy.
		start := d.origin.Add(m.StartOf(i))
		d.start(func() {
			if d.sleepUntil(ctx, start) {
				client(i, start)
			}
		})
	}
	r := d.collect(ctx)
	r.Detail = &ModelResult{Model: "clients", ClientStarts: starts, Abort: abort}
	return r, nil
}
