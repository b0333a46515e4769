package load

import (
	"context"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// recorder turns hits into a Result. Both engines feed it from a single
// goroutine, so the histograms need no lock.
type recorder struct {
	a      *Attack
	r      *Result
	origin time.Time
	expect [][]int
	// samples holds each group's first wrong answer (answer.go), which may
	// come in the warm-up, for the groups that answer wrong when measured.
	samples []*AnswerSample

	finished, lastFinished uint64
	lastTick               time.Time
	progLat                *hdrhistogram.Histogram // scratch for progress
}

func newRecorder(a *Attack, origin time.Time) *recorder {
	r := &Result{Start: origin}
	newGroups := func() []*GroupStats {
		gs := make([]*GroupStats, len(a.Groups))
		for i, g := range a.Groups {
			gs[i] = &GroupStats{Name: g.Name}
		}
		return gs
	}
	r.Halves = [2][]*GroupStats{newGroups(), newGroups()}
	expect := make([][]int, len(a.Groups))
	for i, g := range a.Groups {
		expect[i] = g.Expect
	}
	r.Schedule.Lateness = NewHistogram()
	return &recorder{a: a, r: r, origin: origin, expect: expect, lastTick: time.Now()}
}

func (rc *recorder) add(h *hit) {
	if h.kind == hitDone && h.errKind == KindOutOfSockets {
		// The generator could not open a socket: the arrival was never
		// sent, and the failure is the generator's, not the target's.
		h.kind = hitDropped
	}
	if rc.a.observe != nil {
		// A copy, so that only a model's runs pay for the hit escaping:
		// handing h itself to a func value moves every caller's hit to
		// the heap (TestLoopAllocatesNothingPerRequest).
		hc := *h
		rc.a.observe(rc.origin, &hc) // a model's stages (model.go)
	}
	if h.kind == hitDone {
		rc.finished++
	}
	if h.sample != nil {
		rc.keepSample(h)
	}
	if !h.measured {
		return
	}
	s := &rc.r.Schedule
	switch h.kind {
	case hitDropped:
		s.Dropped++
		if h.errKind == KindOutOfSockets {
			s.OutOfSockets++
		}
		return
	case hitCanceled:
		s.Sent++
		s.Canceled++
		return
	}
	s.Sent++
	late := h.sent.Sub(h.intended)
	if late >= LateAfter {
		s.Late++
	}
	record(&s.Lateness, late)
	g := max(h.group, 0) // a negative group is a source bug: keep the request counted
	halves := &rc.r.Halves
	for g >= len(halves[0]) {
		for i := range halves {
			halves[i] = append(halves[i], &GroupStats{Name: fmt.Sprintf("group %d", len(halves[i]))})
		}
		rc.expect = append(rc.expect, nil)
	}
	halves[h.half][g].add(h, isExpected(rc.expect[g], h.status))
}

func (rc *recorder) keepSample(h *hit) {
	g := max(h.group, 0)
	for g >= len(rc.samples) {
		rc.samples = append(rc.samples, nil)
	}
	if rc.samples[g] == nil {
		rc.samples[g] = h.sample
	}
}

// attachSamples gives each group that answered wrong when measured the
// first wrong answer its attack saw.
func (rc *recorder) attachSamples(gs []*GroupStats) {
	for i, g := range gs {
		if g.WrongAnswers > 0 && g.WrongAnswer == nil && i < len(rc.samples) {
			g.WrongAnswer = rc.samples[i]
		}
	}
}

// progress reports a snapshot to the attack's Progress callback.
func (rc *recorder) progress(now time.Time) {
	a, s := rc.a, &rc.r.Schedule
	snap := Snapshot{Elapsed: now.Sub(rc.origin), Warmup: now.Before(rc.origin.Add(a.Warmup)), Dropped: s.Dropped}
	if dt := now.Sub(rc.lastTick).Seconds(); dt > 0 {
		snap.Rate = float64(rc.finished-rc.lastFinished) / dt
	}
	rc.lastFinished, rc.lastTick = rc.finished, now
	// One reused histogram, not a Merge per tick: a long run must not
	// make garbage (and RSS) once a second just to print a line.
	if rc.progLat == nil {
		rc.progLat = NewHistogram()
	}
	rc.progLat.Reset()
	for _, half := range rc.r.Halves {
		for _, g := range half {
			snap.Done += g.Requests
			snap.Failures += g.Failures()
			if g.Latency != nil {
				rc.progLat.Merge(g.Latency)
			}
		}
	}
	// A live line, not a figure anything is judged on: hdrhistogram's own
	// quantile (rank rounded, no allocation) instead of NearestRank, whose
	// Distribution makes a slice of every bucket on each call.
	us := func(q float64) time.Duration { return time.Duration(rc.progLat.ValueAtQuantile(q)) * time.Microsecond }
	snap.P50, snap.P99 = us(50), us(99)
	a.Progress(snap)
}

// finish closes the result: intended arrivals, those the scheduler dropped
// without reporting each, and when a cancel stopped the schedule (zero if
// it ran out).
func (rc *recorder) finish(intended, dropped uint64, stopped time.Time) *Result {
	a, r := rc.a, rc.r
	s := &r.Schedule
	s.Intended = intended
	s.Dropped += dropped
	r.Measured = a.Duration
	if !stopped.IsZero() {
		r.Canceled = true
		m := stopped.Sub(rc.origin.Add(a.Warmup))
		r.Measured = min(max(m, 0), a.Duration)
	}
	rc.attachSamples(r.Halves[0])
	rc.attachSamples(r.Halves[1])
	r.Groups = make([]*GroupStats, len(r.Halves[0]))
	for i := range r.Groups {
		r.Groups[i] = Merge([]*GroupStats{r.Halves[0][i], r.Halves[1][i]})
	}
	if secs := r.Measured.Seconds(); secs > 0 {
		s.Offered = float64(s.Intended) / secs
		s.Achieved = float64(s.Sent) / secs
	}
	return r
}

// collect records the worker engine's hits as they arrive, from the
// goroutine that called Run.
func collect(ctx context.Context, a *Attack, t *attacker) *Result {
	rc := newRecorder(a, t.origin)
	var tick <-chan time.Time
	if a.Progress != nil {
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		select {
		case h, ok := <-t.hits:
			if !ok {
				return rc.finish(t.sched.intended, t.sched.dropped, t.stopped)
			}
			rc.add(&h)
		case now := <-tick:
			rc.progress(now)
		case <-ctx.Done():
			// Keep draining: the attacker stops at once and closes hits.
			ctx = context.Background()
		}
	}
}

// answeredRight says whether h is an answer the engine counts as served:
// it came back, with a status the group expects (want), and no wrong
// answer (a body or header the group's AnswerRule refuses). Everything
// else is a failure, the same one in a model's stages and seconds
// (splitter.observe) as in its retries and aborts (driver.failed), as
// GroupStats counts it.
func answeredRight(want []int, h *hit) bool {
	return h.kind == hitDone && h.errKind == "" && isExpected(want, h.status) && !h.wrong
}

func isExpected(want []int, status int) bool {
	if len(want) == 0 {
		return status >= 200 && status < 300
	}
	for _, w := range want {
		if w == status {
			return true
		}
	}
	return false
}
