package load

import "time"

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
}

// next moves to the next arrival and returns its intended time; false when
// the pacer stops or the window is over.
func (s *schedule) next() (time.Time, bool) {
	wait, stop := s.a.Pacer.Pace(s.due, s.n)
	s.n++
	if stop {
		return time.Time{}, false
	}
	if wait > 0 {
		s.due += wait
	}
	if s.due >= s.a.Warmup+s.a.Duration {
		return time.Time{}, false
	}
	return s.origin.Add(s.due), true
}

// take makes the current arrival a job once the engine is awake for it. An
// arrival already later than MaxLateness is dropped instead (false):
// counted here, not reported one by one, since a generator far behind
// drops them by the thousand.
func (s *schedule) take(intended time.Time) (job, bool) {
	a := s.a
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
	j.req = a.Source.Next(stage)
	return j, true
}

// drop counts a job that will never be sent.
func (s *schedule) drop(j *job) {
	if j.measured {
		s.dropped++
	}
}
