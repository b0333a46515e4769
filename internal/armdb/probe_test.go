package armdb

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// prepareTable makes table t in db from a session of its own, and returns
// once those commits are counted, so they cannot land in a phase later.
func prepareTable(ctx context.Context, t *testing.T, s *Server, db string) {
	t.Helper()
	before, err := s.Commits(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, s.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (i int)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx) // a backend publishes its counts as it exits
	// connect + CREATE TABLE are two commits.
	waitCount(ctx, t, s, db, before+2, FlushWait)
}

func waitCount(ctx context.Context, t *testing.T, s *Server, db string, want int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		n, err := s.Commits(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if n == want {
			return
		}
		if n > want || time.Now().After(deadline) {
			t.Fatalf("%s: %d commits counted, want %d", db, n, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func commitOne(ctx context.Context, conn *pgx.Conn, i int) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO t VALUES ($1)", i)
		return err
	})
}

// testCounterCountsArmCommits commits N transactions as an arm would and
// checks that the phase's delta is exactly N once the flush rule allows,
// measuring how long the count lagged behind the last commit.
func testCounterCountsArmCommits(t *testing.T, s *Server) {
	const n = 200
	tests := []struct {
		name  string
		db    string
		close bool // the arm ends its session after the phase
	}{
		{name: "session closed after the phase", db: "count_closed", close: true},
		{name: "session left idle after the phase", db: "count_idle"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), storeTestLimit)
			defer cancel()
			prepareTable(ctx, t, s, tc.db)
			arm, err := pgx.Connect(ctx, s.DSN(tc.db))
			if err != nil {
				t.Fatal(err)
			}
			defer arm.Close(ctx)
			c, err := s.Counter(ctx, tc.db)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// The arm's own connect commit was published before its
			// session said ready, so Begin after it sees it already.
			if err := c.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if err := commitOne(ctx, arm, i); err != nil {
					t.Fatal(err)
				}
			}
			last := time.Now()
			if tc.close {
				arm.Close(ctx)
			}

			var lag time.Duration
			var wg sync.WaitGroup
			wg.Go(func() {
				for ctx.Err() == nil {
					m, err := c.Read(ctx)
					if err == nil && m[tc.db]-c.begin[tc.db] >= n {
						lag = time.Since(last)
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			})
			got, err := c.End(ctx, FlushWait)
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if got[tc.db] != n {
				t.Fatalf("%s: %d commits counted over the phase, the arm made %d", tc.db, got[tc.db], n)
			}
			if span := c.Span(); span < FlushWait {
				t.Fatalf("Span = %s after End(ctx, FlushWait)", span)
			}
			if lag == 0 || lag > FlushWait {
				t.Fatalf("%s: the count reached %d only after %s, beyond FlushWait %s", tc.db, n, lag, FlushWait)
			}
			t.Logf("store: %d commits, %s: counted %s after the last commit (FlushWait %s)", n, tc.name, lag.Round(time.Millisecond), FlushWait)
		})
	}

	t.Run("busy session trails by about a flush interval", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), storeTestLimit)
		defer cancel()
		const db = "count_busy"
		prepareTable(ctx, t, s, db)
		arm, err := pgx.Connect(ctx, s.DSN(db))
		if err != nil {
			t.Fatal(err)
		}
		defer arm.Close(ctx)
		c, err := s.Counter(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		const rate = 200 // commits per second, paced so the machine stays usable
		var committed atomic.Int64
		armCtx, stopArm := context.WithTimeout(ctx, 3*time.Second)
		defer stopArm()
		var wg sync.WaitGroup
		var armErr error
		wg.Go(func() {
			tick := time.NewTicker(time.Second / rate)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-armCtx.Done():
					return
				case <-tick.C:
				}
				if err := commitOne(ctx, arm, i); err != nil {
					armErr = err
					return
				}
				committed.Add(1)
			}
		})
		var worst int64
		for armCtx.Err() == nil {
			done := committed.Load()
			m, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if short := done - (m[db] - c.begin[db]); short > worst {
				worst = short
			}
			time.Sleep(50 * time.Millisecond)
		}
		wg.Wait()
		if armErr != nil {
			t.Fatal(armErr)
		}
		got, err := c.End(ctx, FlushWait)
		if err != nil {
			t.Fatal(err)
		}
		total := committed.Load()
		if got[db] != total {
			t.Fatalf("%s: %d commits counted, the arm made %d", db, got[db], total)
		}
		trail := time.Duration(float64(worst) / float64(rate) * float64(time.Second))
		t.Logf("store: busy session at %d commits/s: the count trailed by at most %d commits (%s); %d counted exactly after FlushWait",
			rate, worst, trail.Round(time.Millisecond), total)
		if trail > MinFlushInterval+time.Second {
			t.Fatalf("a busy session's count trailed by %s, beyond the %s flush interval plus 1 s slack", trail, MinFlushInterval)
		}
	})
}

