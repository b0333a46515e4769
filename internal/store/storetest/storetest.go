// Package storetest starts a real PostgreSQL for other packages' tests.
package storetest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/store"
)

// quietSettings are the test servers' PostgreSQL parameters: autovacuum off,
// because its workers commit in every database they visit (about two
// commits a visit) and a test asserting an arm's exact count must see only
// the arm's; fsync off, because the machine's disk is shared by every test
// suite running at once. The gate's own store keeps PostgreSQL's defaults.
func quietSettings() map[string]string {
	return map[string]string{"autovacuum": "off", "fsync": "off"}
}

// Start starts PostgreSQL over TLS with databases dbs for t and stops it
// in t's Cleanup, even when t fails (the server's log tail is logged then).
// A missing PostgreSQL fails t: tests never skip it.
func Start(t testing.TB, dbs ...string) *store.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := store.Start(ctx, store.Options{Dir: t.TempDir(), Databases: dbs, TLS: true, Settings: quietSettings()})
	if err != nil {
		t.Fatalf("starting PostgreSQL for the test (needs initdb and postgres 15 on PATH or under /usr/lib/postgresql/15/bin, and a postgres system user when run as root; apt-get install postgresql): %v", err)
	}
	t.Logf("storetest: %s started in %s", s, s.StartTime().Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(s.LogFile()); err == nil {
				t.Logf("storetest: postgres log tail:\n%s", lastLines(string(b), 30))
			}
		}
		if err := s.Stop(); err != nil {
			t.Errorf("storetest: %v", err)
		}
	})
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
