package pgdsn_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/pgdsn"
)

func TestParseRefusesWithoutQuotingTheDSN(t *testing.T) {
	const secret = "s3cret-pw"
	tests := []string{
		// pgx's own message shows "xxxxx@ss%zz-s3cret-pw@...": it masks
		// a password only up to an '@' in it.
		"postgres://perfgate:pa@ss%zz-" + secret + "@127.0.0.1:5432/perf_head",
		"postgres://perfgate:" + secret + "@127.0.0.1:notaport/perf_head",
		"host=127.0.0.1 password=" + secret + " port=notaport",
		"postgres://perfgate:" + secret + "@127.0.0.1:5432/perf_head?sslmode=bogus",
	}
	for _, dsn := range tests {
		_, err := pgdsn.Parse(dsn, "idle control")
		if err == nil {
			t.Fatalf("a DSN that does not parse was taken")
		}
		if strings.Contains(err.Error(), secret) || !strings.HasPrefix(err.Error(), "idle control: the DSN does not parse") {
			t.Errorf("the refusal %q quotes the password or does not say the DSN does not parse", err)
		}
	}
	// The case that makes this package needed: pgx's own message.
	if _, err := pgx.ParseConfig(tests[0]); err == nil || !strings.Contains(err.Error(), secret) {
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
