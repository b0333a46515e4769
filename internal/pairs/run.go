// Package pairs drives the A/B gate over two started arms: the idle phase,
// then the pairs, each driving both arms at once from one open-loop
// schedule, and turns what was measured into the judge's input.
package pairs

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/perfgate/perfgate/internal/arms"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

// Arm is one arm of the run, tagged with its role: its started process,
// where its load goes and how its store's committed transactions are read
// (nil: it has no store). Name, when empty, is the role's.
type Arm struct {
	Role    Role
	Name    string
	Proc    *arms.Process
	URL     string
	CAFile  string
	Commits func(ctx context.Context) (int64, error)
}

// Label is the name the arm's figures and store readings are keyed by:
// its Name, or its role's when it has none.
func (a Arm) Label() string {
	if a.Name != "" {
		return a.Name
	}
	return string(a.Role)
}

// Config is one gate run.
type Config struct {
	Plan *plan.Plan
	Vars *plan.Vars
	// Arms are the run's arms, each tagged with its role: the pairs drive
	// the one base against the one head; other roles are not driven.
	Arms []Arm
	// Seed orders the requests; pair i draws its own slice of each data
	// source (PairSource), the same for both arms of the pair.
	Seed int64
	// StoreFlush is how long to wait before reading commit counters after a
	// window closes: PostgreSQL publishes a backend's counts about once a
	// second. 0 means 1.5 s.
	StoreFlush time.Duration
	// Counters, when set, reads both arms' committed transactions in one
	// query, keyed by arm name, so both are read at the same instant; nil:
	// each arm's Commits in turn (idle.go).
	Counters func(ctx context.Context) (map[string]int64, error)
	// Settle is how long the gate's idle phase waits, before its window
	// opens, for the store's counters to settle (0: armdb.FlushWait).
	Settle time.Duration
	// Progress gets a line per second while a phase runs; nil for none.
	Progress io.Writer
	// Log gets one line as each phase starts and ends; nil for none.
	Log io.Writer
	// Budget bounds an adaptive gate's wall time from its start, its idle
	// phase after the pairs included: a look adds pairs only while they
	// and the idle phase still fit. 0 means DefaultBudget. A fixed gate
	// is not bounded by it.
	Budget time.Duration

	// base and head are Arms' base and head, picked by pick.
	base, head Arm
}

// Result is what the run measured, ready for the judge.
type Result struct {
	Input judge.Input
	Leads []string // the leading arm of each pair
}

// pick finds the base and the head among the arms; withBase false lets
// the idle control's run go without a base.
func (c *Config) pick(withBase bool) error {
	for i := range c.Arms {
		c.Arms[i].Name = c.Arms[i].Label()
	}
	head, err := ArmOf(c.Arms, RoleHead)
	if err != nil {
		return err
	}
	c.head = head
	base, err := ArmOf(c.Arms, RoleBase)
	switch {
	case err == nil:
		c.base = base
	case withBase:
		return err
	}
	return nil
}

func (c *Config) logf(format string, a ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", a...)
	}
}

func (c *Config) storeFlush() time.Duration {
	if c.StoreFlush > 0 {
		return c.StoreFlush
	}
	return 1500 * time.Millisecond
}

// Run runs the idle phase and the pairs: a fixed gate's idle phase first,
// an adaptive gate's after its pairs and only when they do not already
// fail it (idleLast). A phase a canceled ctx cut short
// is not judged: Run returns the context's error wrapped as exit 2.
func Run(ctx context.Context, c Config) (*Result, error) {
	if err := c.pick(true); err != nil {
		return nil, err
	}
	if c.Plan == nil || c.base.Proc == nil || c.head.Proc == nil {
		return nil, fmt.Errorf("run: a plan and two started arms, a base and a head, are needed")
	}
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// An arm that dies mid-run makes every later figure meaningless:
	// stop at once and say why, with its log.
	died := make(chan error, 1)
	go c.watch(ctx, cancel, died)

	// The plan's warnings (a rule's former name) go with the verdict's notes,
	// which every summary shows.
	res := &Result{Input: judge.Input{Tolerance: c.Plan.Tolerance, Rule: c.Plan.Rule, Notes: slices.Clone(c.Plan.Warnings)}}
	seq, adaptive := sequential(c.Plan.AB)
	// An adaptive gate's idle phase comes after its pairs (idleLast), so
	// that a regression its pairs settled is decided without it; a fixed
	// gate keeps it first.
	if c.Plan.AB.Idle > 0 && !adaptive {
		idle, err := c.idle(ctx)
		if err != nil {
			return nil, firstErr(died, err)
		}
		res.Input.Idle = idle
	}
	if c.Plan.AB.Answers != "" {
		ans, err := compareAnswers(ctx, c.Plan, c.Vars, c.Seed, c.base, c.head) // sameanswers.go
		if err != nil {
			return nil, firstErr(died, err)
		}
		res.Input.Answers = ans
		c.logf("answers: %d sampled requests sent to both arms, %d answered differently", ans.Compared, len(ans.Differences))
	}
	pairsStart := time.Now()
	var heads []*load.Result
	for i := 0; i < c.Plan.AB.Pairs; i++ {
		base, head, out, err := c.pair(ctx, i)
		if err != nil {
			return nil, firstErr(died, err)
		}
		heads = append(heads, out.head)
		res.Input.Notes = append(res.Input.Notes, out.notes...)
		res.Input.Base = append(res.Input.Base, base)
		res.Input.Head = append(res.Input.Head, head)
		res.Leads = append(res.Leads, base.Lead)
		n := i + 1
		if !adaptive || seq.LookAt(n) == 0 {
			continue
		}
		in := res.Input
		c.complete(&in, heads)
		if s := c.look(in, seq, n, time.Since(start)+c.idleAhead(), time.Since(pairsStart)/time.Duration(n)); s.done {
			res.Input.Alpha = s.alpha
			res.Input.Notes = append(res.Input.Notes, s.note)
			c.logf("%s", s.note)
			break
		}
	}
	c.complete(&res.Input, heads)
	if c.Plan.AB.Idle > 0 && adaptive {
		if err := c.idleLast(ctx, res); err != nil {
			return nil, firstErr(died, err)
		}
	}
	return res, nil
}

