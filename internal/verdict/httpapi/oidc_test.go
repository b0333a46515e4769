package httpapi_test

import (
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/verdict/httpapi"
	"github.com/perfgate/perfgate/internal/verdict/httpapi/oidctest"
)

func TestOIDCWrites(t *testing.T) {
	is := oidctest.New(t)
	a := newAPI(t, func(auth *httpapi.Auth, _ *httpapi.Options) {
		auth.OIDC = &httpapi.OIDC{Issuer: is.URL, Audience: "perfgate-verdictd", Allow: map[int64]string{4242: "acme/api", 99: "acme/other"}}
	})
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	with := func(change func(c map[string]any)) map[string]any {
		c := is.Claims()
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
		{"accepted", oidctest.Sign(t, is.Key, is.Claims()), 201, `"created":true`},
		{"wrong audience", oidctest.Sign(t, is.Key, with(func(c map[string]any) { c["aud"] = "someone-else" })), 401, "audience"},
		{"repository not on the allow-list", oidctest.Sign(t, is.Key, with(func(c map[string]any) { c["repository_id"] = "5151"; c["repository"] = "mallory/api" })), 403, "--allow-repo mallory/api=5151"},
		{"a renamed repository keeps its id", oidctest.Sign(t, is.Key, with(func(c map[string]any) { c["repository"] = "acme/api-renamed" })), 201, `"created":true`},
		{"allowed id, but another repository's attempt", oidctest.Sign(t, is.Key, with(func(c map[string]any) { c["repository_id"] = "99" })), 403, "for acme/other, not acme/api"},
		{"expired", oidctest.Sign(t, is.Key, with(func(c map[string]any) {
			c["exp"] = time.Now().Add(-time.Minute).Unix()
			c["iat"] = time.Now().Add(-10 * time.Minute).Unix()
		})), 401, "expired"},
		{"unsigned", oidctest.Unsigned(t, is.Claims()), 401, "does not verify"},
		{"signed by another key", oidctest.Sign(t, other, is.Claims()), 401, "does not verify"},
		{"another issuer", oidctest.Sign(t, is.Key, with(func(c map[string]any) { c["iss"] = "https://token.actions.githubusercontent.com" })), 401, "does not verify"},
		{"no repository_id", oidctest.Sign(t, is.Key, with(func(c map[string]any) { delete(c, "repository_id") })), 403, "repository_id"},
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
