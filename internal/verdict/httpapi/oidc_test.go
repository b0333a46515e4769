package httpapi_test

import (
	"crypto/rand"
	"crypto/rsa"
	"strconv"
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
	run := int64(0)
	// with is the claims of a token for this case's run, changed.
	with := func(change func(c map[string]any)) map[string]any {
		c := is.Claims()
		c["run_id"] = strconv.FormatInt(run, 10)
		change(c)
		return c
	}
	same := func(map[string]any) {}
	for _, tc := range []struct {
		name   string
		token  func() string
		status int
		want   string
	}{
		{"accepted", func() string { return oidctest.Sign(t, is.Key, with(same)) }, 201, `"created":true`},
		{"wrong audience", func() string {
			return oidctest.Sign(t, is.Key, with(func(c map[string]any) { c["aud"] = "someone-else" }))
		}, 401, "audience"},
		{"repository not on the allow-list", func() string {
			return oidctest.Sign(t, is.Key, with(func(c map[string]any) { c["repository_id"] = "5151"; c["repository"] = "mallory/api" }))
		}, 403, "--allow-repo mallory/api=5151"},
		{"a renamed repository keeps its id", func() string {
			return oidctest.Sign(t, is.Key, with(func(c map[string]any) { c["repository"] = "acme/api-renamed" }))
		}, 201, `"created":true`},
		{"allowed id, but another repository's attempt", func() string {
			return oidctest.Sign(t, is.Key, with(func(c map[string]any) { c["repository_id"] = "99" }))
		}, 403, "for acme/other, not acme/api"},
		{"expired", func() string {
			return oidctest.Sign(t, is.Key, with(func(c map[string]any) {
				c["exp"] = time.Now().Add(-time.Minute).Unix()
				c["iat"] = time.Now().Add(-10 * time.Minute).Unix()
			}))
		}, 401, "expired"},
		{"unsigned", func() string { return oidctest.Unsigned(t, with(same)) }, 401, "does not verify"},
		{"signed by another key", func() string { return oidctest.Sign(t, other, with(same)) }, 401, "does not verify"},
		{"another issuer", func() string {
			return oidctest.Sign(t, is.Key, with(func(c map[string]any) { c["iss"] = "https://token.actions.githubusercontent.com" }))
		}, 401, "does not verify"},
		{"no repository_id", func() string {
			return oidctest.Sign(t, is.Key, with(func(c map[string]any) { delete(c, "repository_id") }))
		}, 403, "repository_id"},
	} {
		run++
		token := tc.token()
		got := a.do(t, "POST", "/v1/attempts", token, submission(t, run, 1, 0))
		if got.status != tc.status || !strings.Contains(got.raw, tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, got.status, got.raw, tc.status, tc.want)
		}
		if strings.Contains(got.raw, token) {
			t.Errorf("%s: the answer echoes the token", tc.name)
		}
	}
}

func TestWorkflowMatches(t *testing.T) {
	for _, tc := range []struct {
		workflows []string
		ref       string
		want      bool
	}{
		{httpapi.DefaultWorkflows, "perfgate/perfgate/.github/workflows/perf.yml@refs/tags/v1", true},
		{httpapi.DefaultWorkflows, "perfgate/perfgate/.github/workflows/perf.yml@0123456789abcdef0123456789abcdef01234567", true},
		{httpapi.DefaultWorkflows, "PerfGate/PerfGate/.github/workflows/perf.yml@refs/heads/main", true},
		{httpapi.DefaultWorkflows, "acme/api/.github/workflows/perf.yml@refs/heads/main", true},
		{httpapi.DefaultWorkflows, "acme/api/.github/workflows/evil.yml@refs/heads/main", false},
		{httpapi.DefaultWorkflows, "mallory/api/.github/workflows/perf.yml@refs/heads/main", false},
		{httpapi.DefaultWorkflows, "perfgate/perfgate/.github/workflows/perf.yml", false},
		{httpapi.DefaultWorkflows, "", false},
		{[]string{"perfgate/perfgate/.github/workflows/perf.yml@refs/tags/*"}, "perfgate/perfgate/.github/workflows/perf.yml@refs/tags/v1.2.0", true},
		{[]string{"perfgate/perfgate/.github/workflows/perf.yml@refs/tags/*"}, "perfgate/perfgate/.github/workflows/perf.yml@refs/heads/main", false},
		{[]string{"perfgate/perfgate/.github/workflows/perf.yml@refs/tags/v1"}, "perfgate/perfgate/.github/workflows/perf.yml@refs/tags/v1", true},
		{[]string{"perfgate/perfgate/.github/workflows/perf.yml@refs/tags/v1"}, "perfgate/perfgate/.github/workflows/perf.yml@refs/tags/v10", false},
	} {
		if got := httpapi.WorkflowMatches(tc.workflows, "acme/api", tc.ref); got != tc.want {
			t.Errorf("WorkflowMatches(%v, %q) = %v, want %v", tc.workflows, tc.ref, got, tc.want)
		}
	}
}

// TestRelayNeedsGitHub: a relay's token posts another run's attempts only
// when the service can check them against GitHub's record of that run,
// and only on workflow_run.
func TestRelayNeedsGitHub(t *testing.T) {
	is := oidctest.New(t)
	a := newAPI(t, func(auth *httpapi.Auth, _ *httpapi.Options) {
		auth.OIDC = &httpapi.OIDC{Issuer: is.URL, Audience: "perfgate-verdictd", Allow: map[int64]string{4242: "acme/api"}}
	})
	relay := func(event string) string {
		c := is.Claims()
		c["event_name"], c["run_id"] = event, "8001"
		c["job_workflow_ref"] = "acme/api/.github/workflows/perf-relay.yml@refs/heads/main"
		return oidctest.Sign(t, is.Key, c)
	}
	for _, tc := range []struct {
		name, token, want string
	}{
		{"a relay without GitHub credentials", relay("workflow_run"), "give the service GitHub App credentials"},
		{"the relay's workflow on another event", relay("push"), "is not a workflow that may post attempts"},
	} {
		got := a.do(t, "POST", "/v1/attempts", tc.token, submission(t, 7001, 1, 0))
		if got.status != 403 || !strings.Contains(got.raw, tc.want) {
			t.Errorf("%s: %d %s, want 403 with %q", tc.name, got.status, got.raw, tc.want)
		}
	}
}
