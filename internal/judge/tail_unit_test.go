package judge

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfgate/perfgate/internal/load"
)

// hist is a histogram of the given answers in ms.
func hist(ms ...float64) *Histogram {
	h := load.NewHistogram()
	for _, v := range ms {
		h.RecordValue(int64(v * 1000))
	}
	return NewHistogram(h)
}

// spreadOf is n answers from lo to hi ms, evenly.
func spreadOf(n int, lo, hi float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return out
}

func TestTopRankAndKthLargest(t *testing.T) {
	tests := []struct {
		name  string
		lists [][]bin
		n     uint64
		p     float64
		want  float64
	}{
		{name: "p99 of 100 is the slowest", lists: [][]bin{{{5, 1}, {1, 99}}}, n: 100, p: 99, want: 1},
		{name: "p99 of 101 is the second slowest", lists: [][]bin{{{5, 1}, {3, 1}, {1, 99}}}, n: 101, p: 99, want: 3},
		{name: "merged over two phases", lists: [][]bin{{{9, 1}, {2, 49}}, {{8, 1}, {4, 1}, {1, 48}}}, n: 100, p: 97, want: 2},
		{name: "p100 is the slowest", lists: [][]bin{{{7, 2}}, {{9, 1}}}, n: 3, p: 100, want: 9},
		{name: "nothing recorded", lists: [][]bin{{}}, n: 0, p: 99, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kthLargest(tt.lists, topRank(tt.n, tt.p)); got != tt.want {
				t.Errorf("got %v, want %v (rank from the top %d)", got, tt.want, topRank(tt.n, tt.p))
			}
		})
	}
}

func TestPooledTailRefuses(t *testing.T) {
	some := hist(spreadOf(100, 1, 3)...)
	seven := func(h *Histogram) []*Histogram { return []*Histogram{h, h, h, h, h, h, h} }
	tests := []struct {
		name       string
		base, head []*Histogram
		want       string
	}{
		{name: "six pairs", base: seven(some)[:6], head: seven(some)[:6], want: "6 pairs give 64 patterns of labels, too few for a bound at 1 %: the pooled rule needs 7 pairs"},
		{name: "an arm with no answer", base: seven(some), head: seven(nil), want: "an arm has no answer as planned in any phase"},
		{name: "arms of unequal pairs", base: seven(some), head: seven(some)[:6], want: "7 base phases and 6 head phases"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PooledTail(DefaultTailRule, 99, 0.05, tt.base, tt.head)
			if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0].Error(), tt.want) || got.Fail {
				t.Errorf("warnings %v fail %v, want one saying %q", got.Warnings, got.Fail, tt.want)
			}
		})
	}
}

// Pairs past MaxExact draw their patterns with the rule's seed: the same
// figures every time, and the bound still holds an A/A gate.
func TestPooledTailSampledPatternsAreRepeatable(t *testing.T) {
	var base, head []*Histogram
	for i := range 14 {
		base = append(base, hist(spreadOf(200, 1, 3+0.01*float64(i))...))
		head = append(head, hist(spreadOf(200, 1, 3.01-0.01*float64(i%3))...))
	}
	a := PooledTail(DefaultTailRule, 99, 0.05, base, head)
	b := PooledTail(DefaultTailRule, 99, 0.05, base, head)
	if a.Exact || a.Patterns != DefaultTailRule.Patterns || len(a.Warnings) > 0 {
		t.Fatalf("14 pairs: exact %v, %d patterns, warnings %v; want %d drawn patterns", a.Exact, a.Patterns, a.Warnings, DefaultTailRule.Patterns)
	}
	if a.Bound != b.Bound || a.CI != b.CI || a.Detectable != b.Detectable {
		t.Errorf("two judgements differ: %+v and %+v", a, b)
	}
	if a.Fail {
		t.Errorf("an A/A-like gate of 14 pairs failed: worse %v, bound %v", a.Worse, a.Bound)
	}
}

