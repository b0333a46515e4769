package load

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histograms hold microseconds from 1 µs to 1 h at 3 significant figures.
const (
	histMax    = int64(time.Hour / time.Microsecond)
	histSigFig = 3
)

// NewHistogram returns an empty histogram with the engine's geometry.
func NewHistogram() *hdrhistogram.Histogram { return hdrhistogram.New(1, histMax, histSigFig) }

func record(h **hdrhistogram.Histogram, d time.Duration) {
	recordMicros(h, d.Microseconds())
}

func recordMicros(h **hdrhistogram.Histogram, us int64) {
	if *h == nil {
		*h = NewHistogram()
	}
	if us < 0 {
		us = 0
	}
	if us > histMax {
		us = histMax
	}
	(*h).RecordValue(us) // cannot fail: us is clamped to the range
}

// GroupStats is what one request group measured. The zero value is ready to
// use: histograms and maps are made on first record. Latency runs from the
// intended send time (no coordinated omission), Service from the actual send,
// Server is the target's own figure from its response header. Only answers
// with an expected status enter the histograms: a failure is usually fast,
// and counting it would make a shedding target look better.
type GroupStats struct {
	Name                     string
	Latency, Service, Server *hdrhistogram.Histogram
	Requests                 uint64 // answered or failed (every arrival that was sent and finished)
	Expected, Unexpected     uint64 // answers with a status the plan expects / any other status
	Statuses                 map[int]uint64
	Errors                   map[string]uint64 // transport failures by kind; no status
	BytesIn, BytesOut        uint64
	// Hits counts the expected answers that are hits by Attack.Hit (an
	// unexpected status or a wrong answer is never one, so Hits is at most
	// Expected); HitBeyond the misses whose JSON field lay past
	// MaxHitBody.
	Hits, HitBeyond uint64
	// WrongAnswers counts the answers with an expected status that fail
	// the group's AnswerRule: failures, like an unexpected status, and
	// kept out of the histograms. WrongAnswer is the first of the run
	// (warm-up included), nil when there was none.
	WrongAnswers uint64
	WrongAnswer  *AnswerSample
}

func (g *GroupStats) add(h *hit, expected bool) {
	g.Requests++
	g.BytesIn += h.bytesIn
	g.BytesOut += h.bytesOut
	if h.errKind != "" {
		if g.Errors == nil {
			g.Errors = map[string]uint64{}
		}
		g.Errors[h.errKind]++
		return
	}
	if g.Statuses == nil {
		g.Statuses = map[int]uint64{}
	}
	g.Statuses[h.status]++
	if !expected {
		g.Unexpected++
		return
	}
	if h.wrong {
		g.WrongAnswers++
		return
	}
	g.Expected++
	if h.hitOK {
		g.Hits++
	} else if h.hitBeyond {
		g.HitBeyond++
	}
	record(&g.Latency, h.done.Sub(h.intended))
	record(&g.Service, h.done.Sub(h.sent))
	if h.serverDur >= 0 {
		recordMicros(&g.Server, h.serverDur)
	}
}

// Percentile is the nearest-rank p-th percentile (p in 0..100) of Latency.
func (g *GroupStats) Percentile(p float64) time.Duration { return NearestRank(g.Latency, p) }

// FractionUnder is the fraction of expected answers whose latency is strictly
// under d.
func (g *GroupStats) FractionUnder(d time.Duration) float64 { return FractionUnder(g.Latency, d) }

// SuccessRatio is expected answers over requests sent and finished; 0 when
// nothing finished (nothing measured is not a success).
func (g *GroupStats) SuccessRatio() float64 {
	if g.Requests == 0 {
		return 0
	}
	return float64(g.Expected) / float64(g.Requests)
}

// Failures is every finished request that did not get an expected answer.
func (g *GroupStats) Failures() uint64 { return g.Requests - g.Expected }

