package exampleservice

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/armdb/armdbtest"
	"github.com/perfgate/perfgate/internal/testslot"
)

// commitsOf runs a service with knobs over db, lets do act on it, stops it
// and returns the database's commits from before the start to after the
// stop. Stopping closes the service's connections, and a backend that exits
// publishes its counts, so the total is exact once it stops moving.
// commitsOf runs the service with knobs, does do, stops it and returns the
// commits its database gained and how long the service ran: from its start
// to its stop's return, the window a background poller commits in.
func commitsOf(t *testing.T, pg *armdb.Server, db string, do func(r *running), knobs ...string) (int64, time.Duration) {
	t.Helper()
	ctx := context.Background()
	before, err := pg.Commits(ctx, db)
	if err != nil {
		t.Fatalf("reading the commits of %s: %v", db, err)
	}
	dsnFile, err := pg.WriteDSN(db, t.TempDir())
	if err != nil {
		t.Fatalf("writing the DSN of %s: %v", db, err)
	}
	started := time.Now()
	r := run(t, append([]string{"--store-file", dsnFile}, knobs...)...)
	if a := r.do(t, "GET", "/healthz", ""); a.status != 200 {
		t.Fatalf("/healthz with a store: %d %s", a.status, a.body)
	}
	do(r)
	if err := r.stop(); err != nil {
		t.Fatalf("stopping the service: %v", err)
	}
	ran := time.Since(started)
	var last int64 = -1
	for deadline := time.Now().Add(armdb.FlushWait); ; {
		n, err := pg.Commits(ctx, db)
		if err != nil {
			t.Fatalf("reading the commits of %s: %v", db, err)
		}
		if n == last || time.Now().After(deadline) {
			return n - before, ran
		}
		last = n
		time.Sleep(300 * time.Millisecond)
	}
}

// TestMeasuredStoreKnobs holds a gate slot and runs in the measured
// phase: its pollers' commit rates are its subject, and in the middle
// phase, the cores 1 % idle, the store itself gave a poller that never
// waits 9 commits a second, fewer than the paced poller's 20 (run 88).
func TestMeasuredStoreKnobs(t *testing.T) {
	pg := armdbtest.Start(t, "writes_1", "writes_4", "idle_0", "idle_20", "idle_busy")
	defer testslot.Hold(t)()
	const posts = 10
	post := func(r *running) {
		for i := range posts {
			if a := r.do(t, "POST", "/items", fmt.Sprintf(`{"name":"w%d"}`, i)); a.status != 201 {
				t.Fatalf("POST /items: %d %s", a.status, a.body)
			}
		}
	}
	idle := func(r *running) { time.Sleep(2 * time.Second) }

	// What a service costs the store without any request (schema, health
	// checks): the baseline the other counts are read against.
	overhead, _ := commitsOf(t, pg, "idle_0", idle)
	t.Logf("start-up, health check and stop: %d commits", overhead)
	if overhead > 5 {
		t.Fatalf("an idle service without a poller made %d commits in 2s", overhead)
	}

	t.Run("store writes", func(t *testing.T) {
		for _, tt := range []struct {
			db     string
			writes int
		}{{"writes_1", 1}, {"writes_4", 4}} {
			got, _ := commitsOf(t, pg, tt.db, post, "--store-writes", fmt.Sprint(tt.writes))
			got -= overhead
			t.Logf("--store-writes %d: %d commits for %d POSTs", tt.writes, got, posts)
			if want := int64(posts * tt.writes); got != want {
				t.Errorf("--store-writes %d: %d commits beyond the baseline for %d POSTs, want %d", tt.writes, got, posts, want)
			}
		}
	})

	t.Run("idle commits", func(t *testing.T) {
		got, ran := commitsOf(t, pg, "idle_20", idle, "--idle-commits", "20")
		got -= overhead
		t.Logf("--idle-commits 20 for 2s: %d commits, the service up %s", got, ran.Round(time.Millisecond))
		// 40 over the 2 s sleep; the poller also commits while the service
		// starts and stops, which a loaded machine stretches (60 in 3 s
		// once), at its rate and never above it: a late tick is skipped,
		// not made up. The one beyond the first tick is the baseline's
		// own count, read from another run.
		if most := int64(20*ran.Seconds()) + 2; got < 25 || got > most {
			t.Errorf("--idle-commits 20 made %d commits with the service up %s, want from 25 (2 s at 20/s, some ticks late) to %d (20/s while up)", got, ran.Round(time.Millisecond), most)
		}
		paced := got
		got, ranBusy := commitsOf(t, pg, "idle_busy", idle, "--idle-commits", "-1")
		got -= overhead
		t.Logf("--idle-commits -1 for 2s: %d commits, the service up %s", got, ranBusy.Round(time.Millisecond))
		// A poller that never waits beats the 20/s one by far, and the
		// gate's limit (1 commit/s) by ten times and more. Not a count in
		// hundreds: that is the machine's speed, and with the cores 1 %
		// idle the store gave it 111 in a run of a few seconds (run 86).
		if most := 2 * paced; got < most || float64(got) < 10*ranBusy.Seconds() {
			t.Errorf("--idle-commits -1 made %d commits with the service up %s, want at least %d (twice the 20/s poller's %d) and 10 a second", got, ranBusy.Round(time.Millisecond), most, paced)
		}
	})
}
