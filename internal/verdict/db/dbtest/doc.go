// Package dbtest opens the verdict store for tests, over SQLite or a real
// PostgreSQL, so every package runs its suite against both.
//
// It holds no test of its own and is imported only by tests and by the
// other test helpers (apitest).
package dbtest
