// Package db is the verdict service's store (verdict.Store) over SQLite,
// embedded by default (modernc.org/sqlite, no cgo, WAL, one file under the
// data folder), or PostgreSQL through pgx when several replicas share one
// database. Both run the same migrations and the same SQL: $N placeholders
// (SQLite reads them too), composite keys instead of serial ids, INTEGER
// 0/1 for booleans.
//
// It holds the SQL and the migrations; it decides nothing: what an attempt
// means and when a run is final is package verdict's.
package db
