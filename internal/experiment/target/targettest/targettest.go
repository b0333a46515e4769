// Package targettest starts the bundled capacity target for a test.
package targettest

import (
	"net/http/httptest"
	"testing"

	"github.com/perfgate/perfgate/internal/experiment/target"
)

// Start serves a capacity target on loopback for the test's lifetime and
// returns its base URL.
func Start(t testing.TB, cfg target.Config) string {
	t.Helper()
	s, err := target.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}
