package load

import (
	"math"
	"sort"
	"time"
)

// The pacers here share one convention: Pace(elapsed, hits) returns how long
// after elapsed arrival number hits (counting from 0) is due, or stop when
// there is no such arrival. The attack calls Pace with elapsed set to the
// previous arrival's intended time, never the wall clock, so the schedule is a
// pure function of the pacer and a slow generator cannot bend it: arrivals it
// could not send on time stay on their intended times and show up as late or
// dropped instead of silently moving.

// ConstantPacer sends Freq arrivals per second, the first one at time zero.
type ConstantPacer struct {
	Freq float64
}

// Pace implements Pacer.
func (c ConstantPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if !(c.Freq > 0) || math.IsInf(c.Freq, 0) {
		return 0, true
	}
	due := float64(hits) / c.Freq * 1e9
	if due >= math.MaxInt64 {
		return 0, true
	}
	return time.Duration(due) - elapsed, false
}

// Rate implements Pacer.
func (c ConstantPacer) Rate(time.Duration) float64 { return c.Freq }

// RateStage is one stage of a staged pacer: the rate moves linearly from the
// previous stage's target (or the start rate) to Target over Duration, like
// k6's ramping-arrival-rate executor. A stage whose target equals the previous
// one is a plateau.
type RateStage struct {
	Target   float64
	Duration time.Duration
}

// StagedPacer sends arrivals whose rate follows straight lines between stage
// targets: arrival n is due when the integral of the rate reaches n. It stops
// at the end of the last stage.
type StagedPacer struct {
	segs []segment
	end  time.Duration
}

type segment struct {
	start      time.Duration
	dur        time.Duration
	from, to   float64 // arrivals/s at the segment's start and end
	before     float64 // arrivals due before the segment starts
	arrivals   float64 // arrivals due within the segment
	secs, half float64 // duration in seconds; (to-from)/(2*secs), the quadratic term
}

// NewStagedPacer builds a staged pacer starting at startRate. Negative rates
// count as zero; stages with no duration change the rate at once.
func NewStagedPacer(startRate float64, stages []RateStage) *StagedPacer {
	p := &StagedPacer{}
	from := math.Max(startRate, 0)
	var at time.Duration
	var before float64
	for _, st := range stages {
		to := math.Max(st.Target, 0)
		if st.Duration <= 0 {
			from = to
			continue
		}
		secs := st.Duration.Seconds()
		s := segment{start: at, dur: st.Duration, from: from, to: to, before: before,
			arrivals: (from + to) / 2 * secs, secs: secs, half: (to - from) / (2 * secs)}
		p.segs = append(p.segs, s)
		before += s.arrivals
		at += st.Duration
		from = to
	}
	p.end = at
	return p
}

// Pace implements Pacer.
func (p *StagedPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	n := float64(hits)
	// The first segment whose arrivals reach past n holds arrival n.
	i := sort.Search(len(p.segs), func(i int) bool { return p.segs[i].before+p.segs[i].arrivals > n })
	if i == len(p.segs) {
		return 0, true
	}
	s := p.segs[i]
	x := n - s.before
	if x <= 0 {
		return s.start - elapsed, false
	}
	// Solve from*t + half*t^2 = x for t in the segment. The form
	// 2x/(from+sqrt(from^2+4*half*x)) stays exact when half is 0 and needs no
	// division by half when the ramp goes down.
	disc := s.from*s.from + 4*s.half*x
	if disc < 0 {
		disc = 0
	}
	den := s.from + math.Sqrt(disc)
	if den <= 0 {
		return 0, true
	}
	t := 2 * x / den
	if t > s.secs {
		t = s.secs
	}
	return s.start + time.Duration(t*1e9) - elapsed, false
}

// Rate implements Pacer.
func (p *StagedPacer) Rate(elapsed time.Duration) float64 {
	for _, s := range p.segs {
		if elapsed < s.start+s.dur {
			if elapsed < s.start {
				return 0
			}
			f := float64(elapsed-s.start) / float64(s.dur)
			return s.from + (s.to-s.from)*f
		}
	}
	return 0
}

// Duration is the total length of the stages.
func (p *StagedPacer) Duration() time.Duration { return p.end }

// PacerFunc adapts a function to Pacer, keeping the convention above. Its
// Rate is unknown and reported as NaN; reports use the counted arrivals.
type PacerFunc func(elapsed time.Duration, hits uint64) (time.Duration, bool)

// Pace implements Pacer.
func (f PacerFunc) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	return f(elapsed, hits)
}

// Rate implements Pacer.
func (f PacerFunc) Rate(time.Duration) float64 { return math.NaN() }
