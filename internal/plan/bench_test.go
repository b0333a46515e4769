package plan

import (
	"testing"

	"github.com/perfgate/perfgate/internal/load"
)

// BenchmarkNext measures what the attack's scheduling goroutine pays per
// arrival: a static group, and one drawing an id into path, header and body.
func BenchmarkNext(b *testing.B) {
	for _, bc := range []struct{ name, plan string }{
		{"static", hello},
		{"drawn", itemPlan(`exhausted = "reshuffle"`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			planDir(b, 10000)
			p, err := Parse("plan.toml", []byte(bc.plan))
			if err != nil {
				b.Fatal(err)
			}
			s, err := p.NewRequestSource(nil, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				s.Next(load.Measured)
			}
		})
	}
}
