package load

import (
	"sync/atomic"
	"time"
)

// schedule walks an attack's arrivals in order, for both engines: the
// pacer's intended times, which belong to the warm-up or the measured
// window and to which half, and the measured arrivals due and dropped.
type schedule struct {
	a        *Attack
	origin   time.Time
	due      time.Duration // the current arrival's offset from origin
	n        uint64
	intended uint64 // measured arrivals due so far
	dropped  uint64 // measured arrivals never sent (workers report theirs as hits)
	pending  bool   // next returned the current arrival and take has not had it
	ended    bool   // the pacer stopped or the window is over

	canceledAt atomic.Int64 // unix ns when the attack's ctx ended; 0 while it has not
}

// cancel notes the moment the attack was canceled; it may be called from
// any goroutine (the engines' onCancel).
func (s *schedule) cancel() { s.canceledAt.CompareAndSwap(0, time.Now().UnixNano()) }

// next moves to the next arrival and returns its intended time; false when
// the pacer stops or the window is over.
func (s *schedule) next() (time.Time, bool) {
	wait, stop := s.a.Pacer.Pace(s.due, s.n)
	s.n++
	if stop {
		s.ended = true
		return time.Time{}, false
	}
	if wait > 0 {
		s.due += wait
	}
	if s.due >= s.a.Warmup+s.a.Duration {
		s.ended = true
		return time.Time{}, false
	}
	s.pending = true
	return s.origin.Add(s.due), true
}

// maxOverdue bounds overdue's walk (about a second of work): a pacer far
// beyond any rate a generator holds, stalled for long, must not hang the
// cancel that ends it. Past it the run has dropped arrivals by the million
// and cannot be judged anyway.
const maxOverdue = 50_000_000

// overdue counts, once a cancel has stopped the walk at stopped, every
// measured arrival that was due by the cancel and never taken: a generator
// that stalled (in a read, a slow source, a starved thread) and was then
// canceled did not send them, so they are dropped arrivals, and the rate
// offered is the schedule's, not what the stalled walk got to. It returns
// when the run stopped: the cancel's moment when the engine noticed it
// later.
func (s *schedule) overdue(stopped time.Time) time.Time {
	if stopped.IsZero() {
		return stopped
	}
	if ns := s.canceledAt.Load(); ns != 0 && ns < stopped.UnixNano() {
		// Carried onto stopped, which holds the monotonic reading.
		stopped = stopped.Add(time.Duration(ns - stopped.UnixNano()))
	}
	for walked := 0; !s.ended && walked < maxOverdue; walked++ {
		if s.pending {
			if s.origin.Add(s.due).After(stopped) {
				return stopped
			}
			s.pending = false
			if s.due >= s.a.Warmup {
				s.intended++
				s.dropped++
			}
		}
		s.next()
	}
	return stopped
}

// take makes the current arrival a job once the engine is awake for it. An
// arrival already later than MaxLateness is dropped instead (false):
// counted here, not reported one by one, since a generator far behind
// drops them by the thousand.
func (s *schedule) take(intended time.Time) (job, bool) {
	a := s.a
	s.pending = false
	j := job{intended: intended, measured: s.due >= a.Warmup}
	if s.due >= a.Warmup+a.Duration/2 {
		j.half = 1
	}
	if j.measured {
		s.intended++
	}
	if time.Since(intended) > a.MaxLateness {
		s.drop(&j)
		return j, false
	}
	stage := Warmup
	if j.measured {
		stage = Measured
	}
	if a.drawStage != nil {
		stage = a.drawStage(s.due) // a model's stages have warm-ups of their own (model_open.go)
	}
	j.req = a.Source.Next(stage)
	return j, true
}

// drop counts a job that will never be sent.
func (s *schedule) drop(j *job) {
	if j.measured {
		s.dropped++
	}
}
