package pairs_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/armdb/armdbtest"
	"github.com/perfgate/perfgate/internal/pairs"
	"github.com/perfgate/perfgate/internal/plan"
)

// An arm that committed a burst just before the idle phase and keeps its
// session open holds those commits unpublished for up to 10 s
// (docs/armdb.md). Without settling, an idle window long enough to see
// them published counts them as idle work and fails the store limit; the
// gate's idle phase waits armdb.FlushWait first and sees none. Both arms'
// counters are read through one Counters query.
//
// The two cases run at once, each on databases of its own: most of their
// 24 s and 13 s is waiting on PostgreSQL's 10 s timer, and one after the
// other they were the longest test of the suite's first phase (40 s).
func TestIdleWindowOpensAfterTheCountersSettle(t *testing.T) {
	p, err := plan.Parse(filepath.Join(t.TempDir(), "plan.toml"), []byte(`
[ab]
idle = "12s"
idle_tx_per_sec = 1

[[group]]
name = "hello"
path = "/hello"
expect = 200
`))
	if err != nil {
		t.Fatal(err)
	}
	p.AB.Pairs = 0 // the idle phase alone
	for _, tc := range []struct {
		name, db string
		settle   time.Duration
		fail     bool
	}{
		{"settled", "settled", 0, false},
		{"not settled", "unsettled", time.Nanosecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			baseDB, headDB := tc.db+"_base", tc.db+"_head"
			srv := armdbtest.Start(t, baseDB, headDB)
			counter, err := srv.Counter(context.Background(), baseDB, headDB)
			if err != nil {
				t.Fatal(err)
			}
			defer counter.Close()
			reads := 0
			counters := func(ctx context.Context) (map[string]int64, error) {
				reads++
				m, err := counter.Read(ctx)
				if err != nil {
					return nil, err
				}
				return map[string]int64{"base": m[baseDB], "head": m[headDB]}, nil
			}
			head := startArm(t, "head")
			base := startArm(t, "base")
			// Settle 1 ns stands for none: the burst lands in the window.
			burst(t, srv.DSN(headDB))
			var log strings.Builder
			start := time.Now()
			res, err := pairs.Run(context.Background(), pairs.Config{Plan: p, Seed: 1, Arms: []pairs.Arm{base, head},
				Counters: counters, Settle: tc.settle, StoreFlush: 1500 * time.Millisecond, Log: &log})
			if err != nil {
				t.Fatal(err)
			}
			idle := res.Input.Idle
			t.Logf("%s: %.2f tx/s over %.1f s, %d counter reads, %s in all\n%s", tc.name, idle.TxPerSec, idle.Seconds, reads, time.Since(start).Round(100*time.Millisecond), log.String())
			if reads != 2 {
				t.Errorf("the idle phase read the counters %d times, want 2 (one query at each edge)", reads)
			}
			over := idle.TxPerSec >= idle.TxLimit
			if over != tc.fail {
				t.Errorf("%s: %.2f tx/s against the limit %g: over = %v, want %v", tc.name, idle.TxPerSec, idle.TxLimit, over, tc.fail)
			}
			if settled := strings.Contains(log.String(), "waiting "+armdb.FlushWait.String()+" for the store's counters to settle"); settled != (tc.settle == 0) {
				t.Errorf("the log says settled = %v, want %v:\n%s", settled, tc.settle == 0, log.String())
			}
		})
	}
}

// burst commits 60 transactions in one session left open, as an arm's
// pool would: all but the first stay pending in it until its 10 s idle
// timer.
func burst(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	for range 60 {
		if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
}