// idleLast runs an adaptive gate's idle phase after its pairs, unless the
// pairs already fail the gate: the idle limits can only add failures, so
// nothing the idle phase reads could turn that verdict into a pass, and
// the runner's minute is saved (the default 60 s idle phase alone took
// longer than the 4 pairs that settle a head twice as slow: 109 s of a
// 2x regression's adaptive gate before, 49 s now). Its settle wait lets the
// pairs' last commits reach the store's counters first, so they do not
// count as idle work; work the head defers past its load (a write-behind
// flush) does count, as it would in production.
func (c *Config) idleLast(ctx context.Context, res *Result) error {
	if v := judge.Judge(res.Input); v.Code == judge.Regression {
		why := "the pairs already fail the gate"
		if len(v.Failures) > 0 {
			why += " (" + v.Failures[0]
			if more := len(v.Failures) - 1; more > 0 {
				why += fmt.Sprintf("; %d more", more)
			}
			why += ")"
		}
		note := "idle phase not run: " + why + ", which no idle reading can undo"
		res.Input.Notes = append(res.Input.Notes, note)
		c.logf("%s", note)
		return nil
	}
	idle, err := c.idle(ctx)
	if err != nil {
		return err
	}
	res.Input.Idle = idle
	return nil
}

// idleAhead is the wall time an adaptive gate's idle phase still needs
// after its pairs: its window, the store's settle wait before it and the
// flush after it.
func (c *Config) idleAhead() time.Duration {
	if c.Plan.AB.Idle <= 0 {
		return 0
	}
	d := c.Plan.AB.Idle
	if c.withStore() {
		d += c.settle() + c.storeFlush()
	}
	return d
}

// complete fills in's metrics and thresholds from its pairs: a metric is
// judged when every phase of both arms has it; the thresholds are
// measured on heads, the head's results of those pairs.
func (c *Config) complete(in *judge.Input, heads []*load.Result) {
	seen := map[string]int{}
	for _, phases := range [][]judge.Phase{in.Base, in.Head} {
		for _, ph := range phases {
			for id := range ph.Values {
				seen[id]++
			}
		}
	}
	everywhere := map[string]bool{}
	for id, n := range seen {
		everywhere[id] = n == len(in.Base)+len(in.Head)
	}
	in.Metrics = metricList(c.Plan, everywhere)
	names := make([]string, len(c.Plan.Groups))
	for i, g := range c.Plan.Groups {
		names[i] = g.Name
	}
	in.Thresholds = judge.MeasureThresholds(plan.Limits(c.Plan.Thresholds), pooled(heads), names)
}

// watch cancels the run when the base or the head exits; it returns when ctx ends.
func (c *Config) watch(ctx context.Context, cancel context.CancelFunc, died chan<- error) {
	var a Arm
	select {
	case <-ctx.Done():
		return
	case <-c.base.Proc.Done():
		a = c.base
	case <-c.head.Proc.Done():
		a = c.head
	}
	died <- exit.Refusef("the %s arm exited during the run (%v); the pair is not judged. Its log ends:\n%s",
		a.Name, a.Proc.Err(), a.Proc.LogTail(20))
	cancel()
}

// firstErr prefers an arm's death over the cancellation it caused.
func firstErr(died <-chan error, err error) error {
	select {
	case d := <-died:
		return d
	default:
		return err
	}
}
