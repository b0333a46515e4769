package dpop

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/load"
)

// Binding is how one request group is sent with DPoP: its key, its
// method and path (without the query, which htu leaves out) and the
// Authorization value its plan writes ("Bearer <token>", "DPoP <token>",
// or "" for a proof bound to no token).
type Binding struct {
	Group         int    // the group's index, as load.Request.Group
	Name          string // the group's name, for messages
	Key           *ecdsa.PrivateKey
	Method, Path  string
	Authorization string
}

// Source wraps a request source: each request of a bound group goes out
// with its token in the DPoP scheme and a proof taken from the group's
// pool, as the request is handed to the engine.
type Source struct {
	inner load.Source
	bound map[int]*bound
}

type bound struct {
	pool *Pool
	auth string // "" = no Authorization header
}

// Wrap starts a pool for each binding, for requests to target (the arm's
// base URL, as load.Attack.Target), and returns the wrapping source and
// the function that stops the pools; call it once the attack returned.
func Wrap(ctx context.Context, inner load.Source, target string, bindings []Binding) (*Source, func(), error) {
	s := &Source{inner: inner, bound: map[int]*bound{}}
	stop := func() {
		for _, b := range s.bound {
			b.pool.Stop()
		}
	}
	for _, b := range bindings {
		htu := strings.TrimSuffix(target, "/") + b.Path
		var auth, token string
		if b.Authorization != "" {
			var err error
			if auth, token, err = Scheme(b.Authorization); err != nil {
				stop()
				return nil, nil, fmt.Errorf("binding group %q to its DPoP key: %w", b.Name, err)
			}
		}
		sg, err := NewSigner(b.Key, b.Method, htu, token)
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("binding group %q to its DPoP key: %w", b.Name, err)
		}
		s.bound[b.Group] = &bound{pool: Start(ctx, sg, 0, 0), auth: auth}
	}
	return s, stop, nil
}

// Next hands out the inner source's next request, with the DPoP headers
// when its group is bound. The inner source may share a group's header
// slice between requests, so a bound request gets a copy.
func (s *Source) Next(stage load.Stage) load.Request {
	req := s.inner.Next(stage)
	b := s.bound[req.Group]
	if b == nil {
		return req
	}
	h := make([]load.Header, 0, len(req.Header)+1)
	for _, x := range req.Header {
		if strings.EqualFold(x.Name, "Authorization") || strings.EqualFold(x.Name, "DPoP") {
			continue
		}
		h = append(h, x)
	}
	if b.auth != "" {
		h = append(h, load.Header{Name: "Authorization", Value: b.auth})
	}
	// A failed signature leaves the request without a proof: the server
	// answers it with a status the plan does not expect, which the run
	// counts, and Stats says why.
	if proof, err := b.pool.Take(); err == nil {
		h = append(h, load.Header{Name: "DPoP", Value: proof})
	}
	req.Header = h
	return req
}

// Notes passes on the inner source's notes (a data file that ran out),
// so the A/B runner still sees them through the wrapper.
func (s *Source) Notes() []string {
	if n, ok := s.inner.(interface{ Notes() []string }); ok {
		return n.Notes()
	}
	return nil
}

// Stats sums what every pool did.
func (s *Source) Stats() Stats {
	var t Stats
	for _, b := range s.bound {
		st := b.pool.Stats()
		t.Signed += st.Signed
		t.Inline += st.Inline
		t.Stale += st.Stale
		t.Failed += st.Failed
	}
	return t
}
