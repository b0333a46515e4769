// Package controls proves on every run that the gate can still fail, and
// counts what latency cannot show. After the pairs it runs:
//
//   - counters: N requests of a plan group sent to an arm, a count read
//     before and after (an HTTP endpoint of the arm or an SQL query on its
//     store), whose growth must stay within a share of the requests;
//   - store-write accounting: the head's store must have written a row of
//     a table for every request of a group it answered as expected;
//   - the idle control: a poller of the head's store that never waits,
//     beside the idle phase of a second plan, whose limits must fail;
//   - the variant control: a third arm, the head with extra overrides, on
//     which a counter must fail.
//
// A control that does not fail means the gate is blind on this runner, so
// the run cannot be judged (exit 2). docs/controls.md says more.
package controls

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// pollSQL is each poll: it reads a table (a catalog every database has,
// so the user's schema is not touched) because PostgreSQL 15 publishes a
// session's commit count only beside some other pending statistic. A
// transaction that reads no table and writes no WAL, such as SELECT 1,
// leaves nothing pending, so once a session's first second of catalog
// reads is published its SELECT 1 commits stay unpublished until the
// session ends: a poller of SELECT 1 counted about 10,000 commits in its
// first second and none after, and an idle window opened a second late
// saw it as idle (docs/armdb.md, "How late a count is").
const pollSQL = "SELECT 1 FROM pg_catalog.pg_class LIMIT 1"

// Poller is the idle control's planted load: a store client that polls
// without ever waiting, each poll its own committed transaction, the shape
// of the outbox sender that busy-looped at about 8,000 transactions a
// second while idle in FerroFED's family.
type Poller struct {
	polls  atomic.Int64
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// StartPoller connects to the database the store's parsed DSN names
// (pgdsn.Parse) and polls it until Stop or ctx ends. Whoever starts it
// stops it. store is copied, not changed: the caller may connect with it
// again.
func StartPoller(ctx context.Context, store *pgx.ConnConfig) (*Poller, error) {
	cfg := store.Copy()
	cfg.RuntimeParams["application_name"] = "perfgate-idle-control"
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("idle control: connecting the poller to database %q: %w", cfg.Database, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Poller{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer conn.Close(context.WithoutCancel(ctx))
		for ctx.Err() == nil {
			// A simple-protocol statement outside a transaction block is
			// one transaction, committed: what the idle limit counts.
			if _, err := conn.Exec(ctx, pollSQL, pgx.QueryExecModeSimpleProtocol); err != nil {
				if ctx.Err() == nil {
					p.err = fmt.Errorf("idle control: polling the head's store: %w", err)
				}
				return
			}
			p.polls.Add(1)
		}
	}()
	return p, nil
}

// Polls is how many polls the poller has made so far.
func (p *Poller) Polls() int64 { return p.polls.Load() }

// Stop ends the poller, waits for it and returns how many polls it made.
func (p *Poller) Stop() (int64, error) {
	p.cancel()
	<-p.done
	return p.polls.Load(), p.err
}
