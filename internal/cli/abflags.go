package cli

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/plan"
)

// listFlag collects a repeatable flag (--var a=1 --var b=2).
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// profileFlags lets the command line reshape the A/B run of a plan
// (a short run on a laptop, FerroFED's gate's full run in CI).
type profileFlags struct {
	pairs        int
	rate         float64
	measure      time.Duration
	warmup, idle optionalDuration
}

// optionalDuration is a duration flag that knows whether it was given, so
// 0 ("no idle phase") differs from "the plan's", and -h shows no made-up
// default such as -1ns.
type optionalDuration struct {
	d   time.Duration
	set bool
}

func (o *optionalDuration) String() string {
	if o == nil || !o.set {
		return ""
	}
	return o.d.String()
}

func (o *optionalDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration; write 10s or 0s", s)
	}
	if d < 0 {
		return fmt.Errorf("%s is negative; write 10s or 0s", s)
	}
	o.d, o.set = d, true
	return nil
}

// register adds the flags; their help names the defaults a plan's [ab]
// gets when it sets none, read from plan.Default, their one owner.
func (p *profileFlags) register(fs *flag.FlagSet) {
	d := plan.Default().AB
	fs.IntVar(&p.pairs, "pairs", 0, fmt.Sprintf("pairs of load phases (default: the plan's, %d unless it sets pairs)", d.Pairs))
	fs.Float64Var(&p.rate, "rate", 0, fmt.Sprintf("arrivals/s to each arm (default: the plan's, %g/s unless it sets rate)", d.Rate))
	fs.Var(&p.warmup, "warmup", fmt.Sprintf("warm-up of each phase; 0s for none (default: the plan's, %s unless it sets warmup)", secs(d.Warmup)))
	fs.DurationVar(&p.measure, "measure", 0, fmt.Sprintf("measured window of each phase (default: the plan's, %s unless it sets measure)", secs(d.Measure)))
	fs.Var(&p.idle, "idle", fmt.Sprintf("idle phase; 0s skips it (default: the plan's, %s unless it sets idle)", secs(d.Idle)))
}

func (p *profileFlags) apply(ab *plan.AB) error {
	switch {
	case p.pairs < 0:
		return fmt.Errorf("--pairs %d is negative; write --pairs 8, or leave it out for the default", p.pairs)
	case p.rate < 0 || math.IsNaN(p.rate) || math.IsInf(p.rate, 0):
		// The flag package reads NaN and Inf as numbers; NaN passed every
		// comparison and ran the plan's rate without a word.
		return fmt.Errorf("--rate %g is not an arrival rate; write --rate 30, or leave it out for the default", p.rate)
	case p.measure < 0:
		return fmt.Errorf("--measure %s is negative; write --measure 10s, or leave it out for the default", p.measure)
	}
	if p.pairs > 0 {
		// A count the operator gives runs fixed (docs/ab.md), also over
		// pairs = "auto" and when it equals that plan's max_pairs, which
		// would otherwise still read as adaptive.
		ab.Pairs, ab.Auto, ab.MinPairs, ab.MaxPairs = p.pairs, false, 0, 0
	}
	if p.rate > 0 {
		ab.Rate = p.rate
	}
	if p.warmup.set {
		ab.Warmup = p.warmup.d
	}
	if p.measure > 0 {
		ab.Measure = p.measure
	}
	if p.idle.set {
		ab.Idle = p.idle.d
	}
	return nil
}

// secs is a default duration as the plan writes it: 60s, not 1m0s.
func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', -1, 64) + "s" }
