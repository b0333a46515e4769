package exampleservice

import (
	"math/rand/v2"
	"time"
)

// wait is one request's drawn wait: exponential of mean --wait-mean, plus
// --slow-by for a --slow-share of requests. Together with --cpu-work it
// makes a service of CPU work plus exponential waits, whose tail a small
// share of slower requests moves (the pooled tail rule's real gate test,
// internal/pairs).
func (c *config) wait() time.Duration {
	var d time.Duration
	if c.waitMean > 0 {
		d = time.Duration(rand.ExpFloat64() * float64(c.waitMean))
	}
	if c.slowShare > 0 && rand.Float64() < c.slowShare {
		d += c.slowBy
	}
	return d
}
