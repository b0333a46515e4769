package cli

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/plan"
)

// listFlag collects a repeatable flag (--var a=1 --var b=2).
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// profileFlags lets the command line reshape the A/B run of a plan
// (a short run on a laptop, the seed's full run in CI).
type profileFlags struct {
	pairs                 int
	rate                  float64
	warmup, measure, idle time.Duration
}

func (p *profileFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&p.pairs, "pairs", 0, "pairs of load phases (default: the plan's, 4)")
	fs.Float64Var(&p.rate, "rate", 0, "arrivals/s to each arm (default: the plan's, 20)")
	fs.DurationVar(&p.warmup, "warmup", -1, "warm-up of each phase (default: the plan's, 10s)")
	fs.DurationVar(&p.measure, "measure", 0, "measured window of each phase (default: the plan's, 60s)")
	fs.DurationVar(&p.idle, "idle", -1, "idle phase; 0 skips it (default: the plan's, 60s)")
}

func (p *profileFlags) apply(ab *plan.AB) error {
	if p.pairs < 0 || p.rate < 0 || p.measure < 0 {
		return fmt.Errorf("--pairs, --rate and --measure must be positive")
	}
	if p.pairs > 0 {
		ab.Pairs = p.pairs
	}
	if p.rate > 0 {
		ab.Rate = p.rate
	}
	if p.warmup >= 0 {
		ab.Warmup = p.warmup
	}
	if p.measure > 0 {
		ab.Measure = p.measure
	}
	if p.idle >= 0 {
		ab.Idle = p.idle
	}
	return nil
}
