package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/verdict/daemon"
	"github.com/perfgate/perfgate/internal/verdict/httpapi/oidctest"
	"github.com/perfgate/perfgate/internal/verdict/publish/githubtest"
)

// TestStartProbesGitHub: serve asks the fake GitHub whether its
// credentials can create check runs and refuses to start (exit 2, naming
// the flag and the fix) when GitHub says they cannot.
func TestStartProbesGitHub(t *testing.T) {
	gh := githubtest.New(t, "acme")
	readOnly := githubtest.New(t, "acme")
	readOnly.ChecksPermission = "read"
	nowhere := githubtest.New(t)
	app := func(g *githubtest.GitHub) map[string]string {
		return map[string]string{"PERFGATE_GITHUB_APP_ID": strconv.Itoa(githubtest.AppID), "PERFGATE_VERDICTD_GITHUB_APP_KEY": g.KeyFile}
	}
	pinned := func(g *githubtest.GitHub, id string) map[string]string {
		env := app(g)
		env["PERFGATE_GITHUB_INSTALLATION_ID"] = id
		return env
	}
	for _, tc := range []struct {
		name string
		api  string
		env  map[string]string
		want []string
	}{
		{"a personal token", gh.URL, map[string]string{"PERFGATE_GITHUB_TOKEN": githubtest.PersonalToken},
			[]string{"personal or user token (ghp_...)", "PERFGATE_GITHUB_TOKEN", "only GitHub Apps create check runs", "--github-app-id ID --github-app-key FILE"}},
		{"a token GitHub does not know", gh.URL, map[string]string{"PERFGATE_GITHUB_TOKEN": "ghs_forgotten"},
			[]string{"PERFGATE_GITHUB_TOKEN", "401 Bad credentials"}},
		{"an App without the checks permission", readOnly.URL, app(readOnly), []string{`checks permission "read"`, "Checks: Read and write"}},
		{"an App installed nowhere", nowhere.URL, app(nowhere), []string{"installed on no account"}},
		{"an installation the App does not have", gh.URL, pinned(gh, "999"), []string{"installation 999", "--github-installation-id"}},
		{"another App's key", gh.URL, app(readOnly), []string{"refused to sign in as GitHub App", "--github-app-key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.env["GITHUB_API_URL"] = tc.api
			var errb bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := daemon.Main(ctx, []string{"serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0"},
				daemon.IO{Out: &errb, Err: &errb, Getenv: func(k string) string { return tc.env[k] }})
			if err == nil || exit.Code(err) != 2 {
				t.Fatalf("serve: %v (exit %d), want exit 2\n%s", err, exit.Code(err), errb.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), githubtest.PersonalToken) || strings.Contains(errb.String(), githubtest.PersonalToken) {
				t.Error("the refusal shows the token")
			}
		})
	}
}

// TestStartAsAnApp: an App with the checks permission, installed on two
// owners, starts and says where it publishes.
func TestStartAsAnApp(t *testing.T) {
	gh := githubtest.New(t, "acme", "beta")
	p := start(t, []string{"--data", t.TempDir(), "--github-app-id", strconv.Itoa(githubtest.AppID), "--github-app-key", gh.KeyFile},
		"GITHUB_API_URL="+gh.URL)
	if !strings.Contains(p.log(), `"as":"GitHub App perfgate-test (31337), installed on acme, beta"`) {
		t.Errorf("the start does not say it publishes as the App on both owners:\n%s", p.log())
	}
	q := start(t, []string{"--data", t.TempDir(), "--github-app-id", strconv.Itoa(githubtest.AppID), "--github-app-key", gh.KeyFile,
		"--github-installation-id", "101"}, "GITHUB_API_URL="+gh.URL)
	if !strings.Contains(q.log(), `"as":"GitHub App perfgate-test (31337), installation 101"`) {
		t.Errorf("the start does not say it publishes through installation 101:\n%s", q.log())
	}
}

