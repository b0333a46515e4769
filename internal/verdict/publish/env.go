package publish

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The environment variables the verdict service reads its GitHub
// credentials from (its flags take the same values).
const (
	EnvAPIURL         = "GITHUB_API_URL" // set by GitHub Actions; "" for api.github.com
	EnvToken          = "PERFGATE_GITHUB_TOKEN"
	EnvAppID          = "PERFGATE_GITHUB_APP_ID"
	EnvInstallationID = "PERFGATE_GITHUB_INSTALLATION_ID"
	EnvAppKeyFile     = "PERFGATE_GITHUB_APP_KEY_FILE"
)

// ErrNoCredentials is what FromEnv returns when no credentials were given,
// so a service may run without publishing and say so.
var ErrNoCredentials = errors.New("no GitHub credentials given (" + EnvAppID + " and " + EnvAppKeyFile + ", or " + EnvToken + ")")

// Settings are the GitHub settings as a service's flags or environment
// give them: strings, checked here.
type Settings struct {
	APIURL         string
	Token          string
	AppID          string
	InstallationID string // optional: the App's installation on each owner is found
	AppKeyFile     string // the App's private key, a PEM file
}

// SettingsFromEnv reads the settings from the environment variables above.
func SettingsFromEnv(getenv func(string) string) Settings {
	return Settings{
		APIURL:         getenv(EnvAPIURL),
		Token:          getenv(EnvToken),
		AppID:          getenv(EnvAppID),
		InstallationID: getenv(EnvInstallationID),
		AppKeyFile:     getenv(EnvAppKeyFile),
	}
}

// FromEnv builds the Client from settings: a GitHub App's ID and key file
// (and, optionally, the one installation to use), or a token. An error names the setting to fix and never
// quotes the token or the key.
func FromEnv(s Settings) (*Client, error) {
	if s.Token == "" && s.AppID == "" && s.InstallationID == "" && s.AppKeyFile == "" {
		return nil, ErrNoCredentials
	}
	creds := Credentials{Token: strings.TrimSpace(s.Token)}
	var err error
	if creds.AppID, err = settingID(EnvAppID, s.AppID); err != nil {
		return nil, err
	}
	if creds.InstallationID, err = settingID(EnvInstallationID, s.InstallationID); err != nil {
		return nil, err
	}
	if s.AppKeyFile != "" {
		creds.PrivateKey, err = os.ReadFile(s.AppKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%s: reading the GitHub App's private key: %w", EnvAppKeyFile, err)
		}
	}
	c, err := New(creds, s.APIURL)
	if err != nil {
		return nil, fmt.Errorf("GitHub settings (%s): %w", creds, err)
	}
	return c, nil
}

// settingID parses a numeric GitHub ID; "" is 0 (not given).
func settingID(name, v string) (int64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%s: %q is not a GitHub ID (want a positive number, as the App's settings page shows it)", name, v)
	}
	return id, nil
}
