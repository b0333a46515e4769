package load

import (
	"context"
	"fmt"
	"time"
)

// ClosedLoop is the concurrency ramp: at each stage Levels[i] workers each
// hold one request in flight, sending the next the moment the previous
// returns, for the stage's Warmup and then its measured Duration. It
// answers "how many concurrent requests fit", and cannot drive the target
// into an unbounded queue (it offers no rate of its own).
type ClosedLoop struct {
	Levels           []int // concurrency per stage, for example 1, 2, 4, 8
	Warmup, Duration time.Duration
	Shard            Shard
}

// Doubling is 1, 2, 4, ... up to and including max (max itself last when it
// is not a power of two).
func Doubling(max int) []int {
	var out []int
	for c := 1; c < max; c *= 2 {
		out = append(out, c)
	}
	if max >= 1 {
		out = append(out, max)
	}
	return out
}

func (m *ClosedLoop) spans() ([]span, error) {
	if m.Duration <= 0 || m.Warmup < 0 {
		return nil, fmt.Errorf("closed-loop stages of %s after %s warm-up: the duration must be longer than zero", m.Duration, m.Warmup)
	}
	var out []span
	var at time.Duration
	for i, c := range m.Levels {
		if c < 1 {
			return nil, fmt.Errorf("closed-loop stage %d: concurrency %d; write 1 or more", i+1, c)
		}
		out = append(out, span{name: fmt.Sprintf("c=%d", c), level: float64(c), begin: at, warm: m.Warmup, length: m.Duration})
		at += m.Warmup + m.Duration
	}
	return out, nil
}

func (m *ClosedLoop) drive(ctx context.Context, a *Attack, split *splitter) (*Result, error) {
	d, err := newDriver(ctx, a, split, m.Shard)
	if err != nil {
		return nil, err
	}
	d.start(func() {
		// The stages one after another: each starts its workers at its
		// own begin and they stop sending at its end, so a stage's warm-up
		// also absorbs the previous stage's last answers.
		for _, s := range split.spans {
			if !d.sleepUntil(ctx, d.origin.Add(s.begin)) {
				return
			}
			end := d.origin.Add(s.end())
			for w := 0; w < int(s.level); w++ {
				if !m.Shard.mine(w) {
					continue
				}
				d.start(func() { d.worker(ctx, end) })
			}
		}
	})
	r := d.collect(ctx)
	r.Detail = &ModelResult{Model: "closed"}
	return r, nil
}

// worker sends back to back on one connection until end.
func (d *driver) worker(ctx context.Context, end time.Time) {
	var c *conn
	defer func() { d.release(c) }()
	for !d.stopping.Load() && ctx.Err() == nil {
		now := time.Now()
		if !now.Before(end) {
			return
		}
		j := d.job(now)
		d.exchange(ctx, &c, &j)
	}
}