// A clear slowdown of every answer fails pooled, with the estimate and its
// interval around the true ratio; an identical head does not fail.
func TestPooledTailShift(t *testing.T) {
	tests := []struct {
		name   string
		factor float64
		fail   bool
	}{
		{name: "30 % slower", factor: 1.3, fail: true},
		{name: "the same", factor: 1, fail: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var base, head []*Histogram
			for i := range 8 {
				drift := 1 + 0.03*math.Sin(float64(i))
				b := spreadOf(300, 1*drift, 4*drift)
				h := make([]float64, len(b))
				for j := range b {
					h[j] = b[j] * tt.factor * (1 + 0.005*math.Cos(float64(i+j)))
				}
				base, head = append(base, hist(b...)), append(head, hist(h...))
			}
			got := PooledTail(DefaultTailRule, 99, 0.05, base, head)
			if got.Fail != tt.fail || len(got.Warnings) > 0 || !got.Exact || got.Patterns != 256 {
				t.Fatalf("%+v: want fail %v over 256 exact patterns", got, tt.fail)
			}
			if !(got.CI.Lo <= tt.factor*1.01 && got.CI.Hi >= tt.factor*0.99) || math.Abs(got.CI.Estimate-tt.factor) > 0.02 {
				t.Errorf("interval %+v does not hold the true ratio %v", got.CI, tt.factor)
			}
			if got.BaseCount != 2400 || got.Beyond != 24 {
				t.Errorf("pooled %d answers, %d beyond p99; want 2400 and 24", got.BaseCount, got.Beyond)
			}
		})
	}
}

// A metric whose phases hold some histograms but not all is judged phase
// by phase, and the note names the phases; with none at all, the report
// is from before version 2 and one note says so for every tail.
func TestApplyTailNotes(t *testing.T) {
	in := tailGate(newTestRand(), tailService{CPUms: 1, ExpMS: 0.4, Answers: 180, Pairs: 8}, false)
	in.Head[2].Groups[0].Latency = nil
	v := Judge(in)
	want := "p95.g, p99.g judged phase by phase, not pooled over the pairs: pair 3's head held no latency histogram of g"
	if !containsNote(v.Notes, want) || metricByID(v, "p99.g").Tail != nil {
		t.Errorf("notes %q, want %q", v.Notes, want)
	}
	v = Judge(perPhase(in))
	if want := "p95.g, p99.g judged phase by phase, not pooled over the pairs: " + NoHistograms; !containsNote(v.Notes, want) {
		t.Errorf("notes %q, want %q", v.Notes, want)
	}
	in = tailGate(newTestRand(), tailService{CPUms: 1, ExpMS: 0.4, Answers: 180, Pairs: 8}, false)
	in.Rule = RuleMedians
	v = Judge(in)
	if metricByID(v, "p99.g").Tail != nil || strings.Contains(strings.Join(v.Notes, "\n"), "pooled") {
		t.Errorf("the medians rule pooled its tails or said so: %q", v.Notes)
	}
}

func containsNote(notes []string, want string) bool {
	for _, n := range notes {
		if n == want {
			return true
		}
	}
	return false
}

