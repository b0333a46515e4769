package pairs

import (
	"fmt"
	"time"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
)

// DefaultBudget is the wall time an adaptive gate (`pairs = "auto"`) may
// take from the start of its idle phase: issue 22's "no gate past 6
// minutes". It is a bound on adding pairs, not a timeout: the pairs up to
// min_pairs always run, and a pair under way is never cut.
const DefaultBudget = 6 * time.Minute

// budget is the run's wall budget for adding pairs.
func (c *Config) budget() time.Duration {
	if c.Budget > 0 {
		return c.Budget
	}
	return DefaultBudget
}

// stop is what a look says to the loop over pairs: whether to run no more
// pairs, the false-alarm chance the verdict is judged with
// (judge.Input.Alpha) and the note the report carries.
type stop struct {
	done  bool
	alpha float64
	note  string
}

// look is the adaptive gate's look after n pairs: in holds those pairs
// complete (metrics and thresholds), elapsed is the wall time since the
// gate began and perPair what one pair has taken on average. Between
// looks, and with pairs = N, it says nothing.
func (c *Config) look(in judge.Input, seq judge.Sequential, n int, elapsed, perPair time.Duration) stop {
	k := seq.LookAt(n)
	if k == 0 {
		return stop{}
	}
	in.Alpha = seq.AlphaAt(k)
	d, why := seq.Decide(judge.Judge(in), k)
	ran := fmt.Sprintf("adaptive pairs: %d pairs ran (min_pairs %d, max_pairs %d)", n, seq.MinPairs, seq.MaxPairs)
	if d != judge.Continue {
		return stop{true, in.Alpha, fmt.Sprintf("%s; %s at look %d: %s", ran, d, k, why)}
	}
	if n >= seq.MaxPairs {
		return stop{true, in.Alpha, fmt.Sprintf("%s; not settled before max_pairs (%s), so judged at the last look's false-alarm chance (%.2g %%)", ran, why, 100*in.Alpha)}
	}
	next := seq.Looks()[k] // the next look's pair count
	if need := time.Duration(next-n) * perPair; elapsed+need > c.budget() {
		alpha := seq.AlphaLeft(k)
		return stop{true, alpha, fmt.Sprintf("%s; not settled (%s), and %d more pairs (about %s) would pass the gate's wall budget of %s, so judged with the false-alarm chance left (%.2g %%)",
			ran, why, next-n, need.Round(time.Second), c.budget(), 100*alpha)}
	}
	return stop{}
}

// sequential is the plan's adaptive design; ok is false for pairs = N.
// The plan sets an adaptive gate's Pairs to its max_pairs; a count that
// differs was set after the plan was read (`--pairs`, or the stricter of
// the base's and the head's plans, internal/plan judging.go), and is run
// as a fixed count: looks spent for a longer gate would leave the last
// pair unaccounted.
func sequential(ab plan.AB) (judge.Sequential, bool) {
	if !ab.Auto || ab.Pairs != ab.MaxPairs {
		return judge.Sequential{}, false
	}
	return judge.DefaultSequential(ab.MinPairs, ab.MaxPairs), true
}
