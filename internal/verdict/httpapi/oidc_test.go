package httpapi_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/perfgate/perfgate/internal/verdict/httpapi"
)

// issuer is a test OIDC issuer on loopback: its discovery document, its
// JWKS, and tokens signed with its key, shaped like GitHub Actions'.
type issuer struct {
	url string
	key *rsa.PrivateKey
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": is.url, "jwks_uri": is.url + "/.well-known/jwks",
			"subject_types_supported": []string{"public", "pairwise"}, "response_types_supported": []string{"id_token"},
			"claims_supported":                      []string{"sub", "aud", "exp", "iat", "iss", "repository", "repository_id"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/.well-known/jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	is.url = srv.URL
	return is
}

// claims are an Actions token's, for repository acme/api (id 4242).
func (is *issuer) claims() map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": is.url, "aud": "perfgate-verdictd", "sub": "repo:acme/api:pull_request",
		"iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"repository": "acme/api", "repository_id": "4242", "repository_owner_id": "77",
		"event_name": "pull_request", "run_id": "1", "run_attempt": "1",
	}
}

func sign(t *testing.T, key *rsa.PrivateKey, claims map[string]any) string {
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

func unsigned(t *testing.T, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(payload) + "."
}

func TestOIDCWrites(t *testing.T) {
	is := newIssuer(t)
	a := newAPI(t, func(auth *httpapi.Auth, _ *httpapi.Options) {
		auth.OIDC = &httpapi.OIDC{Issuer: is.url, Audience: "perfgate-verdictd", Allow: map[int64]string{4242: "acme/api", 99: "acme/other"}}
	})
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	with := func(change func(c map[string]any)) map[string]any {
		c := is.claims()
		change(c)
		return c
	}
	run := int64(0)
	for _, tc := range []struct {
		name   string
		token  string
		status int
		want   string
	}{
		{"accepted", sign(t, is.key, is.claims()), 201, `"created":true`},
		{"wrong audience", sign(t, is.key, with(func(c map[string]any) { c["aud"] = "someone-else" })), 401, "audience"},
		{"repository not on the allow-list", sign(t, is.key, with(func(c map[string]any) { c["repository_id"] = "5151"; c["repository"] = "mallory/api" })), 403, "--allow-repo mallory/api=5151"},
		{"a renamed repository keeps its id", sign(t, is.key, with(func(c map[string]any) { c["repository"] = "acme/api-renamed" })), 201, `"created":true`},
		{"allowed id, but another repository's attempt", sign(t, is.key, with(func(c map[string]any) { c["repository_id"] = "99" })), 403, "for acme/other, not acme/api"},
		{"expired", sign(t, is.key, with(func(c map[string]any) {
			c["exp"] = time.Now().Add(-time.Minute).Unix()
			c["iat"] = time.Now().Add(-10 * time.Minute).Unix()
		})), 401, "expired"},
		{"unsigned", unsigned(t, is.claims()), 401, "does not verify"},
		{"signed by another key", sign(t, other, is.claims()), 401, "does not verify"},
		{"another issuer", sign(t, is.key, with(func(c map[string]any) { c["iss"] = "https://token.actions.githubusercontent.com" })), 401, "does not verify"},
		{"no repository_id", sign(t, is.key, with(func(c map[string]any) { delete(c, "repository_id") })), 403, "repository_id"},
	} {
		run++
		got := a.do(t, "POST", "/v1/attempts", tc.token, submission(t, run, 1, 0))
		if got.status != tc.status || !strings.Contains(got.raw, tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, got.status, got.raw, tc.status, tc.want)
		}
		if strings.Contains(got.raw, tc.token) {
			t.Errorf("%s: the answer echoes the token", tc.name)
		}
	}
}
