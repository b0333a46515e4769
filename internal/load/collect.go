package load

import (
	"context"
	"fmt"
	"time"
)

// collect records hits as they arrive, from the goroutine that called Run,
// so the histograms need no lock.
func collect(ctx context.Context, a *Attack, t *attacker) *Result {
	r := &Result{Start: t.origin}
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
	s := &r.Schedule
	s.Lateness = NewHistogram()

	var tick <-chan time.Time
	if a.Progress != nil {
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		tick = tk.C
	}
	var finished, lastFinished uint64
	lastTick := time.Now()
	for {
		select {
		case h, ok := <-t.hits:
			if !ok {
				return finish(a, t, r)
			}
			if h.kind == hitDone {
				finished++
			}
			if !h.measured {
				continue
			}
			switch h.kind {
			case hitDropped:
				s.Dropped++
				continue
			case hitCanceled:
				s.Sent++
				s.Canceled++
				continue
			}
			s.Sent++
			late := h.sent.Sub(h.intended)
			if late >= LateAfter {
				s.Late++
			}
			record(&s.Lateness, late)
			g := max(h.group, 0) // a negative group is a source bug: keep the request counted
			for g >= len(r.Halves[0]) {
				for i := range r.Halves {
					r.Halves[i] = append(r.Halves[i], &GroupStats{Name: fmt.Sprintf("group %d", len(r.Halves[i]))})
				}
				expect = append(expect, nil)
			}
			r.Halves[h.half][g].add(&h, isExpected(expect[g], h.status))
		case now := <-tick:
			snap := Snapshot{Elapsed: now.Sub(t.origin), Warmup: now.Before(t.origin.Add(a.Warmup)), Dropped: s.Dropped}
			if dt := now.Sub(lastTick).Seconds(); dt > 0 {
				snap.Rate = float64(finished-lastFinished) / dt
			}
			lastFinished, lastTick = finished, now
			all := Merge(append(append([]*GroupStats{}, r.Halves[0]...), r.Halves[1]...))
			snap.Done, snap.Failures = all.Requests, all.Failures()
			snap.P50, snap.P99 = all.Percentile(50), all.Percentile(99)
			a.Progress(snap)
		case <-ctx.Done():
			// Keep draining: the attacker stops at once and closes hits.
			ctx = context.Background()
		}
	}
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

func finish(a *Attack, t *attacker, r *Result) *Result {
	s := &r.Schedule
	s.Intended = t.intended
	s.Dropped += t.dropped
	r.Measured = a.Duration
	if !t.stopped.IsZero() {
		r.Canceled = true
		m := t.stopped.Sub(t.origin.Add(a.Warmup))
		r.Measured = min(max(m, 0), a.Duration)
	}
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