// TestPersonalTokenRefusedByTheBinary: the built perfgate-verdictd,
// started with a personal token the fake GitHub refuses for check runs,
// exits 2 and says why and what to do instead.
func TestPersonalTokenRefusedByTheBinary(t *testing.T) {
	gh := githubtest.New(t, "acme")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "PERFGATE_GITHUB_TOKEN="+githubtest.PersonalToken, "GITHUB_API_URL="+gh.URL,
		"PERFGATE_GITHUB_APP_ID=", "PERFGATE_GITHUB_INSTALLATION_ID=", "PERFGATE_GITHUB_APP_KEY_FILE=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("perfgate-verdictd with a personal token: %v, want exit 2\n%s", err, stderr.String())
	}
	want := "perfgate-verdictd: publishing to GitHub: the token, a personal or user token (ghp_...), in PERFGATE_GITHUB_TOKEN is refused by GitHub as an installation's"
	if !strings.HasPrefix(stderr.String(), want) || !strings.Contains(stderr.String(), "--github-app-id ID --github-app-key FILE") {
		t.Errorf("stderr %q, want it to start %q and name the App's flags", stderr.String(), want)
	}
	if strings.Contains(stderr.String(), githubtest.PersonalToken) {
		t.Error("stderr shows the token")
	}
	t.Logf("exit 2: %s", stderr.String())
}

// TestAppKeyFlagWinsOverTheEnvironment: --github-app-key on the command
// line wins over the environment, through either of its names.
func TestAppKeyFlagWinsOverTheEnvironment(t *testing.T) {
	gh := githubtest.New(t, "acme")
	for _, name := range []string{"--github-app-key", "--github-app-key-file"} {
		env := map[string]string{"GITHUB_API_URL": gh.URL, "PERFGATE_VERDICTD_GITHUB_APP_KEY_FILE": "/nowhere.pem",
			"PERFGATE_VERDICTD_GITHUB_APP_KEY": "/nowhere.pem", "PERFGATE_GITHUB_APP_KEY_FILE": "/nowhere.pem"}
		ctx, cancel := context.WithCancel(context.Background())
		errb := &syncBuffer{}
		done := make(chan error, 1)
		go func() {
			done <- daemon.Main(ctx, []string{"serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0",
				"--github-app-id", strconv.Itoa(githubtest.AppID), name, gh.KeyFile},
				daemon.IO{Out: &bytes.Buffer{}, Err: errb, Getenv: func(k string) string { return env[k] }})
		}()
		deadline := time.After(20 * time.Second)
		for !strings.Contains(errb.String(), `"msg":"serving"`) {
			select {
			case err := <-done:
				cancel()
				t.Fatalf("%s: serve ended: %v\n%s", name, err, errb.String())
			case <-deadline:
				cancel()
				t.Fatalf("%s: serve did not start\n%s", name, errb.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// syncBuffer is a buffer the server's goroutines write while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeBindsWritesToGitHub runs the built service as a team does: an
// App on the fake GitHub, OIDC from the test's issuer. The honest attempt
// lands as a completed check on its head; the same token again, and a
// token of the run whose record names another commit, are refused and
// publish nothing.
func TestServeBindsWritesToGitHub(t *testing.T) {
	gh := githubtest.New(t, "acme")
	is := oidctest.New(t)
	head, other := fmt.Sprintf("%040x", 1), fmt.Sprintf("%040x", 0xbad)
	gh.AddRun("acme/api", githubtest.Run{ID: 1, Event: "push", HeadSHA: head, RunAttempt: 1})
	gh.AddRun("acme/api", githubtest.Run{ID: 2, Event: "push", HeadSHA: other, RunAttempt: 1})
	p := start(t, []string{"--data", t.TempDir(), "--github-app-id", strconv.Itoa(githubtest.AppID), "--github-app-key", gh.KeyFile,
		"--oidc-issuer", is.URL, "--oidc-audience", "perfgate-verdictd", "--allow-repo", "acme/api=4242"},
		"GITHUB_API_URL="+gh.URL)
	token := func(run int64) string {
		c := is.Claims()
		c["event_name"], c["run_id"] = "push", strconv.FormatInt(run, 10)
		return oidctest.Sign(t, is.Key, c)
	}
	honest := token(1)
	for _, tc := range []struct {
		name  string
		token string
		run   int64
		want  int
	}{
		{"the honest attempt", honest, 1, 201},
		{"its token replayed", honest, 1, 401},
		{"a run whose record names another commit", token(2), 2, 403},
	} {
		b := body(t, tc.run)
		if tc.run == 2 {
			b = []byte(strings.Replace(string(b), fmt.Sprintf("%040x", 2), head, 1)) // the body claims the honest commit
		}
		if code, err := post(p.url, tc.token, b); err != nil || code != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.name, code, err, tc.want)
		}
	}
	checks := gh.AllChecks()
	if len(checks) != 1 || checks[0].HeadSHA != head || checks[0].Conclusion != "success" {
		t.Errorf("checks: %+v, want one success on %s\n%s", checks, head, p.log())
	}
}