// Merge adds groups together (for example both halves, or every group). The
// name is kept when all agree, else "all".
func Merge(gs []*GroupStats) *GroupStats {
	m := &GroupStats{}
	for i, g := range gs {
		if g == nil {
			continue
		}
		if i == 0 || m.Name == g.Name {
			m.Name = g.Name
		} else {
			m.Name = "all"
		}
		m.Requests += g.Requests
		m.Expected += g.Expected
		m.Unexpected += g.Unexpected
		m.Hits += g.Hits
		m.HitBeyond += g.HitBeyond
		m.WrongAnswers += g.WrongAnswers
		if m.WrongAnswer == nil {
			m.WrongAnswer = g.WrongAnswer
		}
		m.BytesIn += g.BytesIn
		m.BytesOut += g.BytesOut
		for k, v := range g.Statuses {
			if m.Statuses == nil {
				m.Statuses = map[int]uint64{}
			}
			m.Statuses[k] += v
		}
		for k, v := range g.Errors {
			if m.Errors == nil {
				m.Errors = map[string]uint64{}
			}
			m.Errors[k] += v
		}
		mergeHist(&m.Latency, g.Latency)
		mergeHist(&m.Service, g.Service)
		mergeHist(&m.Server, g.Server)
	}
	return m
}

func mergeHist(dst **hdrhistogram.Histogram, src *hdrhistogram.Histogram) {
	if src == nil {
		return
	}
	if *dst == nil {
		*dst = NewHistogram()
	}
	(*dst).Merge(src)
}

// NearestRank is the p-th percentile (p in 0..100) by the nearest-rank rule:
// the smallest recorded value with at least ceil(p/100*N) values at or below
// it, reported as its bucket's highest equivalent value. hdrhistogram's own
// ValueAtQuantile rounds the rank instead, so it is not used.
func NearestRank(h *hdrhistogram.Histogram, p float64) time.Duration {
	if h == nil || h.TotalCount() == 0 || math.IsNaN(p) {
		return 0
	}
	n := h.TotalCount()
	p = math.Min(math.Max(p, 0), 100)
	rank := int64(math.Ceil(p / 100 * float64(n)))
	if rank < 1 {
		rank = 1
	}
	var seen int64
	for _, b := range h.Distribution() {
		seen += b.Count
		if seen >= rank {
			return time.Duration(b.To) * time.Microsecond
		}
	}
	return time.Duration(h.Max()) * time.Microsecond
}

// FractionUnder is the fraction of recorded values strictly under d. A value
// counts only when its whole bucket lies under d, so at the 0.1 % resolution
// edge the fraction errs low, never flattering the target.
func FractionUnder(h *hdrhistogram.Histogram, d time.Duration) float64 {
	if h == nil || h.TotalCount() == 0 {
		return 0
	}
	limit := d.Microseconds()
	if d%time.Microsecond != 0 {
		limit++ // values are whole µs: v < 1.5 µs means v <= 1 µs
	}
	var under int64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		if b.To >= limit {
			break
		}
		under += b.Count
	}
	return float64(under) / float64(h.TotalCount())
}

// Schedule is the health of the arrival schedule over the measured window.
type Schedule struct {
	Offered  float64                 // arrivals the pacer scheduled, per second of the measured window
	Achieved float64                 // arrivals actually sent, per second of the measured window
	Intended uint64                  // arrivals due in the measured window
	Sent     uint64                  // of those, sent
	Late     uint64                  // of those sent, sent LateAfter or more after their intended time
	Dropped  uint64                  // never sent: later than MaxLateness, canceled before sending, or no socket
	Canceled uint64                  // sent but abandoned when the attack was canceled
	Lateness *hdrhistogram.Histogram // µs from intended to actual send, every sent arrival

	// OutOfSockets counts, among Dropped, the arrivals the generator could
	// open no connection for: its own open-file limit (EMFILE, ENFILE) or
	// local ports (EADDRNOTAVAIL). The generator's fault, not the target's
	// errors, so a run with any cannot be judged.
	OutOfSockets uint64
}

// LateAfter is the lateness from which a sent arrival counts as late.
const LateAfter = time.Millisecond