// storeTestLimit ends a store test that hangs. It is no speed claim: each
// probe read is a connection of its own, and on a machine's first run,
// under the race detector beside the action image's debootstrap (initdb
// took 9 s there), the probe test's two dozen reads and its flush waits
// used up the 40 s this limit was then.
const storeTestLimit = 3 * time.Minute

// testProbeDoesNotInflate reads the counter through a DSN naming the arm's
// own database, as the run does with an arm's store.dsn; the probe must
// leave the count where it was. A control reads the same counter from a
// session on the arm's database and must move it, so the test can fail.
func testProbeDoesNotInflate(t *testing.T, s *Server) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTestLimit)
	defer cancel()
	const db = "probe"
	armDSN := s.DSN(db)
	before, err := Commits(ctx, armDSN, db)
	if err != nil {
		t.Fatal(err)
	}
	reads := time.Now()
	for range 20 {
		if _, err := Commits(ctx, armDSN, db); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("store: 20 probe reads took %s", time.Since(reads).Round(time.Millisecond))
	// Every probe session has exited, and an exiting backend publishes its
	// counts at once; wait past the busy flush interval all the same.
	time.Sleep(MinFlushInterval + 500*time.Millisecond)
	after, err := Commits(ctx, armDSN, db)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("21 probe reads moved %s's count from %d to %d", db, before, after)
	}

	naive, err := pgx.Connect(ctx, armDSN)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := naive.QueryRow(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = $1", db).Scan(&n); err != nil {
		t.Fatal(err)
	}
	naive.Close(ctx)
	deadline := time.Now().Add(FlushWait)
	var inflated int64
	for time.Now().Before(deadline) {
		if inflated, err = Commits(ctx, armDSN, db); err != nil {
			t.Fatal(err)
		}
		if inflated > after {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if inflated <= after {
		t.Fatal("control: a read from a session on the arm's database did not move its count, so this test cannot see inflation")
	}
	t.Logf("store: 21 probe reads added 0 commits to %s; one read from a session on %s itself added %d", db, db, inflated-after)

	if _, err := Commits(ctx, armDSN, "perf_nope"); err == nil || !strings.Contains(err.Error(), `no database "perf_nope"`) {
		t.Fatalf("Commits of a missing database: err = %v", err)
	}
}

// testTableWrites writes rows as FerroFED's head writes emergency
// accesses (inserts and upserts) and reads them back from the statistics.
func testTableWrites(t *testing.T, s *Server) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTestLimit)
	defer cancel()
	dsn := s.DSN("perf_head")
	arm, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE SCHEMA ferrofed",
		"CREATE TABLE ferrofed.emergency_access (id int PRIMARY KEY, attempts int)",
		"INSERT INTO ferrofed.emergency_access SELECT g, 1 FROM generate_series(1, 5) g",
		// Three more attempts on rows that exist: updates, one write each.
		"INSERT INTO ferrofed.emergency_access SELECT g, 1 FROM generate_series(1, 3) g ON CONFLICT (id) DO UPDATE SET attempts = emergency_access.attempts + 1",
	} {
		if _, err := arm.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	arm.Close(ctx)
	deadline := time.Now().Add(FlushWait)
	var n int64
	for {
		if n, err = TableWrites(ctx, dsn, "ferrofed.emergency_access"); err != nil {
			t.Fatal(err)
		}
		if n >= 8 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n != 8 {
		t.Fatalf("ferrofed.emergency_access: %d writes counted, want 5 inserts + 3 updates = 8", n)
	}
	if _, err := TableWrites(ctx, dsn, "ferrofed.nope"); err == nil || !strings.Contains(err.Error(), "no table ferrofed.nope") {
		t.Fatalf("TableWrites of a missing table: err = %v", err)
	}
}
