// Package daemon is perfgate-verdictd's command line: serve (the default),
// migrate and token add, with every flag also read from the environment
// (PERFGATE_VERDICTD_<FLAG>, a flag on the command line winning). The main
// in cmd/perfgate-verdictd only calls Main.
//
// It holds the flags, their environment names and the wiring of the store,
// the publisher and the HTTP server; the service's behaviour is package
// verdict's, the routes are httpapi's.
package daemon
