package armdbtest_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/armdb/armdbtest"
	"github.com/perfgate/perfgate/internal/testtier"
)

func TestMain(m *testing.M) { os.Exit(armdbtest.Main(m)) }

func TestStartServesArmsAndCleansUp(t *testing.T) {
	testtier.Heavy(t, testtier.Postgres)
	ctx := context.Background()
	var s *armdb.Server
	// A subtest's Cleanup runs when the subtest ends, so the parent can
	// check that its databases are gone afterwards.
	t.Run("arms", func(t *testing.T) {
		s = armdbtest.Start(t, "perf_base", "perf_head")
		for _, db := range []string{"perf_base", "perf_head"} {
			dir := t.TempDir()
			path, err := s.WriteDSN(db, dir)
			if err != nil {
				t.Fatal(err)
			}
			dsn, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			conn, err := pgx.Connect(ctx, string(dsn))
			if err != nil {
				t.Fatalf("connecting with %s: %v", filepath.Base(path), err)
			}
			var cur string
			var ssl bool
			err = conn.QueryRow(ctx, "SELECT current_database(), ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&cur, &ssl)
			conn.Close(ctx)
			if err != nil || cur != db || !ssl {
				t.Fatalf("store.dsn of %s reached %q ssl=%v (err %v)", db, cur, ssl, err)
			}
			if _, err := s.Commits(ctx, db); err != nil {
				t.Fatal(err)
			}
		}
		// The same names at once are refused: the commits would mix.
		ctx2, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := s.AddDatabases(ctx2, "perf_head"); err == nil {
			t.Error("a second perf_head was made while the first is a test's")
		}
	})
	if s == nil {
		t.Fatal("armdbtest.Start returned no server")
	}
	// The databases went with the subtest; the server stays for the
	// binary's next test, the same process.
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname IN ('perf_base', 'perf_head')").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d of the subtest's databases left after its Cleanup (err %v)", n, err)
	}
	if len(s.Databases()) != 0 {
		t.Errorf("the server still lists %v", s.Databases())
	}
	var again *armdb.Server
	t.Run("next test", func(t *testing.T) { again = armdbtest.Start(t, "perf_head") })
	if again != s || again.PID() != s.PID() {
		t.Errorf("the next test got another server (pid %d, first %d): one per binary", again.PID(), s.PID())
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(s.PID()))); err != nil {
		t.Fatalf("the shared postgres %d is gone before the binary's end", s.PID())
	}
}

// Database names are unique within the binary.
func TestDatabaseIsTheTestsOwn(t *testing.T) {
	a, b := armdbtest.Database(t, "verdictd"), armdbtest.Database(t, "verdictd")
	if a == b {
		t.Fatalf("two Database calls gave one URL %s", a)
	}
}
