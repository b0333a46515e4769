package load_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

// stallingSource stalls the generator on its second draw until release:
// the generator, not the target, falls behind.
type stallingSource struct {
	fixedSource
	release <-chan struct{}
}

func (s *stallingSource) Next(stage load.Stage) load.Request {
	if s.Drawn[load.Warmup]+s.Drawn[load.Measured] == 1 {
		<-s.release
	}
	return s.fixedSource.Next(stage)
}

// TestStalledThenCanceledCountsEveryArrivalDue: a 5/s, 2 s run whose
// generator stalls from its second arrival on and is canceled after the
// window: all 10 arrivals were due, and those never sent are dropped (the
// issue's run reported "offered 0.4/s; 2 arrivals, 0 dropped").
func TestStalledThenCanceledCountsEveryArrivalDue(t *testing.T) {
	t.Parallel()
	atOnce(t, func(t *testing.T) {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {})
		release := make(chan struct{})
		src := &stallingSource{fixedSource: fixedSource{Reqs: []load.Request{{Method: "GET", Path: "/"}}}, release: release}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(2300*time.Millisecond, cancel)
		time.AfterFunc(2600*time.Millisecond, func() { close(release) })
		r, err := load.Run(ctx, load.Attack{Target: srv.URL, Source: src, Groups: []load.Group{{Name: "g"}},
			Pacer: load.ConstantPacer{Freq: 5}, Duration: 2 * time.Second, Engine: engineOf(t)})
		if err != nil {
			t.Fatal(err)
		}
		s := r.Schedule
		t.Logf("canceled %v measured %v; offered %.1f/s, intended %d sent %d dropped %d", r.Canceled, r.Measured, s.Offered, s.Intended, s.Sent, s.Dropped)
		if !r.Canceled {
			t.Errorf("not marked canceled")
		}
		if s.Intended != 10 || s.Sent+s.Dropped != s.Intended || s.Dropped < 8 {
			t.Errorf("intended %d sent %d dropped %d: want all 10 arrivals due, the unsent ones dropped", s.Intended, s.Sent, s.Dropped)
		}
		if s.Offered < 4.9 || s.Offered > 5.1 {
			t.Errorf("offered %.2f/s, want the schedule's 5/s", s.Offered)
		}
	})
}
