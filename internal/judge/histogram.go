package judge

import (
	"encoding/json"
	"fmt"
	"math"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram is one phase's latency histogram of one request group, as the
// load engine recorded it: microseconds in an HdrHistogram at 3
// significant figures. The report keeps it so that the tails (p95, p99)
// can be judged from every answer of an arm's pairs together rather than
// from a phase's few slowest answers, and so that `perfgate compare` can
// judge them again. In JSON it is HdrHistogram's compressed V2 encoding
// in base64, which any HdrHistogram library reads: a few hundred bytes a
// phase however many answers it holds.
type Histogram struct {
	h *hdrhistogram.Histogram
	// The buckets, read once: each tail metric of the group reads them.
	once   sync.Once
	cached []bin
}

// NewHistogram wraps h for the report; nil when h is nil or empty, so a
// group the arm never answered as planned carries no histogram.
func NewHistogram(h *hdrhistogram.Histogram) *Histogram {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	return &Histogram{h: h}
}

// Count is how many answers the histogram holds; 0 for nil.
func (h *Histogram) Count() uint64 {
	if h == nil || h.h == nil {
		return 0
	}
	return uint64(h.h.TotalCount())
}

// Percentile is the nearest-rank p-th percentile in milliseconds, read
// the way the load engine reads a phase's own percentiles (the highest
// value of the rank's bucket), so a phase's pooled and per-phase figures
// agree on one phase.
func (h *Histogram) Percentile(p float64) float64 {
	return kthLargest([][]bin{h.bins()}, topRank(h.Count(), p))
}

// MarshalJSON writes the compressed V2 encoding, base64, as a string.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	if h == nil || h.h == nil {
		return []byte("null"), nil
	}
	b, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("encoding a latency histogram: %w", err)
	}
	return json.Marshal(string(b))
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (h *Histogram) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("reading a latency histogram: it must be a string of HdrHistogram's base64 V2 encoding: %w", err)
	}
	d, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return fmt.Errorf("reading a latency histogram: %w", err)
	}
	*h = Histogram{h: d}
	return nil
}

// bin is one bucket of a histogram: its value in milliseconds and how
// many answers it holds.
type bin struct {
	ms    float64
	count uint64
}

// bins are the histogram's non-empty buckets, slowest first.
func (h *Histogram) bins() []bin {
	if h == nil || h.h == nil {
		return nil
	}
	h.once.Do(func() { h.cached = readBins(h.h) })
	return h.cached
}

func readBins(h *hdrhistogram.Histogram) []bin {
	var out []bin
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out = append(out, bin{ms: float64(b.To) / 1000, count: uint64(b.Count)})
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// topRank is where the nearest-rank p-th percentile of n answers lies,
// counted from the slowest (1 is the slowest answer); 0 when n is 0.
func topRank(n uint64, p float64) uint64 {
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p / 100 * float64(n)))
	rank = max(rank, 1)
	return n - min(rank, n) + 1
}

// kthLargest is the k-th slowest answer over lists of bins, each slowest
// first: a k-way merge that reads only as far as it must. 0 when k is 0
// or the lists hold fewer than k answers.
func kthLargest(lists [][]bin, k uint64) float64 {
	if k == 0 {
		return 0
	}
	var pos [64]int // the lists are an arm's phases, one a pair: few
	at := pos[:0]
	if len(lists) > len(pos) {
		at = make([]int, 0, len(lists))
	}
	at = at[:len(lists)]
	var seen uint64
	for {
		best := -1
		for i, l := range lists {
			if at[i] < len(l) && (best < 0 || l[at[i]].ms > lists[best][at[best]].ms) {
				best = i
			}
		}
		if best < 0 {
			return 0
		}
		b := lists[best][at[best]]
		seen += b.count
		if seen >= k {
			return b.ms
		}
		at[best]++
	}
}

// truncate keeps the slowest bins of bs up to k answers: a pooled
// percentile whose rank from the top is at most k reads nothing below.
func truncate(bs []bin, k uint64) []bin {
	var seen uint64
	for i, b := range bs {
		seen += b.count
		if seen >= k {
			return bs[:i+1]
		}
	}
	return bs
}

// Mapped is a copy of h with every answer's value moved by f, in
// milliseconds; f must not decrease, so each answer keeps its rank. It is
// how a recorded phase is given a known slowdown (bench/power resamples
// recorded A/A gates and slows their heads), not anything a gate does.
// Values past the histogram's range are kept at its highest.
func (h *Histogram) Mapped(f func(ms float64) float64) *Histogram {
	if h == nil || h.h == nil {
		return nil
	}
	out := hdrhistogram.New(h.h.LowestTrackableValue(), h.h.HighestTrackableValue(), int(h.h.SignificantFigures()))
	for _, b := range h.h.Distribution() {
		if b.Count == 0 {
			continue
		}
		v := int64(math.Round(f(float64(b.To)/1000) * 1000))
		v = min(max(v, out.LowestTrackableValue()), out.HighestTrackableValue())
		if err := out.RecordValues(v, b.Count); err != nil {
			// Unreachable: v is clamped into the histogram's range.
			continue
		}
	}
	return NewHistogram(out)
}
