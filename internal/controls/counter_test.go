package controls_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/plan"
)

// tokenService is a token service on loopback counting the exchanges it
// answers at /calls, as FerroFED's token service does.
func tokenService(t *testing.T) *httptest.Server {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/exchange":
			calls.Add(1)
			fmt.Fprint(w, `{"token":"t"}`)
		case "/calls":
			fmt.Fprintf(w, `{"exchanges":%d}`, calls.Load())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// armCalling is an arm that exchanges a token at the token service for
// one request in every `every` (1: no cache), over real HTTP.
func armCalling(t *testing.T, tokens string, every int64) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (n.Add(1)-1)%every == 0 {
			resp, err := http.Get(tokens + "/exchange")
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			resp.Body.Close()
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestCounterReadsAnotherService: a counter with a full loopback URL reads
// the token service, not the arm, at FerroFED's gate's 5 % when the plan
// names no limit: a head that exchanges once per 50 requests passes, one
// with no cache (an exchange per request) fails, and a service that is
// down stops the check with its address named.
func TestCounterReadsAnotherService(t *testing.T) {
	tokens := tokenService(t)
	src := fmt.Sprintf(`
[[group]]
name = "onward"
path = "/onward"
expect = 200

[[counter]]
name = "exchanges"
group = "onward"
requests = 100
url = "%s/calls"
field = "exchanges"
`, tokens.URL)
	p, err := plan.Parse("plan.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c := p.Counters[0]
	if c.MaxPerRequest != plan.DefaultCounterLimit {
		t.Fatalf("limit %v, want FerroFED's gate's %v", c.MaxPerRequest, plan.DefaultCounterLimit)
	}
	v, _ := plan.ResolveVars(p, nil, func(string) string { return "" })
	ctx := context.Background()
	cases := []struct {
		name  string
		every int64
		grew  float64
		fail  bool
	}{
		{"cached: one exchange per 50 requests", 50, 2, false},
		{"no cache: one exchange per request", 1, 100, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			arm := armCalling(t, tokens.URL, tc.every)
			r, err := controls.RunCounter(ctx, p, v, c, controls.Target{Name: "head", URL: arm.URL}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if r.Sent != 100 || r.Grew() != tc.grew || r.Fail != tc.fail {
				t.Fatalf("%+v: want 100 sent, growth %v, fail %v", r, tc.grew, tc.fail)
			}
			if want := "at most 5 %"; !strings.Contains(r.Line(), want) {
				t.Errorf("line %q lacks %q", r.Line(), want)
			}
		})
	}
	t.Run("service down", func(t *testing.T) {
		down := httptest.NewServer(http.NotFoundHandler())
		gone := down.URL
		down.Close()
		dc := c
		dc.URL = gone + "/calls"
		arm := armCalling(t, tokens.URL, 50)
		_, err := controls.RunCounter(ctx, p, v, dc, controls.Target{Name: "head", URL: arm.URL}, 1)
		if err == nil || !strings.Contains(err.Error(), "counter exchanges: reading "+gone+"/calls for the head") {
			t.Fatalf("a token service that is down gave %v", err)
		}
	})
}
