// Package plan reads perfgate's plan (perf/plan.toml): the request groups,
// their placeholders, variables and data sources, the load and A/B settings,
// and the judge's tolerances and thresholds. Every invalid plan is refused
// with one message naming the file, the line and what to write instead.
package plan

import (
	"fmt"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
)

// Plan is a parsed, validated plan.
type Plan struct {
	Path   string
	Groups []Group // file order
	Load   Load    // single-target load settings (perfgate load)
	AB     AB      // A/B gate settings
	// abWritten records whether the plan has an [ab] table, so a refusal
	// of the gate's settings names the defaults rather than a table the
	// plan does not have.
	abWritten bool
	// Tolerance maps a metric class ("latency", "cpu", "throughput",
	// "memory", "transactions") or a metric id ("p99.<group>",
	// "p50.<group>", "p95.<group>", "throughput", "cpu_per_request",
	// "peak_memory", "tx_per_request") to the fraction the head may be
	// worse than the base; the plan writes percent. It holds only what the
	// plan writes, so the judge can tell a plan's choice from its own
	// default (DefaultTolerance).
	Tolerance  map[string]float64
	Thresholds []Threshold
	// Rule is the judge's rule for the metrics, from [judge]:
	// judge.RulePaired (the default) or judge.RuleMedians.
	Rule string
	// Warnings are what the plan writes that is read but should change
	// (a rule's former name), each naming its file and line; the run shows
	// them among the verdict's notes.
	Warnings []string
	// ServerTiming names the header carrying the server's own latency:
	// "Server-Timing" (its dur= values, in ms) or a header holding ms.
	ServerTiming string
	Vars         []Var
	Data         []*DataSource

	// Experiment is the [experiment] table (experiment.go).
	Experiment Experiment

	// Counters, StoreWrites and Controls are the after-run checks and the
	// controls (counter.go, control.go; run by internal/controls).
	Counters    []Counter
	StoreWrites []StoreWrites
	Controls    Controls

	dir string // folder relative file names are read from
	pos *positions
}

// Group is one request group. Path, header values and Body may hold {name}
// placeholders; Source fills them.
type Group struct {
	Name, Method, Path string
	Header             []load.Header
	Body               string // the inline body, or BodyFile's content
	BodyFile           string // as written in the plan, relative to the plan's folder
	Expect             []int
	Weight             float64         // share when Load.Order is "weight"; 1 unless written
	MaxRate            float64         // arrivals/s this group must stay below; 0 = no limit
	Line               int             // line of the group's [[group]] header
	DPoPKeyFile        string          // sends DPoP proofs signed by this key (dpop.go); relative to the plan's folder
	Answer             load.AnswerRule // expect_body, expect_json, expect_header (parse_answer.go); zero checks nothing
	dpopLine           int

	bodyPath string // BodyFile resolved, for messages about its lines
}

// Load is how perfgate load drives one target.
type Load struct {
	Rate     float64 // arrivals/s; with stages, the rate the first stage ramps from
	Warmup   time.Duration
	Duration time.Duration // with stages, their sum
	Stages   []Stage
	Order    string // "turn" (groups in turn) or "weight"
	// Hit names the hits whose ratio perfgate load reports, with the
	// keys [experiment] has (hit.go); the gate does not read it.
	Hit HitRule
}

// Stage ramps the rate linearly from the previous target (the first from
// Load.Rate) to Target over Duration, like k6's ramping-arrival-rate.
type Stage struct {
	Target   float64
	Duration time.Duration
}

// AB is the A/B gate's settings. Default holds the numbers chosen by
// measurement (docs/judge.md, "The default profile"); a plan can still
// write out FerroFED's gate's (4 pairs of 10 s + 60 s at 20/s).
type AB struct {
	// Pairs is the number of pairs; with Auto, the most that may run
	// (MaxPairs).
	Pairs int
	// Auto is `pairs = "auto"`: the gate runs from MinPairs to MaxPairs
	// pairs and stops once the verdict is settled (judge.Sequential).
	Auto               bool
	MinPairs, MaxPairs int
	Warmup             time.Duration
	Measure            time.Duration
	Rate               float64 // arrivals/s to each arm
	Idle               time.Duration
	IdleCPU            float64 // fraction of one core (the plan writes percent)
	IdleTxPerSec       float64
	// Answers is "" (the arms' answers are not compared), AnswersSame or
	// AnswersWarn; Ignore names the JSON fields they may differ in
	// (parse_sameanswers.go).
	Answers string
	Ignore  []string
}

