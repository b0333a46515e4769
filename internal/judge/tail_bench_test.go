package judge

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/perfgate/perfgate/internal/load"
)

// go test -bench PooledTail ./internal/judge: the pooled rule's cost for
// one metric at the default 8 pairs and at 12 (every pattern enumerated)
// and 16 pairs (4,096 drawn), 3,000 answers a phase (200/s x 15 s).
func BenchmarkPooledTail(b *testing.B) {
	for _, n := range []int{8, 12, 16} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		var base, head []*Histogram
		for range n {
			for _, arm := range []*[]*Histogram{&base, &head} {
				h := load.NewHistogram()
				for range 3000 {
					h.RecordValue(int64(1000 + rng.ExpFloat64()*400))
				}
				*arm = append(*arm, NewHistogram(h))
			}
		}
		for _, p := range []float64{95, 99} {
			b.Run(strconv.Itoa(n)+" pairs p"+strconv.FormatFloat(p, 'f', -1, 64), func(b *testing.B) {
				for range b.N {
					PooledTail(DefaultTailRule, p, 0.05, base, head)
				}
			})
		}
	}
}
