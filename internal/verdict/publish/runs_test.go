package publish

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/verdict"
)

// TestRunLookupsSayWhatGitHubRefused: reading a run or a pull request, a
// 403 names the permission as a workflow's permissions block spells it,
// and a 404 is verdict.ErrNotFound said as both things GitHub may mean by
// it (no such run, or a repository the credentials do not see).
func TestRunLookupsSayWhatGitHubRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failure  *fakeFailure // nil: the fake answers as GitHub would
		lookup   func(c *Client) error
		notFound bool
		want     []string
	}{
		{"a run GitHub does not have", nil, readRun(99), true, []string{"GitHub has no run 99 in acme/api, or does not show acme/api to the service's credentials"}},
		{"a run without actions: read", &fakeFailure{Method: "GET", PathSuffix: "/actions/runs/5", Status: http.StatusForbidden, Fixture: "error_resource_not_accessible.json"},
			readRun(5), false, []string{"reading run 5 of acme/api", `the "actions: read" permission`}},
		{"a pull request GitHub does not have", &fakeFailure{Method: "GET", PathSuffix: "/pulls/7", Status: http.StatusNotFound, Fixture: "error_not_found.json"},
			readPR(7), true, []string{"GitHub has no pull request #7 in acme/api, or does not show acme/api"}},
		{"a pull request without pull-requests: read", &fakeFailure{Method: "GET", PathSuffix: "/pulls/7", Status: http.StatusForbidden, Fixture: "error_resource_not_accessible.json"},
			readPR(7), false, []string{"reading pull request #7 of acme/api", `the "pull-requests: read" permission`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGitHub(t)
			if tc.failure != nil {
				f.fail(*tc.failure)
			}
			err := tc.lookup(f.client())
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, verdict.ErrNotFound) != tc.notFound {
				t.Errorf("errors.Is(err, verdict.ErrNotFound) = %v, want %v: %v", !tc.notFound, tc.notFound, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), fakeToken) {
				t.Error("the error quotes the token")
			}
		})
	}
}

func readRun(id int64) func(c *Client) error {
	return func(c *Client) error { _, err := c.WorkflowRun(context.Background(), "acme", "api", id); return err }
}

func readPR(n int) func(c *Client) error {
	return func(c *Client) error {
		_, _, err := c.PullRequestHead(context.Background(), "acme", "api", n)
		return err
	}
}

// TestAppRefusedWhileListingItsInstallations: GET /app/installations is
// signed with the App's JWT, so a 401, 403 or 404 there is the App's ID or
// key refused, not a permission missing on the repository the request was
// for; the error says what to check and quotes no key.
func TestAppRefusedWhileListingItsInstallations(t *testing.T) {
	for _, tc := range []struct {
		status  int
		fixture string
	}{
		{http.StatusUnauthorized, "error_bad_credentials.json"},
		{http.StatusForbidden, "error_resource_not_accessible.json"},
		{http.StatusNotFound, "error_integration_not_found.json"},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			f := newFakeGitHub(t)
			_, keyPEM := testAppKey(t)
			// No installation named: the client finds the owner's by
			// listing the App's installations, which GitHub refuses.
			c, err := New(Credentials{AppID: 4242, PrivateKey: keyPEM}, f.apiURL())
			if err != nil {
				t.Fatal(err)
			}
			f.fail(fakeFailure{Method: "GET", PathSuffix: "/app/installations", Status: tc.status, Fixture: tc.fixture})
			err = c.CheckInProgress(context.Background(), prTarget("perfgate"))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, w := range []string{`listing check runs named "perfgate"`, "listing GitHub App 4242's installations: GitHub refused the App's JWT or knows no App 4242", "check --github-app-id", "--github-app-key"} {
				if !strings.Contains(msg, w) {
					t.Errorf("err = %v, want it to say %q", err, w)
				}
			}
			if strings.Contains(msg, "permission") {
				t.Errorf("err = %v names a permission; the App itself was refused", err)
			}
			if strings.Contains(msg, "PRIVATE KEY") || strings.Contains(msg, string(keyPEM[40:80])) {
				t.Error("the error quotes the private key")
			}
			if n := len(f.callsTo("POST", "/check-runs")); n != 0 {
				t.Errorf("%d check runs created after the App was refused", n)
			}
		})
	}
}
