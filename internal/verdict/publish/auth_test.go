package publish

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/verdict"
)

// testAppKey makes an RSA key for a test GitHub App and returns it with
// its PEM, as GitHub's App settings page hands it out (PKCS#1).
func testAppKey(t *testing.T) (*rsa.PrivateKey, []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

func TestGitHubAppInstallationToken(t *testing.T) {
	f := newFakeGitHub(t)
	key, keyPEM := testAppKey(t)
	f.appKey, f.appID, f.installationID = &key.PublicKey, 4242, 77
	// The App's own JWT is not an installation token: the fake accepts
	// API calls only with the token it hands out.
	f.tokens = map[string]int64{}

	c, err := New(Credentials{AppID: 4242, InstallationID: 77, PrivateKey: keyPEM}, f.apiURL())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx := context.Background()
	target := prTarget("perfgate")
	// A run of the same name by another App (GITHUB_TOKEN's) is not ours
	// to update: the App makes its own and leaves that one alone.
	f.tokens[fakeToken] = actionsAppID
	if err := f.client().CheckInProgress(ctx, target); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckInProgress(ctx, target); err != nil {
		t.Fatalf("CheckInProgress as the App: %v", err)
	}
	if err := c.CheckCompleted(ctx, target, verdict.Outcome{Word: verdict.WordPass, Summary: "ok"}); err != nil {
		t.Fatalf("CheckCompleted as the App: %v", err)
	}
	runs := f.runsOn(headSHA)
	if len(runs) != 2 || runs[0].AppID != actionsAppID || runs[0].Status != "in_progress" ||
		runs[1].AppID != 4242 || runs[1].Conclusion != "success" {
		t.Errorf("runs = %+v, want the other App's left in progress and the App's own completed", runs)
	}
	for _, l := range f.callsTo("GET", "/check-runs") {
		if l.Query.Get("app_id") != "4242" && l.Query.Get("app_id") != "" {
			t.Errorf("listed with app_id %q", l.Query.Get("app_id"))
		}
	}
	if n := len(f.callsTo("POST", "/app/installations/77/access_tokens")); n != 1 {
		t.Errorf("installation token fetched %d times for 5 calls, want once (it lasts an hour)", n)
	}
	if f.tokenRequests != 1 {
		t.Errorf("token requests %d", f.tokenRequests)
	}
}

func TestGitHubAppRefusedKeyIsNotQuoted(t *testing.T) {
	f := newFakeGitHub(t)
	key, _ := testAppKey(t)
	_, otherPEM := testAppKey(t)
	f.appKey, f.appID, f.installationID = &key.PublicKey, 4242, 77
	c, err := New(Credentials{AppID: 4242, InstallationID: 77, PrivateKey: otherPEM}, f.apiURL())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	err = c.CheckInProgress(context.Background(), prTarget("perfgate"))
	if err == nil {
		t.Fatal("a JWT signed with the wrong key was accepted")
	}
	if !strings.Contains(err.Error(), "listing check runs") || !strings.Contains(err.Error(), "installation id 77") {
		t.Errorf("err = %v, want it to say what was being done and which installation", err)
	}
	if strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), string(otherPEM[40:80])) {
		t.Error("the error quotes the private key")
	}
}

func TestCredentialsRefusedAndNeverPrinted(t *testing.T) {
	_, keyPEM := testAppKey(t)
	for _, tc := range []struct {
		name  string
		creds Credentials
		want  string
	}{
		{"none", Credentials{}, "none given"},
		{"both", Credentials{Token: fakeToken, AppID: 1, InstallationID: 2, PrivateKey: keyPEM}, "not both"},
		{"token with a newline", Credentials{Token: fakeToken + "\n"}, "white space"},
		{"installation ID not an ID", Credentials{AppID: 1, InstallationID: -2, PrivateKey: keyPEM}, "installation ID is not a GitHub ID"},
		{"app without key", Credentials{AppID: 1, InstallationID: 2}, "private key is missing"},
		{"installation without app", Credentials{InstallationID: 2, PrivateKey: keyPEM}, "App's ID is missing"},
		{"key that is not PEM", Credentials{AppID: 1, InstallationID: 2, PrivateKey: []byte("not a key")}, "reading its private key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.creds, "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
	for _, creds := range []Credentials{{Token: fakeToken}, {AppID: 1, InstallationID: 2, PrivateKey: keyPEM}} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			out := fmt.Sprintf(verb, creds)
			if strings.Contains(out, fakeToken) || strings.Contains(out, "PRIVATE") || strings.Contains(out, string(keyPEM[40:80])) {
				t.Errorf("%s printed a secret: %s", verb, out)
			}
		}
	}
}

func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	_, keyPEM := testAppKey(t)
	keyFile := filepath.Join(dir, "app.pem")
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // "" for success
	}{
		{"token", map[string]string{EnvToken: fakeToken + "\n"}, ""},
		{"app", map[string]string{EnvAppID: "4242", EnvInstallationID: "77", EnvAppKeyFile: keyFile}, ""},
		{"enterprise server", map[string]string{EnvToken: fakeToken, EnvAPIURL: "https://ghe.example.com/api/v3"}, ""},
		{"nothing", map[string]string{}, "no GitHub credentials"},
		{"app ID not a number", map[string]string{EnvAppID: "my-app", EnvInstallationID: "77", EnvAppKeyFile: keyFile}, EnvAppID + `: "my-app" is not a GitHub ID`},
		{"missing key file", map[string]string{EnvAppID: "4242", EnvInstallationID: "77", EnvAppKeyFile: filepath.Join(dir, "gone.pem")}, EnvAppKeyFile + ": reading"},
		{"an App without an installation ID: its installation on each owner", map[string]string{EnvAppID: "4242", EnvAppKeyFile: keyFile}, ""},
		{"API address not a URL", map[string]string{EnvToken: fakeToken, EnvAPIURL: "ghe.example.com"}, "not an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FromEnv(SettingsFromEnv(func(k string) string { return tc.env[k] }))
			if tc.want == "" {
				if err != nil || c == nil {
					t.Fatalf("FromEnv: %v", err)
				}
				if u := tc.env[EnvAPIURL]; u != "" && c.gh.BaseURL.String() != u+"/" {
					t.Errorf("API address %s, want %s/", c.gh.BaseURL, u)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), fakeToken) || strings.Contains(err.Error(), "PRIVATE") {
				t.Error("the error quotes a secret")
			}
			if tc.name == "nothing" && !errors.Is(err, ErrNoCredentials) {
				t.Error("not ErrNoCredentials")
			}
		})
	}
}

// An API address that does not parse is named without its user part.
func TestNewRefusesABadAPIAddressWithoutQuotingAPassword(t *testing.T) {
	_, err := New(Credentials{Token: fakeToken}, "https://u:pa@ss%zz-s3cret@ghe.example.com/api/v3/")
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "ghe.example.com") {
		t.Errorf("New: %v; want a refusal naming the host, without the password", err)
	}
}
