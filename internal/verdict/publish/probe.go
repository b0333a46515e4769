package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v62/github"
)

// ErrCannotPublish matches (errors.Is) a Probe error that says GitHub
// refused the credentials for check runs: starting anyway would publish
// nothing, so the service refuses to start. Any other Probe error (GitHub
// unreachable, a 5xx) may pass.
var ErrCannotPublish = errors.New("these GitHub credentials cannot create check runs")

// cannotPublish is a refusal found by Probe: what GitHub said and the fix.
type cannotPublish struct{ msg string }

func (e *cannotPublish) Error() string        { return e.msg }
func (e *cannotPublish) Is(target error) bool { return target == ErrCannotPublish }

// Probe asks GitHub, without creating anything, whether the credentials
// can create check runs, and says what they are. An App must sign in
// (GET /app with its JWT), hold the checks permission for writing, and be
// installed somewhere (GET /app/installations). A token must be an
// installation's (GET /installation/repositories answers only those): a
// personal token is refused there, as GitHub refuses it every check run.
func (c *Client) Probe(ctx context.Context) (string, error) {
	if c.installations == nil {
		return c.probeToken(ctx)
	}
	app, _, err := c.gh.Apps.Get(ctx, "")
	if refusedStatus(err) {
		return "", &cannotPublish{fmt.Sprintf("GitHub refused to sign in as GitHub App %d (%v): check --github-app-id (the App's settings page shows its ID) and --github-app-key (a private key generated there, PEM)", c.appID, err)}
	}
	if err != nil {
		return "", fmt.Errorf("asking GitHub about App %d: %w", c.appID, err)
	}
	if perm := app.GetPermissions().GetChecks(); perm != "write" {
		if perm == "" {
			perm = "none"
		}
		return "", &cannotPublish{fmt.Sprintf("GitHub App %s (%d) has the checks permission %q: give it Checks: Read and write (and Actions: Read, Pull requests: Read and write) on its settings page, then accept the new permissions on each installation", app.GetSlug(), c.appID, perm)}
	}
	what := fmt.Sprintf("GitHub App %s (%d)", app.GetSlug(), c.appID)
	if id := c.installations.pinned; id != 0 {
		c.installations.mu.Lock()
		signer := c.installations.signer(id)
		c.installations.mu.Unlock()
		if _, err := signer.Token(ctx); err != nil {
			var he *ghinstallation.HTTPError
			if errors.As(err, &he) && he.Response != nil && he.Response.StatusCode/100 == 4 {
				return "", &cannotPublish{fmt.Sprintf("GitHub refused a token of installation %d of App %d (%s): check --github-installation-id, or leave it out to use the App's installation on each owner", id, c.appID, he.Response.Status)}
			}
			return "", fmt.Errorf("asking GitHub for a token of installation %d: %w", id, err)
		}
		return fmt.Sprintf("%s, installation %d", what, id), nil
	}
	owners, err := c.installations.Owners(ctx)
	if refusedStatus(err) {
		return "", &cannotPublish{fmt.Sprintf("GitHub refused to list App %d's installations: %v", c.appID, err)}
	}
	if err != nil {
		return "", err
	}
	if len(owners) == 0 {
		return "", &cannotPublish{fmt.Sprintf("GitHub App %s (%d) is installed on no account: install it on each owner whose repositories post verdicts (the App's public page, Install)", app.GetSlug(), c.appID)}
	}
	sort.Strings(owners)
	return fmt.Sprintf("%s, installed on %s", what, strings.Join(owners, ", ")), nil
}

func (c *Client) probeToken(ctx context.Context) (string, error) {
	_, _, err := c.gh.Apps.ListRepos(ctx, &github.ListOptions{PerPage: 1})
	if refusedStatus(err) {
		kind := "the token"
		for _, p := range []string{"ghp_", "github_pat_", "gho_", "ghu_"} {
			if strings.HasPrefix(c.token, p) {
				kind = "the token, a personal or user token (" + p + "...),"
			}
		}
		return "", &cannotPublish{fmt.Sprintf("%s in %s is refused by GitHub as an installation's (%v): only GitHub Apps create check runs, so every verdict would get 403. Publish as a GitHub App: --github-app-id ID --github-app-key FILE (docs/verdictd.md, \"Publishing as a GitHub App\"), and unset %s", kind, EnvToken, err, EnvToken)}
	}
	if err != nil {
		return "", fmt.Errorf("asking GitHub about the token: %w", err)
	}
	return "an installation token (it lapses within the hour: a service should sign in as the GitHub App)", nil
}

// refusedStatus says GitHub answered err with 401, 403 or 404: it
// refused, which no retry changes (a rate limit aside).
func refusedStatus(err error) bool {
	var resp *github.ErrorResponse
	if !errors.As(err, &resp) || resp.Response == nil {
		return false
	}
	switch resp.Response.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		var rl *github.RateLimitError
		var abuse *github.AbuseRateLimitError
		return !errors.As(err, &rl) && !errors.As(err, &abuse)
	}
	return false
}
