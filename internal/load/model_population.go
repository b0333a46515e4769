package load

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Population is N users who each wait a think time, exponentially
// distributed around Think, after every answer before their next request:
// a model of people, where a closed-loop worker is an infinitely impatient
// robot. User i joins at i*Think/Users (joins staggered over one mean think
// time, so the population does not open with a thundering herd) and sends
// its first request the moment it joins. The users share the plan's one
// data source, so with draw = "zipf" they share one Zipf-ranked catalogue,
// as readers' overlapping interest does.
type Population struct {
	Users            int
	Think            time.Duration
	Warmup, Duration time.Duration
	Seed             uint64 // seeds the think times
	Shard            Shard
}

// Offered is the rate the users ask for while nothing makes them wait:
// Users / Think.
func (m *Population) Offered() float64 { return float64(m.Users) / m.Think.Seconds() }

func (m *Population) spans() ([]span, error) {
	switch {
	case m.Users < 1:
		return nil, fmt.Errorf("a population of %d users: write 1 or more", m.Users)
	case m.Think <= 0:
		return nil, fmt.Errorf("a think time of %s: write a positive mean think time, such as 30s", m.Think)
	case m.Duration <= 0 || m.Warmup < 0:
		return nil, fmt.Errorf("a population measured for %s after %s: the duration must be longer than zero", m.Duration, m.Warmup)
	}
	return []span{{name: fmt.Sprintf("%d users", m.Users), level: float64(m.Users), offered: m.Offered(), warm: m.Warmup, length: m.Duration}}, nil
}

func (m *Population) drive(ctx context.Context, a *Attack, split *splitter) (*Result, error) {
	d, err := newDriver(ctx, a, split, m.Shard)
	if err != nil {
		return nil, err
	}
	end := d.end
	for i := range m.Users {
		if !m.Shard.mine(i) {
			continue
		}
		join := d.origin.Add(time.Duration(int64(m.Think) * int64(i) / int64(m.Users)))
		rng := rand.New(rand.NewPCG(m.Seed, uint64(i)))
		d.start(func() { d.user(ctx, join, end, m.Think, rng) })
	}
	r := d.collect(ctx)
	r.Detail = &ModelResult{Model: "population", Users: m.Users, Think: m.Think, Joins: m.Think}
	return r, nil
}

func (d *driver) user(ctx context.Context, join, end time.Time, think time.Duration, rng *rand.Rand) {
	var c *conn
	defer func() { d.release(c) }()
	next := join
	for next.Before(end) && d.sleepUntil(ctx, next) {
		j := d.job(next)
		h := d.exchange(ctx, &c, &j)
		next = h.done.Add(time.Duration(rng.ExpFloat64() * float64(think)))
	}
}

// ThinkTimes is how many mean think times a window holds.
func ThinkTimes(window, think time.Duration) float64 {
	if think <= 0 {
		return math.Inf(1)
	}
	return window.Seconds() / think.Seconds()
}

// JoiningBias is how high a population's rate reads over a window that
// starts when the first user joins: every user sends one request as it
// joins (joins spread over one think time) and then one per think time, so
// over k think times the window holds N*(k + 1/2) requests where the
// steady state holds N*k: the rate reads 1 + 1/(2k) times too high, 25 % at
// k = 2, 5 % at k = 10. A window that opens after every user has joined
// carries no such bias (the think times are memoryless).
func JoiningBias(window, think time.Duration) float64 {
	k := ThinkTimes(window, think)
	if k <= 0 {
		return math.Inf(1)
	}
	return 1 + 1/(2*k)
}

// MinThinkTimes is the shortest window, in think times, over which a
// population's rate is trusted for a saturation verdict.
const MinThinkTimes = 10
