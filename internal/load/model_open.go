package load

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// OpenLoop is the staged open-loop model: arrivals on a schedule fixed
// before the run, whatever the answers do, with a result per stage. A stage
// holds its From rate through its warm-up, then moves linearly to To over
// its Duration (From == To is a plateau; a list of plateaus is a stepped
// ramp for the knee; ramp, plateau, spike and recovery are four stages).
type OpenLoop struct {
	Stages []OpenStage
	Shard  Shard
}

// OpenStage is one stage of an OpenLoop.
type OpenStage struct {
	Name             string
	From, To         float64 // arrivals/s at the measured window's start and end
	Warmup, Duration time.Duration
}

func (m *OpenLoop) spans() ([]span, error) {
	var out []span
	var at time.Duration
	for i, st := range m.Stages {
		if st.Duration <= 0 || st.Warmup < 0 {
			return nil, fmt.Errorf("open-loop stage %d: duration %s and warm-up %s; the duration must be longer than zero", i+1, st.Duration, st.Warmup)
		}
		if st.From < 0 || st.To < 0 {
			return nil, fmt.Errorf("open-loop stage %d: rates %g to %g; rates are arrivals per second, zero or more", i+1, st.From, st.To)
		}
		name := st.Name
		if name == "" {
			name = fmt.Sprintf("%g/s", st.To)
		}
		out = append(out, span{name: name, level: st.To, offered: (st.From + st.To) / 2, begin: at, warm: st.Warmup, length: st.Duration})
		at += st.Warmup + st.Duration
	}
	return out, nil
}

func (m *OpenLoop) drive(ctx context.Context, a *Attack, split *splitter) (*Result, error) {
	if len(m.Stages) == 0 {
		return nil, errors.New("the open-loop model has no stages")
	}
	var rs []RateStage
	for _, st := range m.Stages {
		rs = append(rs, RateStage{Target: st.From, Duration: 0}, RateStage{Target: st.From, Duration: st.Warmup},
			RateStage{Target: st.To, Duration: st.Duration})
	}
	if err := m.Shard.check(); err != nil {
		return nil, err
	}
	b := *a
	b.Pacer = shardPacer(NewStagedPacer(m.Stages[0].From, rs), m.Shard)
	if b.Start.IsZero() {
		b.Start = time.Now()
	}
	// The engines see one window without a warm-up; each stage's warm-up
	// must still draw from data the measured windows never use.
	b.drawStage = func(due time.Duration) Stage {
		if _, measured := split.stageOf(due); measured {
			return Measured
		}
		return Warmup
	}
	r, err := Run(ctx, b) // observe is set, so Run takes the engines' path
	if err != nil {
		return nil, err
	}
	r.Detail = &ModelResult{Model: "open"}
	return r, nil
}

// shardPacer paces shard sh of full's arrivals: arrival n of the shard is
// arrival Index + n*Of of the whole schedule, so the shards together send
// the whole schedule, each arrival once, at its own time. Pace(0, k) is
// arrival k's offset from the origin.
func shardPacer(full Pacer, sh Shard) Pacer {
	if sh.Of <= 1 {
		return full
	}
	return PacerFunc(func(elapsed time.Duration, hits uint64) (time.Duration, bool) {
		due, stop := full.Pace(0, uint64(sh.Index)+hits*uint64(sh.Of))
		return due - elapsed, stop
	})
}
