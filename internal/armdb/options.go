package armdb

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Options say what Start makes. The zero value of every field but Databases
// is a sensible default.
type Options struct {
	// Dir is where the CA certificate (ca.pem) and the server's log
	// (postgres.log, initdb.log) go, and where the data dir goes when the
	// postgres system user can reach it. Empty: a temporary folder removed by
	// Stop, logs included.
	Dir string
	// Databases are made once the server is ready, one per arm, for example
	// "perf_base" and "perf_head".
	Databases []string
	// TLS states the default: the server speaks TLS only unless NoTLS is set.
	// It exists so a caller can say so explicitly; TLS with NoTLS is refused.
	TLS bool
	// NoTLS serves plain TCP on loopback instead (sslmode=disable DSNs), for
	// a client that cannot do TLS. FerroFED's gate's store runs over TLS.
	NoTLS bool
	// Port is the TCP port on 127.0.0.1; 0 picks a free one (and retries
	// with another when a racing process takes it first).
	Port int
	// Settings are extra postgresql.conf parameters, for example
	// {"autovacuum": "off"}. Those Start owns (addresses, port, sockets,
	// TLS, authentication, data dir) are refused.
	Settings map[string]string
	// Owner names the process the server belongs to, written to an owner
	// file in its runtime folder, so that RemoveStale, called by a later
	// run, can tell a folder a killed run left from a live one. Empty: no
	// owner file, never removed by RemoveStale.
	Owner string
}

// dbName is what Start accepts as a database name: a lower-case SQL
// identifier, so the name reads the same quoted or not, in a URL path and in
// a shell, and fits PostgreSQL's 63-byte limit.
var dbName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

var settingName = regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`)

// ownedSettings are decided by Start; letting Settings move them would break
// its promises (loopback only, TLS, the socket dir removed by Stop).
var ownedSettings = map[string]bool{
	"listen_addresses": true, "port": true, "unix_socket_directories": true,
	"unix_socket_permissions": true, "unix_socket_group": true,
	"data_directory": true, "hba_file": true, "ident_file": true, "config_file": true,
	"external_pid_file": true, "logging_collector": true, "log_destination": true,
}

func (o Options) validate() error {
	if o.TLS && o.NoTLS {
		return fmt.Errorf("store options: TLS and NoTLS are both set: keep one (TLS is the default)")
	}
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("store options: port %d is out of range: use 1-65535, or 0 for a free port", o.Port)
	}
	if err := checkDatabases(o.Databases); err != nil {
		return fmt.Errorf("store options: %w", err)
	}
	for _, k := range sortedKeys(o.Settings) {
		switch {
		case !settingName.MatchString(k):
			return fmt.Errorf("store options: setting %q is not a PostgreSQL parameter name", k)
		case ownedSettings[k] || strings.HasPrefix(k, "ssl"):
			return fmt.Errorf("store options: setting %q is decided by Start: use Options.Port/NoTLS, or drop it", k)
		}
	}
	return nil
}

// checkDatabases refuses what Start and AddDatabases will not make: a name
// that is not a lower-case identifier (DSN puts it in a URL path as it
// is), one of PostgreSQL's own databases, or a name given twice.
func checkDatabases(dbs []string) error {
	seen := map[string]bool{}
	for _, db := range dbs {
		switch {
		case !dbName.MatchString(db):
			return fmt.Errorf("database name %q: use lower-case letters, digits and _ (at most 63, not starting with a digit), for example perf_head", db)
		case db == "postgres" || db == "template0" || db == "template1":
			return fmt.Errorf("database name %q is PostgreSQL's own: name the arm's database, for example perf_head", db)
		case seen[db]:
			return fmt.Errorf("database %q is named twice: give each arm its own", db)
		}
		seen[db] = true
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
