package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/perfgate/perfgate/internal/pgdsn"
	"github.com/perfgate/perfgate/internal/verdict"
)

// FileName is the SQLite file inside the data folder.
const FileName = "verdictd.sqlite"

// Options choose the store: DatabaseURL (postgres://...) wins; else a
// SQLite file in DataDir.
type Options struct {
	DataDir     string
	DatabaseURL string
}

// DB is a verdict.Store.
type DB struct {
	sql      *sql.DB
	postgres bool
	where    string // for messages: the file, or the host and database
	// writes queues SQLite's writers in the process: SQLite takes one
	// writer at a time, and a writer it turns away sleeps in steps of up
	// to 100 ms (its busy handler) where a queue hands over at once.
	// PostgreSQL writers run side by side (nil).
	writes chan struct{}
}

// writing waits for the write queue (SQLite only), or for ctx to end;
// call the func it returns when the write is done.
func (db *DB) writing(ctx context.Context) (func(), error) {
	if db.writes == nil {
		return func() {}, nil
	}
	select {
	case db.writes <- struct{}{}:
		return func() { <-db.writes }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting to write to %s: %w", db.where, ctx.Err())
	}
}

var _ verdict.Store = (*DB)(nil)

// Open opens the store without migrating it (see Migrate).
func Open(ctx context.Context, o Options) (*DB, error) {
	if o.DatabaseURL != "" {
		return openPostgres(ctx, o.DatabaseURL)
	}
	if o.DataDir == "" {
		return nil, errors.New("opening the store: neither a data folder (--data) nor a database URL (--database-url) is set")
	}
	return openSQLite(ctx, o.DataDir)
}

func openSQLite(ctx context.Context, dir string) (*DB, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("opening the store: making the data folder: %w", err)
	}
	path := filepath.Join(dir, FileName)
	// WAL lets readers run beside the one writer; synchronous(FULL) syncs
	// the WAL at every commit, so an acknowledged attempt survives a power
	// cut as well as a kill -9; immediate transactions take the write lock
	// at BEGIN, so two writers queue on busy_timeout instead of one
	// failing with SQLITE_BUSY when it upgrades a read lock.
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	d, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("opening the store %s: %w", path, err)
	}
	db := &DB{sql: d, where: path, writes: make(chan struct{}, 1)}
	if err := db.Ping(ctx); err != nil {
		d.Close()
		return nil, err
	}
	var mode string
	if err := d.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || !strings.EqualFold(mode, "wal") {
		d.Close()
		return nil, fmt.Errorf("opening the store %s: journal mode is %q (%v), want wal: put --data on a local file system", path, mode, err)
	}
	return db, nil
}

func openPostgres(ctx context.Context, dsn string) (*DB, error) {
	// Parsed once, here, and handed to the driver as a config: the driver
	// would parse the DSN again, and its refusal would quote it (pgx masks
	// a password only up to an '@' in it).
	cfg, err := pgdsn.Parse(dsn, "opening the PostgreSQL database")
	if err != nil {
		return nil, err
	}
	// Never the password: only host, port and database name go in messages.
	where := fmt.Sprintf("PostgreSQL at %s/%s", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), cfg.Database)
	d := stdlib.OpenDB(*cfg)
	d.SetMaxOpenConns(16)
	d.SetMaxIdleConns(16)
	d.SetConnMaxIdleTime(5 * time.Minute)
	db := &DB{sql: d, postgres: true, where: where}
	if err := db.Ping(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return db, nil
}

// String names the store for logs, without credentials.
func (db *DB) String() string {
	if db.postgres {
		return "postgres (" + db.where + ")"
	}
	return "sqlite (" + db.where + ")"
}

// Ping says the store answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.sql.PingContext(ctx); err != nil {
		return fmt.Errorf("reaching %s: %w", db.where, err)
	}
	return nil
}

// Close closes the store.
func (db *DB) Close() error { return db.sql.Close() }
