package apitest

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db"
	"github.com/perfgate/perfgate/internal/verdict/db/dbtest"
	"github.com/perfgate/perfgate/internal/verdict/httpapi"
)

// Repository is the repository Server's token writes for.
const Repository = "acme/api"

// Server is the running API.
type Server struct {
	URL   string
	Store *db.DB
	// Token writes for Repository.
	Token string
}

// Start serves the API; configure, when set, changes its auth and options
// before it starts (reads public and token auth are the defaults).
func Start(t testing.TB, configure func(a *httpapi.Auth, o *httpapi.Options)) *Server {
	t.Helper()
	st := dbtest.Open(t, "sqlite")
	tok, hash, err := httpapi.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutTokenHash(context.Background(), Repository, hash); err != nil {
		t.Fatal(err)
	}
	auth := &httpapi.Auth{TokenRepository: st.TokenRepository, ReadsPublic: true}
	o := httpapi.Options{Auth: auth, Metrics: httpapi.NewMetrics(), Experiments: st}
	if configure != nil {
		configure(auth, &o)
	}
	svc := verdict.New(st, verdict.Config{OnAttempt: o.Metrics.Attempt})
	srv := httptest.NewServer(httpapi.New(svc, o))
	t.Cleanup(srv.Close)
	return &Server{URL: srv.URL, Store: st, Token: tok}
}
