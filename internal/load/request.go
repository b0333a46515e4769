// Package load is perfgate's open-loop load engine: pacers decide when each
// arrival is due, the attack sends it on schedule whatever the responses do,
// and metrics record latency from the intended send time in HDR histograms.
package load

import "time"

// Header is one request header; a slice keeps order and duplicates.
type Header struct{ Name, Value string }

// Request is one HTTP request ready to send. Path holds the path and query.
type Request struct {
	Group  int
	Method string
	Path   string
	Header []Header
	Body   []byte
}

// Stage tells a Source which part of its data to draw from: the warm-up
// draws from a part the measured stage never uses, so warming the
// connections does not prime the target's caches for measured lookups.
type Stage int

const (
	Warmup Stage = iota
	Measured
)

// Source hands out a run's requests in order. Next is called from the
// attack's scheduling goroutine only, so implementations need no locking.
type Source interface {
	Next(stage Stage) Request
}

// Group describes one request group: its name, the statuses that count
// as the answer the plan expects, and what else that answer must hold
// (nil: nothing; answer.go).
type Group struct {
	Name   string
	Expect []int
	Answer *AnswerRule
}

// Pacer decides the arrival schedule, like vegeta's: Pace says how long to
// wait before the next arrival given the time elapsed and the arrivals so
// far, or stop; Rate is the intended rate at that moment, in arrivals/s.
type Pacer interface {
	Pace(elapsed time.Duration, hits uint64) (wait time.Duration, stop bool)
	Rate(elapsed time.Duration) float64
}
