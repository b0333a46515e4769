// Package httpapi is the verdict service over HTTP: the JSON API under
// /v1, the server-rendered page, health, readiness and Prometheus metrics.
// docs/verdictd.md lists every route, field and status.
//
// It holds the routes, the request decoding, the tokens it accepts and the
// rendering of the page; every decision is the verdict.Service it is given.
package httpapi
