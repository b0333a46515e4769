package pgdsn_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/pgdsn"
	"github.com/perfgate/perfgate/internal/pgdsn/pgdsntest"
)

func TestParseRefusesWithoutQuotingTheDSN(t *testing.T) {
	const secret = "s3cret-pw"
	dsns := append(pgdsntest.Unparsable(secret), "postgres://perfgate:"+secret+"@127.0.0.1:5432/perf_head?sslmode=bogus")
	for _, dsn := range dsns {
		_, err := pgdsn.Parse(dsn, "idle control")
		pgdsntest.CheckRefusal(t, "Parse", err, secret)
		if err != nil && !strings.HasPrefix(err.Error(), "idle control: ") {
			t.Errorf("the refusal %q does not name its reader first", err)
		}
	}
	// Why the package is needed: pgx's own message for the first.
	if _, err := pgx.ParseConfig(dsns[0]); err == nil || !strings.Contains(err.Error(), secret) {
		t.Logf("pgx no longer quotes a password holding an '@' (%v); Parse still refuses without it", err)
	}
}

func TestParseTakesAGoodDSN(t *testing.T) {
	cfg, err := pgdsn.Parse("postgres://perfgate:pa%40ss@127.0.0.1:5432/perf_head?sslmode=disable", "store probe")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Database != "perf_head" || cfg.Password != "pa@ss" || cfg.Port != 5432 {
		t.Errorf("parsed database %q, password %q, port %d", cfg.Database, cfg.Password, cfg.Port)
	}
}
