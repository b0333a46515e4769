package publish

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
)

// requestTimeout bounds every request to GitHub, beside the caller's
// context, so a stalled connection cannot hold a verdict forever even when
// the caller set no deadline.
const requestTimeout = 30 * time.Second

// Credentials are how perfgate signs in to GitHub: a GitHub App by its ID
// and private key (PEM), or a token. Only an App may create check runs, so
// the App is the way a verdict service publishes; a token serves the
// action's own job (its GITHUB_TOKEN) and tests. The App signs each
// repository's requests as its installation on the repository's owner,
// found through the App's installations; InstallationID pins one instead.
// Printing Credentials never shows the token or the key.
type Credentials struct {
	Token          string
	AppID          int64
	InstallationID int64 // 0: the App's installation on each owner
	PrivateKey     []byte
}

// String names the kind of credentials and never their secret part.
func (c Credentials) String() string {
	switch {
	case c.Token != "" && c.AppID == 0:
		return "GitHub token (redacted)"
	case c.AppID != 0 && c.InstallationID != 0:
		return fmt.Sprintf("GitHub App %d, installation %d (key redacted)", c.AppID, c.InstallationID)
	case c.AppID != 0:
		return fmt.Sprintf("GitHub App %d, its installation on each owner (key redacted)", c.AppID)
	}
	return "no GitHub credentials"
}

// GoString keeps %#v from printing the fields.
func (c Credentials) GoString() string { return "publish.Credentials{" + c.String() + "}" }

// check says what is missing or contradictory, naming the fields.
func (c Credentials) check() error {
	app := c.AppID != 0 || c.InstallationID != 0 || len(c.PrivateKey) > 0
	switch {
	case c.Token != "" && app:
		return errors.New("GitHub credentials: give a token or a GitHub App (ID and private key), not both")
	case c.Token != "":
		if strings.TrimSpace(c.Token) != c.Token || strings.ContainsAny(c.Token, " \n\r\t") {
			return errors.New("GitHub credentials: the token holds white space (a stray newline from a file?)")
		}
		return nil
	case !app:
		return errors.New("GitHub credentials: none given (want a GitHub App's ID and private key, or a token)")
	case c.AppID <= 0:
		return errors.New("GitHub credentials: the GitHub App's ID is missing (it is on the App's settings page)")
	case c.InstallationID < 0:
		return errors.New("GitHub credentials: the App's installation ID is not a GitHub ID (leave it out to use the App's installation on each owner)")
	case len(c.PrivateKey) == 0:
		return errors.New("GitHub credentials: the App's private key is missing (a PEM file from the App's settings page)")
	}
	return nil
}

// New builds a Client that signs in with creds, against apiURL ("" for
// api.github.com). With a token every request carries it; with an App,
// ghinstallation trades a short-lived App JWT (ten minutes at most) for an
// installation token at POST /app/installations/{id}/access_tokens, per
// owner (installations.go), and renews it a minute before it expires
// (they last an hour).
func New(creds Credentials, apiURL string) (*Client, error) {
	if err := creds.check(); err != nil {
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if creds.Token != "" {
		c, err := newClient(&http.Client{Transport: transport, Timeout: requestTimeout}, apiURL)
		if err != nil {
			return nil, err
		}
		c.gh = c.gh.WithAuthToken(creds.Token)
		c.token = creds.Token
		return c, nil
	}
	apps, err := ghinstallation.NewAppsTransport(transport, creds.AppID, creds.PrivateKey)
	if err != nil {
		// ghinstallation's message says only that the PEM did not parse;
		// it never quotes the key.
		return nil, fmt.Errorf("GitHub App %d: reading its private key: %w", creds.AppID, err)
	}
	in := &installations{apps: apps, prefix: "/", pinned: creds.InstallationID}
	if apiURL != "" {
		u, err := apiBase(apiURL)
		if err != nil {
			return nil, err
		}
		// ghinstallation joins "/app/installations/..." to a base without
		// the trailing slash.
		apps.BaseURL = strings.TrimSuffix(u.String(), "/")
		in.prefix = u.Path
	}
	c, err := newClient(&http.Client{Transport: in, Timeout: requestTimeout}, apiURL)
	if err != nil {
		return nil, err
	}
	in.list = listInstallations(c.gh, creds.AppID)
	c.appID = creds.AppID
	c.installations = in
	return c, nil
}