// Threshold is an absolute limit the judge checks beside the A/B ratios.
type Threshold struct {
	Group  string        // "" = all groups together
	Metric string        // "p<N>" (p50, p90, p99.9), "success" or "under"
	Below  time.Duration // p<N>: the percentile must be strictly below; under: the latency counted
	Min    float64       // success, under: the fraction that must be reached (plan writes percent)
	Side   string        // "client" or "server" (needs server_timing); unwritten: "server" when the plan sets server_timing
	Line   int
}

// Var is a declared variable; its value comes from ResolveVars.
type Var struct {
	Name   string
	Value  string // written in the plan; never for a secret
	Has    bool   // Value was written
	File   string // read when no flag or environment variable gives a value
	Secret bool
	Line   int
}

// Default returns a plan with every default applied and no groups; its
// Tolerance is empty (the judge applies DefaultTolerance).
func Default() *Plan {
	return &Plan{
		Load: Load{Rate: 20, Warmup: 10 * time.Second, Duration: 60 * time.Second, Order: "turn"},
		AB: AB{
			Pairs: 8, Warmup: 2 * time.Second, Measure: 10 * time.Second, Rate: 30,
			Idle: 60 * time.Second, IdleCPU: judge.DefaultIdleCPU, IdleTxPerSec: judge.DefaultIdleTx,
		},
		Tolerance: map[string]float64{},
		Rule:      judge.RulePaired,
		pos:       &positions{},
	}
}

// ParseFile reads and parses the plan at path.
func ParseFile(path string) (*Plan, error) {
	data, err := readRegular(path, 16<<20)
	if err != nil {
		return nil, exit.Refusef("%s:1: cannot read the plan (%w); write the path of a plan file, such as --plan perf/plan.toml", path, err)
	}
	return Parse(path, data)
}

// Parse parses a plan's bytes. path names the file in messages, and
// relative data, body and variable files are read from its folder.
func Parse(path string, data []byte) (*Plan, error) {
	return parse(path, data)
}

// Group returns the groups as the load engine describes them.
func (p *Plan) loadGroups() []load.Group {
	out := make([]load.Group, len(p.Groups))
	for i, g := range p.Groups {
		out[i] = load.Group{Name: g.Name, Expect: append([]int(nil), g.Expect...)}
		if a := g.Answer; a.Body != "" || len(a.JSON) > 0 || len(a.Header) > 0 {
			out[i].Answer = &a
		}
	}
	return out
}

// Line returns the line a key path is written on (for example "load",
// "rate"), or its nearest written ancestor's: other stages use it to name
// plan lines in their own refusals.
func (p *Plan) Line(path ...string) int { return p.pos.line(path) }

// MeasuredDuration is the measured phase's length: Duration, or the sum of
// the stages when there are any.
func (l Load) MeasuredDuration() time.Duration {
	if len(l.Stages) == 0 {
		return l.Duration
	}
	var d time.Duration
	for _, s := range l.Stages {
		d += s.Duration
	}
	return d
}

// Arrivals is how many arrivals the warm-up and the measured phase offer.
func (l Load) Arrivals() (warmup, measured float64) {
	warmup = l.Rate * l.Warmup.Seconds()
	if len(l.Stages) == 0 {
		return warmup, l.Rate * l.Duration.Seconds()
	}
	from := l.Rate
	for _, s := range l.Stages {
		measured += (from + s.Target) / 2 * s.Duration.Seconds()
		from = s.Target
	}
	return warmup, measured
}

// PeakRate is the highest rate the settings reach.
func (l Load) PeakRate() float64 {
	peak := l.Rate
	for _, s := range l.Stages {
		peak = max(peak, s.Target)
	}
	return peak
}

func (g Group) String() string { return fmt.Sprintf("%s %s %s", g.Name, g.Method, g.Path) }
