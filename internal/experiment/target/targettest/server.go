package targettest

import (
	"net/http/httptest"
	"testing"

	"github.com/perfgate/perfgate/internal/experiment/target"
)

// StartServer is Start that also returns the target, for a test that
// reads what it delivered (target.Server.Delivered).
func StartServer(t testing.TB, cfg target.Config) (*target.Server, string) {
	t.Helper()
	s, err := target.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return s, srv.URL
}
