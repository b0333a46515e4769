package storetest_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/store"
	"github.com/perfgate/perfgate/internal/store/storetest"
)

func TestStartServesArmsAndCleansUp(t *testing.T) {
	ctx := context.Background()
	var s *store.Server
	// A subtest's Cleanup runs when the subtest ends, so the parent can
	// check that the server is gone afterwards.
	t.Run("arms", func(t *testing.T) {
		s = storetest.Start(t, "perf_base", "perf_head")
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
	})
	if s == nil {
		t.Fatal("storetest.Start returned no server")
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(s.PID()))); err == nil {
		t.Fatalf("postgres %d still runs after the test's Cleanup", s.PID())
	}
}
