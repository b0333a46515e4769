package db_test

import (
	"context"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/verdict/db"
)

// A database URL that does not parse is refused without any part of its
// password: the pgx driver's own refusal masks a password only up to an
// '@' in it, and Open used to wrap that refusal.
func TestOpenRefusesABadDatabaseURLWithoutQuotingIt(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-pw"
	for _, url := range []string{
		"postgres://verdictd:pa@ss%zz-" + secret + "@127.0.0.1:5432/verdicts",
		"postgres://verdictd:" + secret + "@127.0.0.1:notaport/verdicts",
	} {
		d, err := db.Open(context.Background(), db.Options{DatabaseURL: url})
		if err == nil {
			d.Close()
			t.Fatalf("Open took a database URL that does not parse")
		}
		if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "the DSN does not parse") {
			t.Errorf("Open's refusal %q quotes the password or does not say the URL does not parse", err)
		}
	}
}
