package db

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations reads migrations/NNN_name.sql in order.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var ms []migration
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migration %s: its name must start with a number", n)
		}
		b, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	return ms, nil
}

// statements splits a migration into its statements: each ends with a
// semicolon at the end of a line; lines starting with -- are comments.
func statements(s string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, strings.TrimSpace(cur.String()))
	}
	return out
}

// Migrate brings the schema to the newest migration, each in its own
// transaction, and returns the versions it applied. On PostgreSQL an
// advisory lock makes replicas starting at once take turns.
func (db *DB) Migrate(ctx context.Context) ([]int, error) {
	ms, err := migrations()
	if err != nil {
		return nil, fmt.Errorf("migrating %s: %w", db.where, err)
	}
	if _, err := db.sql.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ns BIGINT NOT NULL)"); err != nil {
		return nil, fmt.Errorf("migrating %s: %w", db.where, err)
	}
	var applied []int
	for _, m := range ms {
		done, err := db.applyOne(ctx, m)
		if err != nil {
			return applied, fmt.Errorf("migrating %s: %s: %w", db.where, m.name, err)
		}
		if done {
			applied = append(applied, m.version)
		}
	}
	return applied, nil
}

func (db *DB) applyOne(ctx context.Context, m migration) (bool, error) {
	done, err := db.writing(ctx)
	if err != nil {
		return false, err
	}
	defer done()
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if db.postgres {
		// Any constant key: every replica of this service uses the same.
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7265726469637464)"); err != nil {
			return false, err
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM schema_migrations WHERE version = $1", m.version).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return false, nil
	}
	for _, st := range statements(m.sql) {
		if _, err := tx.ExecContext(ctx, st); err != nil {
			return false, fmt.Errorf("%s: %w", firstLine(st), err)
		}
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_ns) VALUES ($1, $2, $3)", m.version, m.name, time.Now().UnixNano()); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// SchemaVersion is the newest applied migration, 0 for an empty store.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.sql.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("reading the schema version of %s (run `perfgate-verdictd migrate`): %w", db.where, err)
	}
	return v, nil
}

// LatestVersion is the newest migration this build carries.
func LatestVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
