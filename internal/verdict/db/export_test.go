package db

import (
	"context"
	"database/sql"
)

// MigrateTo applies the migrations up to version only, so a test can
// store rows in an older schema and read them after the newer ones.
func (db *DB) MigrateTo(ctx context.Context, version int) error {
	if _, err := db.sql.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ns BIGINT NOT NULL)"); err != nil {
		return err
	}
	ms, err := migrations()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.version > version {
			break
		}
		if _, err := db.applyOne(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// SQL is the store's database, for a test's rows in an older schema.
func (db *DB) SQL() *sql.DB { return db.sql }
