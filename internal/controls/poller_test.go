package controls_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/armdb/armdbtest"
	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/pairs"
	"github.com/perfgate/perfgate/internal/pgdsn"
	"github.com/perfgate/perfgate/internal/pgdsn/pgdsntest"
	"github.com/perfgate/perfgate/internal/plan"
)

// The idle control's poller must be counted by the store's commit counter
// all the while it runs, not only in its session's first second: on a
// loaded runner the idle window may open a second or more after the poller
// starts, and a poller of SELECT 1 then read as 0 commits a second, the
// control passed and the gate could not be judged (run 208 in
// docs/testing.md). The window here opens 2.5 s in and lasts 4 s, and the
// window's commits must show in the count while the poller still runs,
// within the wait the gate itself allows its counts (armdb.FlushWait).
// The wait is not asserted finer than that: a busy backend publishes
// about once a second, but defers when the statistics are contended, and
// in the CPU-bound middle of a full run only 272 of a window's 1,309
// polls showed at its end (run 243).
func TestPollerIsCountedWhileItRuns(t *testing.T) {
	const db = "perf_poller"
	srv := armdbtest.Start(t, db)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	counter, err := srv.Counter(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer counter.Close()
	cfg, err := pgdsn.Parse(srv.DSN(db), "the poller's test")
	if err != nil {
		t.Fatal(err)
	}
	p, err := controls.StartPoller(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			p.Stop()
		}
	}()
	read := func() (int64, int64) {
		t.Helper()
		m, err := counter.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m[db], p.Polls()
	}
	time.Sleep(2500 * time.Millisecond)
	c1, p1 := read()
	time.Sleep(4 * time.Second)
	c2, p2 := read()
	made := p2 - p1
	if made < 100 {
		t.Fatalf("the poller made %d polls in 4 s; it never waits, so at least hundreds were due", made)
	}
	// c1 counts at most the commits made by then, so once the count has
	// caught up with the window's end it has grown by all of the window's.
	counted, waited := c2-c1, time.Duration(0)
	for at := time.Now(); counted < made*9/10; {
		if waited = time.Since(at); waited > armdb.FlushWait {
			t.Fatalf("the store counted %d of the %d commits the poller made in a 4 s window, %s after it while the poller still ran: its commits are not published while it runs", counted, made, waited.Round(time.Millisecond))
		}
		time.Sleep(100 * time.Millisecond)
		c, _ := read()
		counted = c - c1
	}
	total, err := p.Stop()
	stopped = true
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("in the window: %d polls made, %d commits counted at its end, %d of them %s later (%d polls in all)", made, c2-c1, counted, waited.Round(time.Millisecond), total)
}

// A store DSN that does not parse is refused without quoting it: the
// poller's refusal used to wrap pgx's, which quotes a password holding an
// '@' from there on. The idle control parses the DSN for the poller, so
// the refusal is its.
func TestIdleControlRefusesABadDSNWithoutQuotingIt(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-pw"
	ctl := plan.Control{Kind: plan.ControlIdle, PlanFile: "perf/busy-loop.toml", Plan: &plan.Plan{}}
	head := pairs.Arm{Role: pairs.RoleHead, Commits: func(context.Context) (int64, error) { return 0, nil }}
	for _, dsn := range pgdsntest.Unparsable(secret) {
		_, err := controls.IdleControl(context.Background(), ctl, nil, head, dsn, io.Discard)
		pgdsntest.CheckRefusal(t, "IdleControl", err, secret)
	}
}
