package db_test

import (
	"context"
	"testing"

	"github.com/perfgate/perfgate/internal/pgdsn/pgdsntest"
	"github.com/perfgate/perfgate/internal/verdict/db"
)

// A database URL that does not parse is refused without any part of its
// password: Open used to wrap the pgx driver's refusal, which quotes a
// password holding an '@' from there on.
func TestOpenRefusesABadDatabaseURLWithoutQuotingIt(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-pw"
	for _, url := range pgdsntest.Unparsable(secret) {
		d, err := db.Open(context.Background(), db.Options{DatabaseURL: url})
		if err == nil {
			d.Close()
		}
		pgdsntest.CheckRefusal(t, "Open", err, secret)
	}
}
