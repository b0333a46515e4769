package target

import "time"

// Delivered is the capacity the pool delivered so far: W over the mean
// time a worker held a request. It is W/S on a quiet machine; on a
// crowded one each worker's sleep of S ends late, by however long the
// scheduler takes to wake it, and the pool serves fewer than W/S a
// second. A test that claims the knee is the pool's capacity compares it
// with this, the capacity the run met, not with W/S. 0 before any request
// was served.
func (s *Server) Delivered() float64 {
	n, busy := s.served.Load(), time.Duration(s.busy.Load())
	if n == 0 || busy <= 0 {
		return 0
	}
	return float64(s.cfg.Workers) / (busy / time.Duration(n)).Seconds()
}
