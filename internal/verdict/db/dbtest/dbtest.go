package dbtest

import (
	"context"
	"testing"

	"github.com/perfgate/perfgate/internal/armdb/armdbtest"
	"github.com/perfgate/perfgate/internal/verdict/db"
)

// Open opens a migrated store of kind "sqlite" (a file in a temp
// folder) or "postgres" (a database of t's own on the binary's shared
// PostgreSQL, see Postgres),
// closed in t's Cleanup. Other packages' tests run their suites against
// both with it.
func Open(t testing.TB, kind string) *db.DB {
	t.Helper()
	ctx := context.Background()
	var o db.Options
	switch kind {
	case "sqlite":
		o.DataDir = t.TempDir()
	case "postgres":
		o.DatabaseURL = Postgres(t)
	default:
		t.Fatalf("dbtest.Open: no store kind %q (sqlite or postgres)", kind)
	}
	d, err := db.Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if _, err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

// Postgres gives t an empty database of its own, verdictd_N, on the test
// binary's shared PostgreSQL (armdbtest: the package's tests run through
// armdbtest.Main) and returns its URL; it is dropped in t's Cleanup.
func Postgres(t testing.TB) string {
	t.Helper()
	return armdbtest.Database(t, "verdictd")
}
