package db_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/pgdsn/pgdsntest"
	"github.com/perfgate/perfgate/internal/verdict/db"
	"github.com/perfgate/perfgate/internal/verdict/db/dbtest"
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

// The store names itself in logs and messages by host, port and database,
// from a URL or a key=value DSN alike, and never by its password.
func TestPostgresStoreNamesItselfWithoutThePassword(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(dbtest.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	name := strings.TrimPrefix(u.Path, "/")
	keyValue := fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s", u.Hostname(), u.Port(), u.User.Username(), pw, name)
	for k, v := range u.Query() { // the TLS settings
		keyValue += fmt.Sprintf(" %s=%s", k, v[0])
	}
	want := fmt.Sprintf("postgres (PostgreSQL at %s/%s)", u.Host, name)
	for _, dsn := range []string{u.String(), keyValue} {
		d, err := db.Open(context.Background(), db.Options{DatabaseURL: dsn})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if got := d.String(); got != want || pw == "" || strings.Contains(got, pw) {
			t.Errorf("the store opened from a %s names itself %q, want %q (and never its password)", map[bool]string{true: "URL", false: "key=value DSN"}[dsn == u.String()], got, want)
		}
		d.Close()
	}
}
