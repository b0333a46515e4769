package pairs

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
)

// lookInput is n pairs of group hello's p50, the head's ratio to the
// base alternating ratio*(1+scatter) and ratio*(1-scatter), with steady
// schedules and halves, as the judge reads a real gate's phases.
func lookInput(p *plan.Plan, n int, ratio, scatter float64) judge.Input {
	in := judge.Input{}
	sched := judge.Schedule{Offered: 20, Achieved: 20, Intended: 1200, Sent: 1200, Answered: 1200, LatenessP99: 0.2}
	for i := 0; i < n; i++ {
		lead := [2]string{"base", "head"}[i%2]
		s := []float64{1 + scatter, 1 - scatter}[i%2]
		for arm, v := range map[*[]judge.Phase]float64{&in.Base: 10, &in.Head: 10 * ratio * s} {
			g := judge.GroupFigures{Name: "hello", Requests: 600, P50: v, P99: 3 * v,
				Halves: [2]judge.Half{{P50: v, P90: 2 * v, Count: 300}, {P50: v, P90: 2 * v, Count: 300}}}
			*arm = append(*arm, judge.Phase{Pair: i + 1, Lead: lead, Values: map[string]float64{"p50.hello": v},
				Groups: []judge.GroupFigures{g}, Schedule: sched})
		}
	}
	c := Config{Plan: p}
	c.complete(&in, nil)
	return in
}

func TestLook(t *testing.T) {
	p := &plan.Plan{Groups: []plan.Group{{Name: "hello"}}, AB: plan.AB{Auto: true, MinPairs: 4, MaxPairs: 16, Pairs: 16}}
	seq, ok := sequential(p.AB)
	if !ok {
		t.Fatal("pairs = \"auto\" gave no sequential design")
	}
	pair := 15 * time.Second
	for _, tc := range []struct {
		name           string
		n              int
		ratio, scatter float64
		elapsed        time.Duration
		done           bool
		alpha          float64
		note           string
	}{
		{"a clear 2x at the first look", 4, 2, 0.05, time.Minute, true, seq.AlphaAt(1), "adaptive pairs: 4 pairs ran (min_pairs 4, max_pairs 16); regression settled at look 1: p50.hello is worse"},
		{"a tight A/A at the first look", 4, 1, 0.002, time.Minute, true, seq.AlphaAt(1), "pass settled at look 1: every metric is within its tolerance"},
		{"a scattered A/A goes on", 4, 1, 0.08, time.Minute, false, 0, ""},
		{"between looks", 5, 2, 0.05, time.Minute, false, 0, ""},
		{"the budget leaves no room for the next look", 6, 1, 0.08, 5*time.Minute + 40*time.Second, true, seq.AlphaLeft(2),
			"not settled (p50.hello is not settled), and 2 more pairs (about 30s) would pass the gate's wall budget of 6m0s, so judged with the false-alarm chance left"},
		{"max_pairs reached", 16, 1, 0.08, 4 * time.Minute, true, seq.AlphaAt(7), "16 pairs ran (min_pairs 4, max_pairs 16); not settled before max_pairs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{Plan: p}
			s := c.look(lookInput(p, tc.n, tc.ratio, tc.scatter), seq, tc.n, tc.elapsed, pair)
			if s.done != tc.done || s.alpha != tc.alpha || !strings.Contains(s.note, tc.note) {
				t.Fatalf("done %v alpha %v note %q; want %v, %v, one holding %q", s.done, s.alpha, s.note, tc.done, tc.alpha, tc.note)
			}
		})
	}
	if _, ok := sequential(plan.AB{Pairs: 8}); ok {
		t.Error("pairs = 8 gave a sequential design")
	}
	if _, ok := sequential(plan.AB{Pairs: 6, Auto: true, MinPairs: 4, MaxPairs: 16}); ok {
		t.Error("--pairs 6 over pairs = \"auto\" gave a sequential design, want 6 fixed pairs")
	}
}

// An adaptive gate's idle phase follows its pairs, so a look reserves its
// time: the window, and with a store the settle wait before it and the
// flush after it. A regression the pairs already show skips the phase,
// with a note, and never touches the arms (this Config has none).
func TestIdleLast(t *testing.T) {
	p := &plan.Plan{Groups: []plan.Group{{Name: "hello"}}, AB: plan.AB{Auto: true, MinPairs: 4, MaxPairs: 16, Pairs: 16, Idle: time.Minute}}
	c := &Config{Plan: p}
	if got := c.idleAhead(); got != time.Minute {
		t.Errorf("idle ahead without a store: %s, want the 1m0s window", got)
	}
	c.Counters = func(context.Context) (map[string]int64, error) { return nil, nil }
	if got, want := c.idleAhead(), time.Minute+armdb.FlushWait+1500*time.Millisecond; got != want {
		t.Errorf("idle ahead with a store: %s, want %s (window, settle, flush)", got, want)
	}

	seq, _ := sequential(p.AB)
	// 4m40s of pairs and a scattered A/A: without the idle phase the next
	// look's 2 pairs (30 s) would fit in 6 minutes; with its 72.5 s they do not.
	in := lookInput(p, 6, 1, 0.08)
	if s := c.look(in, seq, 6, 4*time.Minute+40*time.Second, 15*time.Second); s.done {
		t.Fatalf("without the idle phase reserved the gate stopped: %s", s.note)
	}
	if s := c.look(in, seq, 6, 4*time.Minute+40*time.Second+c.idleAhead(), 15*time.Second); !s.done || !strings.Contains(s.note, "would pass the gate's wall budget") {
		t.Errorf("with the idle phase reserved: done %v, note %q; want a stop on the budget", s.done, s.note)
	}

	res := &Result{Input: lookInput(p, 4, 2, 0.05)}
	if err := c.idleLast(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(res.Input.Notes, "\n")
	if res.Input.Idle != nil || !strings.Contains(notes, "idle phase not run: the pairs already fail the gate (") || !strings.Contains(notes, "which no idle reading can undo") {
		t.Errorf("a failing gate's idle phase: %+v, notes %q; want it skipped with a note naming the failure", res.Input.Idle, notes)
	}
}