func TestHistogramJSON(t *testing.T) {
	h := load.NewHistogram()
	for i := range 500 {
		h.RecordValue(int64(1000 + i*3))
	}
	g := GroupFigures{Name: "g", Latency: NewHistogram(h)}
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	var back GroupFigures
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Latency.Count() != 500 || back.Latency.Percentile(99) != g.Latency.Percentile(99) || back.Server != nil {
		t.Errorf("read back %d answers, p99 %v (want 500, %v), server %v", back.Latency.Count(), back.Latency.Percentile(99), g.Latency.Percentile(99), back.Server)
	}
	if NewHistogram(nil) != nil || NewHistogram(hdrhistogram.New(1, 10, 3)) != nil {
		t.Errorf("an empty histogram is kept")
	}
	for _, bad := range []string{`{"latency_histogram": 7}`, `{"latency_histogram": "bm90IGEgaGlzdG9ncmFt"}`, `{"latency_histogram": "%%%"}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil || !strings.Contains(err.Error(), "reading a latency histogram") {
			t.Errorf("%s: err %v, want one saying it is reading a latency histogram", bad, err)
		}
	}
}

func newTestRand() *rand.Rand { return rand.New(rand.NewPCG(7, 8)) }

// A p99 over 8 pairs of 10 answers is, pooled, still the slowest of 80:
// it stays the per-phase slowest answer, noted and never failed on.
func TestApplyTailTooFewAnswers(t *testing.T) {
	in := tailGate(newTestRand(), tailService{CPUms: 1, ExpMS: 0.4, Slow: 1, SlowMS: 5, Answers: 10, Pairs: 8}, true)
	v := Judge(in)
	r := metricByID(v, "p99.g")
	want := "p99.g judged phase by phase, not pooled over the pairs: an arm's pairs together held 80 answers, so its p99 is its slowest answer"
	if r.Tail != nil || r.Fail || !r.Slowest || !containsNote(v.Notes, want) {
		t.Errorf("p99 tail %+v fail %v slowest %v, notes %q; want per-phase, slowest, not failed, and %q", r.Tail, r.Fail, r.Slowest, v.Notes, want)
	}
}

// The pattern loop's grid search and the plain merge agree on every rank
// of random phases.
func TestTailGridAgreesWithTheMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 50 {
		var phases [][]bin
		var total uint64
		for range 1 + rng.IntN(6) {
			h := load.NewHistogram()
			for range rng.IntN(40) {
				h.RecordValue(int64(1000 + rng.ExpFloat64()*500))
			}
			b := NewHistogram(h).bins()
			phases = append(phases, b)
			total += NewHistogram(h).Count()
		}
		g := newTailGrid(phases)
		for k := uint64(0); k <= total+1; k++ {
			if a, b := kthLargest(phases, k), g.kthLargest(g.cum, k); a != b {
				t.Fatalf("rank %d of %d: merge %v, grid %v", k, total, a, b)
			}
		}
	}
}

// Mapped keeps every answer's rank: the identity keeps each percentile, a
// factor moves each by that factor (within a bucket's 0.1 %), and a map
// that slows only the answers from the 98th percentile up moves p99 and
// leaves p95 and p50 where they were.
func TestHistogramMapped(t *testing.T) {
	h := hist(spreadOf(1000, 1, 50)...)
	if (*Histogram)(nil).Mapped(func(ms float64) float64 { return ms }) != nil {
		t.Fatal("Mapped of nil is not nil")
	}
	same := h.Mapped(func(ms float64) float64 { return ms })
	scaled := h.Mapped(func(ms float64) float64 { return ms * 1.1 })
	q98 := h.Percentile(98)
	tail := h.Mapped(func(ms float64) float64 {
		if ms >= q98 {
			return ms * 1.1
		}
		return ms
	})
	for _, p := range []float64{50, 95, 99} {
		if got, want := same.Percentile(p), h.Percentile(p); got != want {
			t.Errorf("identity: p%g = %g, want %g", p, got, want)
		}
		if got, want := scaled.Percentile(p), h.Percentile(p)*1.1; math.Abs(got/want-1) > 0.002 {
			t.Errorf("x1.1: p%g = %g, want %g", p, got, want)
		}
		want := h.Percentile(p)
		if p == 99 {
			want *= 1.1
		}
		if got := tail.Percentile(p); math.Abs(got/want-1) > 0.002 {
			t.Errorf("tail from p98 x1.1: p%g = %g, want %g", p, got, want)
		}
	}
	if same.Count() != h.Count() || tail.Count() != h.Count() {
		t.Errorf("counts %d, %d, want %d", same.Count(), tail.Count(), h.Count())
	}
}
