package armdb

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/pgdsn"
)

// The flush rule of PostgreSQL 15's cumulative statistics (pgstat.c): a
// backend publishes its counts when a transaction ends if at least
// PGSTAT_MIN_INTERVAL (1 s) passed since its last flush; otherwise they stay
// pending until the backend next goes idle past that, until its idle timer
// PGSTAT_IDLE_INTERVAL (10 s) fires, or until it exits. A reading therefore
// trails a busy session by about a second and an idle one by up to 10 s.
// A commit rides only beside another pending statistic: the commits of
// transactions that read no table and write no WAL (SELECT 1) wait for
// the session's next one that does, or for its exit (docs/armdb.md).
const (
	// MinFlushInterval is how often a busy backend publishes its counts.
	MinFlushInterval = 1 * time.Second
	// IdleFlushInterval is the longest a backend that went idle keeps
	// commits unpublished.
	IdleFlushInterval = 10 * time.Second
	// FlushWait is how long to wait after a phase's last request before its
	// final reading is complete: the idle interval plus a margin for a
	// loaded machine's timer slack.
	FlushWait = IdleFlushInterval + time.Second
)

// maintenanceDB is where the probe connects. Reading from the arm's own
// database would count the probe's session and query as the arm's commits.
const maintenanceDB = "postgres"

// Commits is db's committed transactions so far (pg_stat_database
// .xact_commit) on the server dsn points at, whatever database dsn names:
// the probe always connects to the maintenance database "postgres", so it
// never adds to db's count. The count lags as FlushWait says.
func Commits(ctx context.Context, dsn, db string) (int64, error) {
	c, err := NewCounter(ctx, dsn, db)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	m, err := c.Read(ctx)
	if err != nil {
		return 0, err
	}
	return m[db], nil
}

// Counter reads the commit counters of some databases over one held
// connection, and counts commits around a phase: Begin at its start, End
// after its last request.
type Counter struct {
	mu    sync.Mutex // a pgx.Conn serves one query at a time
	conn  *pgx.Conn
	dbs   []string
	begin map[string]int64
	// The instants of Begin's and End's reads, for a rate over the phase.
	beganAt, endedAt time.Time
}

// NewCounter connects to the maintenance database of the server dsn points
// at (dsn may name any database; its host, user, password and TLS settings
// are kept) to read the counters of dbs.
func NewCounter(ctx context.Context, dsn string, dbs ...string) (*Counter, error) {
	if len(dbs) == 0 {
		return nil, fmt.Errorf("store probe: name at least one database to count")
	}
	cfg, err := pgdsn.Parse(dsn, "store probe")
	if err != nil {
		return nil, err
	}
	cfg.Database = maintenanceDB
	cfg.RuntimeParams["application_name"] = "perfgate-store-probe"
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store probe: connecting to the maintenance database %q on %s:%d (the probe never reads from the arm's own database, where its own transactions would count): %w",
			maintenanceDB, cfg.Host, cfg.Port, err)
	}
	c := &Counter{conn: conn, dbs: dbs}
	// Fetch from shared memory at every read rather than from a snapshot
	// cached for the transaction. PostgreSQL before 15 has no such setting:
	// its stats collector lags by its own 500 ms interval instead.
	if majorVersion(conn.PgConn().ParameterStatus("server_version")) >= 15 {
		if _, err := conn.Exec(ctx, "SET stats_fetch_consistency = none"); err != nil {
			conn.Close(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("store probe: setting stats_fetch_consistency: %w", err)
		}
	}
	return c, nil
}

// majorVersion reads the major number of a server_version such as
// "15.18 (Debian 15.18-0+deb12u1)"; 0 when it does not parse.
func majorVersion(v string) int {
	end := 0
	for end < len(v) && '0' <= v[end] && v[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(v[:end])
	return n
}

// Read returns every counted database's commits so far.
func (c *Counter) Read(ctx context.Context) (map[string]int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Belt and braces beside stats_fetch_consistency: drop any snapshot
	// this session holds, so the read below sees shared memory now.
	if _, err := c.conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return nil, fmt.Errorf("store probe: clearing the statistics snapshot: %w", err)
	}
	rows, err := c.conn.Query(ctx, "SELECT datname, xact_commit FROM pg_stat_database WHERE datname = ANY($1)", c.dbs)
	if err != nil {
		return nil, fmt.Errorf("store probe: reading pg_stat_database: %w", err)
	}
	got := map[string]int64{}
	for rows.Next() {
		var db string
		var n int64
		if err := rows.Scan(&db, &n); err != nil {
			return nil, fmt.Errorf("store probe: reading pg_stat_database: %w", err)
		}
		got[db] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store probe: reading pg_stat_database: %w", err)
	}
	for _, db := range c.dbs {
		if _, ok := got[db]; !ok {
			return nil, fmt.Errorf("store probe: the server has no database %q: check the arm's store DSN", db)
		}
	}
	return got, nil
}

// Begin takes the phase's starting reading. Commits the arm made in the
// last FlushWait before Begin may still arrive after it: settle the arm (or
// wait FlushWait) before an idle phase's Begin.
func (c *Counter) Begin(ctx context.Context) error {
	m, err := c.Read(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.begin, c.beganAt, c.endedAt = m, time.Now(), time.Time{}
	c.mu.Unlock()
	return nil
}

// End waits `wait` (FlushWait for an exact count of a phase followed by
// quiet, 0 between back-to-back phases whose boundary lags cancel), then
// returns each database's commits since Begin.
func (c *Counter) End(ctx context.Context, wait time.Duration) (map[string]int64, error) {
	c.mu.Lock()
	begin := c.begin
	c.mu.Unlock()
	if begin == nil {
		return nil, fmt.Errorf("store probe: End called before Begin")
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("store probe: waiting for the statistics flush: %w", ctx.Err())
		case <-t.C:
		}
	}
	now, err := c.Read(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.endedAt = time.Now()
	c.mu.Unlock()
	delta := make(map[string]int64, len(now))
	for db, n := range now {
		delta[db] = n - begin[db]
	}
	return delta, nil
}

// Span is the time between Begin's read and the last End's read: divide
// an idle phase's commits by it for a rate. Zero before End.
func (c *Counter) Span() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.endedAt.IsZero() {
		return 0
	}
	return c.endedAt.Sub(c.beganAt)
}

// Close ends the probe's connection.
func (c *Counter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.conn.Close(ctx)
}

// Counter is a probe of this server's databases dbs.
func (s *Server) Counter(ctx context.Context, dbs ...string) (*Counter, error) {
	return NewCounter(ctx, s.DSN(maintenanceDB), dbs...)
}
