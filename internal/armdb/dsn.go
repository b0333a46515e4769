package armdb

import (
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ParseDSN parses a store DSN for a connection of the gate's own; what
// names the reader in the refusal ("store probe", "idle control").
// The refusal says only that the DSN does not parse: pgx's message shows
// the DSN with its password masked, but a password holding an '@' is
// masked only up to it ("pa@ss%zz-s3cret" showed as "xxxxx@ss%zz-s3cret").
func ParseDSN(dsn, what string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: the store's DSN does not parse (a postgres:// URL or key=value string is expected; pgx's reason is not shown, as it can quote the password)", what)
	}
	return cfg, nil
}
