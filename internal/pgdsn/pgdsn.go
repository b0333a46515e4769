// Package pgdsn parses the PostgreSQL DSNs perfgate connects with (an
// arm's store, perfgate-verdictd's database) and refuses one that does not
// parse without quoting any of it: pgx's own message shows the DSN with
// its password masked, but a password holding an '@' is masked only up to
// it ("pa@ss%zz-s3cret" showed as "xxxxx@ss%zz-s3cret").
package pgdsn

import (
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Parse parses dsn; what names the reader in the refusal ("store probe",
// "idle control", "counter rows").
func Parse(dsn, what string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: the DSN does not parse (a postgres:// URL or key=value string is expected; pgx's reason is not shown, as it can quote the password)", what)
	}
	return cfg, nil
}
