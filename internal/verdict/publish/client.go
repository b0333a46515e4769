package publish

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/perfgate/perfgate/internal/redact"
)

// Client publishes through GitHub's REST API. It is safe for concurrent use.
type Client struct {
	gh *github.Client
	// appID is the GitHub App the client signs in as (0 for a token): the
	// search for its check runs leaves out other Apps' runs of the same
	// name, which it could not update.
	appID int64
	// installations signs an App's requests per owner; nil for a token.
	installations *installations
	// token is the token signed in with, for Probe; "" for an App.
	token string
}

// newClient points go-github at apiURL ("" for api.github.com; for GitHub
// Enterprise Server "https://HOST/api/v3/") over hc, which carries the
// credentials.
func newClient(hc *http.Client, apiURL string) (*Client, error) {
	gh := github.NewClient(hc)
	if apiURL != "" {
		u, err := apiBase(apiURL)
		if err != nil {
			return nil, err
		}
		gh.BaseURL = u
	}
	return &Client{gh: gh}, nil
}

// apiBase parses the API's address; go-github resolves every path against
// it, so it must end in a slash.
func apiBase(apiURL string) (*url.URL, error) {
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("GitHub API address %q is not an http(s) URL (want for example https://api.github.com/ or https://HOST/api/v3/)", redact.URL(apiURL))
	}
	return u, nil
}
