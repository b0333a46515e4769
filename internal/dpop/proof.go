package dpop

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/perfgate/perfgate/internal/redact"
)

// Type is the proof's typ header (RFC 9449 section 4.2).
const Type = "dpop+jwt"

// Claims are a proof's claims.
type Claims struct {
	JTI string `json:"jti"`
	HTM string `json:"htm"`
	HTU string `json:"htu"`
	IAT int64  `json:"iat"`
	ATH string `json:"ath,omitempty"`
}

// Signer signs the proofs of one method and URL, bound to one access token
// or to none.
type Signer struct {
	signer   jose.Signer
	htm, htu string
	ath      string
	now      func() time.Time
}

// NewSigner returns a signer of ES256 proofs by key for requests with
// method htm to htu (RFC 9449 section 4.2: the URL without its query and
// fragment). token is the access token the proofs bind to; "" binds none.
func NewSigner(key *ecdsa.PrivateKey, htm, htu, token string) (*Signer, error) {
	u, err := HTU(htu)
	if err != nil {
		return nil, err
	}
	opts := (&jose.SignerOptions{EmbedJWK: true}).WithType(Type)
	js, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, opts)
	if err != nil {
		return nil, fmt.Errorf("making the DPoP signer: %w", err)
	}
	s := &Signer{signer: js, htm: htm, htu: u, now: time.Now}
	if token != "" {
		s.ath = TokenHash(token)
	}
	return s, nil
}

// HTU is the htu claim of a request URL: scheme, host and path, without the
// query and fragment a server does not compare.
func HTU(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url's own message quotes raw whole, its password too.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("making the DPoP htu of %q: %w", redact.URL(raw), err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("making the DPoP htu of %q: it is not an http or https URL", redact.URL(raw))
	}
	u.RawQuery, u.Fragment, u.RawFragment, u.User = "", "", "", nil
	u.ForceQuery = false
	return u.String(), nil
}

// TokenHash is the ath claim of an access token: the base64url SHA-256 of
// its ASCII form.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Sign makes one proof: a fresh jti and the current time.
func (s *Signer) Sign() (string, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", fmt.Errorf("drawing a DPoP jti: %w", err)
	}
	c := Claims{JTI: base64.RawURLEncoding.EncodeToString(id[:]), HTM: s.htm, HTU: s.htu, IAT: s.now().Unix(), ATH: s.ath}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encoding DPoP claims: %w", err)
	}
	obj, err := s.signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("signing a DPoP proof: %w", err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		return "", fmt.Errorf("serialising a DPoP proof: %w", err)
	}
	return out, nil
}

// Scheme rewrites an Authorization header value to the DPoP scheme: a
// "Bearer <token>" or "DPoP <token>" value gives "DPoP <token>" and the
// token. Any other value is refused, since a proof binds to one token.
func Scheme(authorization string) (header, token string, err error) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(authorization), " ")
	tok = strings.TrimSpace(tok)
	if !ok || tok == "" || !strings.EqualFold(scheme, "Bearer") && !strings.EqualFold(scheme, "DPoP") {
		return "", "", fmt.Errorf("the Authorization header is not \"Bearer <token>\" or \"DPoP <token>\"")
	}
	return "DPoP " + tok, tok, nil
}
