package dpop

import (
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Verifier checks proofs the way a resource server does (RFC 9449
// section 4.3): one ES256 signature by the key in the jwk header, typ
// dpop+jwt, htm and htu matching the request, iat within Window of now, a
// jti never seen before, and ath matching the DPoP token. Tests and the
// example service use it to check what perfgate sends.
type Verifier struct {
	Window time.Duration    // iat may be this far from now; 0 means 60 s
	Key    *ecdsa.PublicKey // when set, the jwk must be this key
	Now    func() time.Time // nil means time.Now
	mu     sync.Mutex
	seen   map[string]bool
}

// Verify checks the proof sent with a request of method to url (its query
// is ignored) carrying authorization (the Authorization header, "" when
// none) and returns the proof's claims.
func (v *Verifier) Verify(proof, method, url, authorization string) (Claims, error) {
	var c Claims
	jws, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return c, fmt.Errorf("parsing the proof: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return c, errors.New("the proof does not carry exactly one signature")
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != Type {
		return c, fmt.Errorf("the proof's typ is %q, not %q", typ, Type)
	}
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return c, errors.New("the proof carries no public jwk header")
	}
	if v.Key != nil {
		pub, ok := h.JSONWebKey.Key.(*ecdsa.PublicKey)
		if !ok || !pub.Equal(v.Key) {
			return c, errors.New("the proof's jwk is not the expected key")
		}
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		return c, fmt.Errorf("verifying the proof's signature: %w", err)
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return c, fmt.Errorf("decoding the proof's claims: %w", err)
	}
	if c.HTM != method {
		return c, fmt.Errorf("htm is %q, the request's method %q", c.HTM, method)
	}
	want, err := HTU(url)
	if err != nil {
		return c, err
	}
	if c.HTU != want {
		return c, fmt.Errorf("htu is %q, the request's URL %q", c.HTU, want)
	}
	now, window := time.Now, v.Window
	if v.Now != nil {
		now = v.Now
	}
	if window <= 0 {
		window = time.Minute
	}
	if d := now().Sub(time.Unix(c.IAT, 0)); d > window || d < -window {
		return c, fmt.Errorf("iat is %s from now, beyond %s", d.Round(time.Second), window)
	}
	switch scheme, token, _ := strings.Cut(authorization, " "); {
	case authorization == "" && c.ATH != "":
		return c, errors.New("the proof has an ath but the request carries no token")
	case authorization == "":
	case scheme != "DPoP":
		return c, fmt.Errorf("the token is sent in the %q scheme, not DPoP", scheme)
	case c.ATH != TokenHash(token):
		return c, errors.New("ath is not the hash of the request's token")
	}
	if c.JTI == "" {
		return c, errors.New("the proof has no jti")
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.seen == nil {
		v.seen = map[string]bool{}
	}
	if v.seen[c.JTI] {
		return c, fmt.Errorf("jti %q was used before", c.JTI)
	}
	v.seen[c.JTI] = true
	return c, nil
}
