// Package apitest serves the verdict service's whole HTTP surface for
// tests: a real SQLite store, a write token for acme/api, a loopback
// httptest server closed in the test's Cleanup.
//
// It is imported only by tests (the client's among them) and holds no
// test of its own.
package apitest
