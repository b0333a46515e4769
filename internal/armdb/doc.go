// Package armdb runs the arms' store: a throwaway PostgreSQL server (over
// TLS unless told otherwise) with a database for each arm, started under a
// folder of the run's and stopped with nothing left running, as FerroFED's
// gate ran one for its own store. It also reads the store's counters the
// judge needs: committed transactions per database (for the idle limit and
// transactions per request) and the rows a table was written (for the
// store-write check).
//
// It does not decide anything from those counts (internal/judge and
// internal/controls do) and does not start the arms: the gate asks it to
// write each arm's DSN into the arm's folder (WriteDSN, the store.dsn an
// arm's config reads through @DIR@). The folders a killed run's server
// left behind are removed by RemoveStale. docs/armdb.md has the API and
// why each choice was made.
package armdb
