package armdb

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/pgdsn"
)

// TableWrites is how many rows were inserted or updated in table
// ("schema.table", or "table" for public) of the database dsn names, from
// pg_stat_user_tables (n_tup_ins + n_tup_upd): FerroFED's gate's after-run
// check that the head's store wrote one row per emergency access it answered.
//
// Unlike Commits it must read from the arm's own database, since the view
// covers only the database it is read in; the probe's session adds to that
// database's commit count but never to this table's writes. It lags as
// FlushWait says.
func TableWrites(ctx context.Context, dsn, table string) (int64, error) {
	schema, name, ok := strings.Cut(table, ".")
	if !ok {
		schema, name = "public", table
	}
	cfg, err := pgdsn.Parse(dsn, "store probe")
	if err != nil {
		return 0, err
	}
	cfg.RuntimeParams["application_name"] = "perfgate-store-probe"
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("store probe: connecting to database %q to count writes to %s: %w", cfg.Database, table, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if majorVersion(conn.PgConn().ParameterStatus("server_version")) >= 15 {
		if _, err := conn.Exec(ctx, "SET stats_fetch_consistency = none"); err != nil {
			return 0, fmt.Errorf("store probe: setting stats_fetch_consistency: %w", err)
		}
	}
	var n int64
	err = conn.QueryRow(ctx, `SELECT n_tup_ins + n_tup_upd FROM pg_stat_user_tables
		WHERE schemaname = $1 AND relname = $2`, schema, name).Scan(&n)
	if err == pgx.ErrNoRows {
		return 0, fmt.Errorf("store probe: database %q has no table %s.%s: check the table the plan's [[store_writes]] names", cfg.Database, schema, name)
	}
	if err != nil {
		return 0, fmt.Errorf("store probe: reading pg_stat_user_tables for %s.%s: %w", schema, name, err)
	}
	return n, nil
}
