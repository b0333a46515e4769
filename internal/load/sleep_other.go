//go:build !linux

package load

import "time"

// sleeper falls back to the runtime's timers where there is no timerfd.
type sleeper struct{}

func newSleeper() (*sleeper, error) { return &sleeper{}, nil }

func (s *sleeper) sleep(d time.Duration) { time.Sleep(d) }

func (s *sleeper) close() {}
