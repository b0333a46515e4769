package exampleservice

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgStore is the service's PostgreSQL store: a few connections shared by the
// handlers and the background poller. A connection that saw an error is
// closed rather than reused, so one failure cannot poison the next request.
type pgStore struct {
	cfg  *pgx.ConnConfig
	idle chan *pgx.Conn
	slot chan struct{} // one token per connection that may be open
}

const storeConns = 4

const schema = `
CREATE TABLE IF NOT EXISTS items (
	id      bigserial PRIMARY KEY,
	name    text NOT NULL,
	created timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS outbox (
	id      bigserial PRIMARY KEY,
	item_id bigint NOT NULL,
	seq     int NOT NULL,
	sent_at timestamptz
);`

func openStore(ctx context.Context, dsn string) (*pgStore, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the DSN, password included: say only what is wrong.
		return nil, fmt.Errorf("exampled: the store's connection string does not parse as a PostgreSQL DSN")
	}
	// One round trip and one commit per statement: a cached prepared
	// statement would add a commit the first time each connection uses it.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	// A refused connection fails at once whatever this is; the bound is
	// for a store that answers slowly. SCRAM authentication runs in a new
	// backend, and on a busy 2-core machine (the cores 1 % idle) one took
	// longer than 5 s, so the service died before it was ready (run 86).
	// PostgreSQL's own authentication_timeout is 60 s.
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 20 * time.Second
	}
	s := &pgStore{cfg: cfg, idle: make(chan *pgx.Conn, storeConns), slot: make(chan struct{}, storeConns)}
	for range storeConns {
		s.slot <- struct{}{}
	}
	err = s.with(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, schema)
		return err
	})
	if err != nil {
		s.close()
		return nil, fmt.Errorf("exampled: creating the store's tables on %s/%s: %w", cfg.Host, cfg.Database, err)
	}
	return s, nil
}

// with runs fn on a connection of the store.
func (s *pgStore) with(ctx context.Context, fn func(*pgx.Conn) error) error {
	var c *pgx.Conn
	// An idle connection first: a new one costs a connection set-up and a
	// commit of its own (the backend reads the catalogue in a transaction),
	// which would make the commits per request depend on chance.
	select {
	case c = <-s.idle:
	default:
	}
	if c == nil {
		select {
		case c = <-s.idle:
		case <-s.slot:
			var err error
			if c, err = pgx.ConnectConfig(ctx, s.cfg); err != nil {
				s.slot <- struct{}{}
				return fmt.Errorf("connecting to the store: %w", err)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := fn(c); err != nil {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = c.Close(cctx)
		cancel()
		s.slot <- struct{}{}
		return err
	}
	s.idle <- c
	return nil
}

func (s *pgStore) ping(ctx context.Context) error {
	return s.with(ctx, func(c *pgx.Conn) error { return c.Ping(ctx) })
}

// createItem commits the item, then writes-1 more transactions, each an
// outbox event of the item: the knob --store-writes sets how many commits
// one write request costs.
func (s *pgStore) createItem(ctx context.Context, name string, writes int) (int64, error) {
	var id int64
	err := s.with(ctx, func(c *pgx.Conn) error {
		if err := c.QueryRow(ctx, `INSERT INTO items (name) VALUES ($1) RETURNING id`, name).Scan(&id); err != nil {
			return fmt.Errorf("inserting the item: %w", err)
		}
		for seq := 1; seq < writes; seq++ {
			if _, err := c.Exec(ctx, `INSERT INTO outbox (item_id, seq) VALUES ($1, $2)`, id, seq); err != nil {
				return fmt.Errorf("inserting outbox event %d of item %d: %w", seq, id, err)
			}
		}
		return nil
	})
	return id, err
}

// pollOutbox marks pending outbox events sent: one statement, so one commit.
func (s *pgStore) pollOutbox(ctx context.Context) error {
	return s.with(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, `UPDATE outbox SET sent_at = now() WHERE id IN (
			SELECT id FROM outbox WHERE sent_at IS NULL ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED)`)
		return err
	})
}

func (s *pgStore) close() {
	for {
		select {
		case c := <-s.idle:
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = c.Close(ctx)
			cancel()
		default:
			return
		}
	}
}
