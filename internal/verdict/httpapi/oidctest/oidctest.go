package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Issuer is a test OIDC issuer on loopback: its discovery document, its
// JWKS, and tokens signed with its key, shaped like GitHub Actions'.
type Issuer struct {
	URL string
	Key *rsa.PrivateKey
}

// New starts an issuer for t, stopped in its Cleanup.
func New(t testing.TB) *Issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &Issuer{Key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": is.URL, "jwks_uri": is.URL + "/.well-known/jwks",
			"subject_types_supported": []string{"public", "pairwise"}, "response_types_supported": []string{"id_token"},
			"claims_supported":                      []string{"sub", "aud", "exp", "iat", "iss", "jti", "repository", "repository_id", "run_id", "run_attempt", "event_name", "job_workflow_ref"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/.well-known/jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	is.URL = srv.URL
	return is
}

// Workflow is the job_workflow_ref of Claims: a job of perfgate's
// reusable workflow, called at its v1 tag.
const Workflow = "perfgate/perfgate/.github/workflows/perf.yml@refs/tags/v1"

// Claims are an Actions token's, for repository acme/api (id 4242), run 1
// attempt 1 of a pull_request, from a job of Workflow, valid for five
// minutes, with an id (jti) of its own.
func (is *Issuer) Claims() map[string]any {
	now := time.Now()
	jti := make([]byte, 12)
	rand.Read(jti)
	return map[string]any{
		"iss": is.URL, "aud": "perfgate-verdictd", "sub": "repo:acme/api:pull_request",
		"iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"jti":        base64.RawURLEncoding.EncodeToString(jti),
		"repository": "acme/api", "repository_id": "4242", "repository_owner_id": "77",
		"event_name": "pull_request", "run_id": "1", "run_attempt": "1",
		"job_workflow_ref": Workflow, "workflow_ref": "acme/api/.github/workflows/perf.yml@refs/pull/42/merge",
	}
}

// Sign signs claims with key as the issuer's kid k1, RS256.
func Sign(t testing.TB, key *rsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Unsigned is a token of claims with alg none.
func Unsigned(t testing.TB, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(payload) + "."
}
