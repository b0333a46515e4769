package load

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
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
//
// RetryShare of the users retry: the on-sale chapter's buyers, 10 % of
// whom retry a request that took longer than 2 s (RetryAfter), "because on
// the night they will". Each user draws once, from its own seeded stream,
// whether it is one of them. A buyer who retries does not wait for the slow
// page to finish first: at RetryAfter after the send, with no answer yet,
// it sends the same request again on another connection, and an answer
// that comes back failed (an unexpected status, a transport error) before
// then is retried at once, as a reload of an error page is. The abandoned
// request is not cut: the server goes on serving it, as it does a reloaded
// tab's, so it stays in flight on its own connection and its answer is
// recorded when it comes; the retry is a request of its own (its latency
// from its own send), counted apart in StageResult.Retries. A user retries
// an action at most once and then waits for the retry's answer, however
// slow: one retry already doubles what a slow target is asked, and a
// storm of retries of retries would measure the generator's rule, not the
// buyers'. A user thus holds at most two requests at once for each action,
// and each abandoned one ends by the attack's timeout.
type Population struct {
	Users            int
	Think            time.Duration
	Warmup, Duration time.Duration
	Seed             uint64 // seeds the think times and who retries
	Shard            Shard
	RetryShare       float64       // 0 to 1; 0 = nobody retries
	RetryAfter       time.Duration // how slow an answer the retriers retry; needed when RetryShare > 0
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
	case !(m.RetryShare >= 0 && m.RetryShare <= 1):
		return nil, fmt.Errorf("a retry share of %g: write a share of the users from 0 to 1, such as 0.1", m.RetryShare)
	case m.RetryShare > 0 && m.RetryAfter <= 0:
		return nil, fmt.Errorf("a retry share of %g retrying after %s: write how slow an answer they retry, such as 2s", m.RetryShare, m.RetryAfter)
	}
	return []span{{name: fmt.Sprintf("%d users", m.Users), level: float64(m.Users), offered: m.Offered(), warm: m.Warmup, length: m.Duration}}, nil
}

func (m *Population) drive(ctx context.Context, a *Attack, split *splitter) (*Result, error) {
	d, err := newDriver(ctx, a, split, m.Shard)
	if err != nil {
		return nil, err
	}
	end := d.end
	retriers := 0
	var w waits
	for i := range m.Users {
		if !m.Shard.mine(i) {
			continue
		}
		join := d.origin.Add(time.Duration(int64(m.Think) * int64(i) / int64(m.Users)))
		rng := rand.New(rand.NewPCG(m.Seed, uint64(i)))
		var after time.Duration
		// Drawn only when someone may retry, so a population without
		// retries thinks the very times it thought before they existed.
		if m.RetryShare > 0 && rng.Float64() < m.RetryShare {
			after = m.RetryAfter
			retriers++
		}
		d.start(func() { d.user(ctx, join, end, m.Think, after, rng, &w) })
	}
	r := d.collect(ctx)
	r.Detail = &ModelResult{Model: "population", Users: m.Users, Think: m.Think, Joins: m.Think,
		RetryShare: m.RetryShare, RetryAfter: m.RetryAfter, Retriers: retriers, Actions: w.n, Waited: w.total}
	return r, nil
}

// waits adds up what the users waited over the actions due in the
// measured window: from an action's due time to the answer the user took
// (a retry's, when it walked away from the first), which with retries is
// not any one request's latency.
type waits struct {
	mu    sync.Mutex
	n     uint64
	total time.Duration
}

func (w *waits) add(n uint64, total time.Duration) {
	w.mu.Lock()
	w.n += n
	w.total += total
	w.mu.Unlock()
}

// user runs one user until the run ends; retryAfter is 0 for a user who
// never retries. The requests it walks away from are its own goroutines,
// waited for before it returns.
func (d *driver) user(ctx context.Context, join, end time.Time, think, retryAfter time.Duration, rng *rand.Rand, w *waits) {
	var c *conn
	var left sync.WaitGroup
	var acts uint64
	var waited time.Duration
	defer func() {
		left.Wait()
		d.release(c)
		w.add(acts, waited)
	}()
	next := join
	for next.Before(end) && d.sleepUntil(ctx, next) {
		j := d.job(next)
		var h hit
		if retryAfter > 0 {
			h = d.retrying(ctx, &c, j, retryAfter, end, &left)
		} else {
			h = d.exchange(ctx, &c, &j)
		}
		if j.measured && h.kind == hitDone {
			acts++
			waited += h.done.Sub(j.intended)
		}
		next = h.done.Add(time.Duration(rng.ExpFloat64() * float64(think)))
	}
}

// retrying is one action of a user who retries (Population): j goes out on
// *c from a goroutine of its own, so that at after from the send, with no
// answer yet, the user can walk away from it and send j again on another
// connection; an answer that failed before then is sent again at once.
// The walked-away request keeps its connection, records its hit when it
// ends and closes the connection; left counts it until then. The hit
// returned is the one the user waited for: its done is when the user
// starts to think.
func (d *driver) retrying(ctx context.Context, c **conn, j job, after time.Duration, end time.Time, left *sync.WaitGroup) hit {
	type answer struct {
		h hit
		c *conn
	}
	got := make(chan answer, 1)
	var mu sync.Mutex // orders the walk-away against the answer's arrival
	walked := false
	first := *c
	*c = nil
	deadline := time.NewTimer(after)
	defer deadline.Stop()
	left.Add(1)
	go func() {
		defer left.Done()
		h := d.exchange(ctx, &first, &j)
		mu.Lock()
		defer mu.Unlock()
		if walked {
			d.release(first)
			return
		}
		got <- answer{h, first}
	}()
	var a answer
	select {
	case a = <-got:
	case <-deadline.C:
		mu.Lock()
		select {
		case a = <-got: // it came as the user gave up on it: the user has it
		default:
			walked = true
		}
		mu.Unlock()
	}
	if !walked {
		*c = a.c
		if !d.failed(&a.h) {
			return a.h
		}
	}
	now := time.Now()
	if !now.Before(end) || d.stopping.Load() || ctx.Err() != nil {
		// The run is over, or stopping: nobody is there to retry. The
		// user goes home with no answer.
		if walked {
			a.h = hit{kind: hitCanceled, done: now}
		}
		return a.h
	}
	// A request of its own: due now, filed under the window it is sent in.
	again := d.at(now)
	again.req, again.userRetry = j.req, true
	return d.exchange(ctx, c, &again)
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
