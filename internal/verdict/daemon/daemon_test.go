package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/armdb/armdbtest"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report/reporttest"
	"github.com/perfgate/perfgate/internal/testbin"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/daemon"
	"github.com/perfgate/perfgate/internal/verdict/db"
	"github.com/perfgate/perfgate/internal/verdict/db/dbtest"
	"github.com/perfgate/perfgate/internal/verdict/httpapi/oidctest"
)

var binary string

// TestMain builds perfgate-verdictd once: the kill tests run it as a real
// process, so kill -9 hits a real server and its real store.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "verdictd-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if binary, err = testbin.Build(context.Background(), "github.com/perfgate/perfgate/cmd/perfgate-verdictd", dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := armdbtest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// storeArgs is the store flag of kind for t: a SQLite data folder, or a
// database of t's own on the binary's shared PostgreSQL.
func storeArgs(t *testing.T, kind string) []string {
	t.Helper()
	if kind == "postgres" {
		return []string{"--database-url", dbtest.Postgres(t)}
	}
	return []string{"--data", t.TempDir()}
}

func mintToken(t *testing.T, store []string) string {
	t.Helper()
	out, err := exec.Command(binary, append([]string{"token", "add", "acme/api"}, store...)...).Output()
	if err != nil {
		t.Fatalf("token add: %v", err)
	}
	tok := strings.TrimSpace(string(out))
	if !strings.HasPrefix(tok, "pgv_") {
		t.Fatalf("token add printed %q", out)
	}
	return tok
}

// proc is a running perfgate-verdictd.
type proc struct {
	cmd *exec.Cmd
	url string
	// exited closes when the process has ended; err is then its Wait's.
	exited chan struct{}
	err    error
	mu     sync.Mutex
	logs   bytes.Buffer
}

// log is what the process wrote to stderr so far.
func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// start runs serve with args (and env added) on a free loopback port and
// waits for its "serving" log line; the process is killed in t's Cleanup
// if still running.
func start(t *testing.T, args []string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "PERFGATE_GITHUB_TOKEN=", "PERFGATE_GITHUB_APP_ID=", "PERFGATE_GITHUB_INSTALLATION_ID=", "PERFGATE_GITHUB_APP_KEY_FILE=") // never publish from a test
	cmd.Env = append(cmd.Env, env...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); pw.Close(); close(p.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.mu.Lock()
			p.logs.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving" {
				addr <- line.Addr
			}
		}
	}()
	select {
	case a := <-addr:
		p.url = "http://" + a
	case <-p.exited:
		t.Fatalf("perfgate-verdictd exited before serving: %v\n%s", p.err, p.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("perfgate-verdictd did not serve within 30 s:\n%s", p.log())
	}
	return p
}

func body(t *testing.T, run int64) []byte {
	t.Helper()
	rep, err := json.Marshal(reporttest.Pass())
	if err != nil {
		t.Fatal(err)
	}
	c := 0
	b, err := json.Marshal(verdict.Submission{Facts: verdict.Facts{Repository: "acme/api", Event: "push",
		HeadSHA: fmt.Sprintf("%040x", run), RunID: run, RunAttempt: 1, Attempt: 1, CPUModel: "EPYC", ExitCode: &c}, Report: rep})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// killAfter is how many acknowledged attempts the burst reaches before
// the kill: enough that writes are in flight on every client.
const killAfter = 150

var client = &http.Client{Timeout: 10 * time.Second}

func post(url, token string, b []byte) (int, error) {
	req, err := http.NewRequest("POST", url+"/v1/attempts", bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// burst posts attempts from 8 clients, each a run of its own, until stop
// closes or a client's server goes away; it returns the runs acknowledged
// with a 2xx.
func burst(t *testing.T, url, token string, stop <-chan struct{}, started chan<- struct{}) []int64 {
	var mu sync.Mutex
	var acked []int64
	var wg sync.WaitGroup
	var once sync.Once
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				run := int64(1_000_000*(w+1) + i)
				code, err := post(url, token, body(t, run))
				if err != nil {
					return // the server is gone
				}
				if code/100 == 2 {
					mu.Lock()
					acked = append(acked, run)
					if len(acked) >= killAfter {
						once.Do(func() { close(started) })
					}
					mu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	once.Do(func() { close(started) })
	return acked
}

// signalDuringBurst starts a burst of ingests against p, sends sig once
// killAfter of them were acknowledged, waits for p to end (wait, when set,
// does the waiting and checks how it ended), and returns the runs
// acknowledged.
func signalDuringBurst(t *testing.T, p *proc, token string, sig syscall.Signal, wait func()) []int64 {
	t.Helper()
	stop, started := make(chan struct{}), make(chan struct{})
	var acked []int64
	got := make(chan struct{})
	go func() { acked = burst(t, p.url, token, stop, started); close(got) }()
	<-started
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if wait != nil {
		wait()
	}
	<-p.exited
	close(stop)
	<-got
	return acked
}

func checkStored(t *testing.T, url, token string, acked []int64) {
	t.Helper()
	missing := 0
	for _, run := range acked {
		req, err := http.NewRequest("GET", fmt.Sprintf("%s/v1/decision?repo=acme/api&run_id=%d&attempt=1", url, run), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged attempts are missing after the restart", missing, len(acked))
	}
}

func TestKillDuringBurstLosesNothingAcknowledged(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			store := storeArgs(t, kind)
			token := mintToken(t, store)
			p := start(t, store)
			acked := signalDuringBurst(t, p, token, syscall.SIGKILL, nil)
			if len(acked) < killAfter {
				t.Fatalf("only %d attempts were acknowledged before the kill", len(acked))
			}
			q := start(t, store)
			checkStored(t, q.url, token, acked)
			t.Logf("%s: %d attempts acknowledged before kill -9, all there after the restart", kind, len(acked))
		})
	}
}

func TestSIGTERMFinishesInFlightRequests(t *testing.T) {
	store := storeArgs(t, "sqlite")
	token := mintToken(t, store)
	p := start(t, store)
	acked := signalDuringBurst(t, p, token, syscall.SIGTERM, func() {
		select {
		case <-p.exited:
			if p.err != nil {
				t.Errorf("perfgate-verdictd exited with %v after SIGTERM, want 0\n%s", p.err, p.log())
			}
		case <-time.After(40 * time.Second):
			t.Fatal("perfgate-verdictd did not stop within 40 s of SIGTERM")
		}
	})
	q := start(t, store)
	checkStored(t, q.url, token, acked)
	if !strings.Contains(p.log(), `"msg":"stopped"`) {
		t.Errorf("no stopped line in the log:\n%s", p.log())
	}
	if strings.Contains(p.log(), token) || strings.Contains(q.log(), token) {
		t.Error("the log shows the write token")
	}
}

func TestMigrateAndFlags(t *testing.T) {
	dir := t.TempDir()
	run := func(args []string, env map[string]string) (string, string, error) {
		var out, errb bytes.Buffer
		err := daemon.Main(context.Background(), args, daemon.IO{Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }})
		return out.String(), errb.String(), err
	}
	out, _, err := run([]string{"migrate"}, map[string]string{"PERFGATE_VERDICTD_DATA": dir})
	if err != nil || !strings.Contains(out, fmt.Sprintf("schema at version %d (applied now: [1 ", db.LatestVersion())) || !strings.Contains(out, dir) {
		t.Errorf("migrate: %q, %v", out, err)
	}
	out, _, err = run([]string{"migrate", "--data", dir}, nil)
	if err != nil || !strings.Contains(out, "applied now: []") {
		t.Errorf("migrate again: %q, %v", out, err)
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"bad reads flag", []string{"serve", "--reads", "maybe"}, nil, "--reads \"maybe\""},
		{"bad env", []string{"serve"}, map[string]string{"PERFGATE_VERDICTD_LEARN_SHARE": "lots"}, "PERFGATE_VERDICTD_LEARN_SHARE=\"lots\""},
		{"allow list without audience", []string{"serve", "--allow-repo", "acme/api=12"}, nil, "--oidc-audience"},
		{"bad allow list", []string{"serve", "--allow-repo", "acme/api"}, nil, "owner/name=repository_id"},
		{"unknown command", []string{"serf"}, nil, "unknown command \"serf\""},
		{"token without repo", []string{"token", "add", "--data", dir}, nil, "is not OWNER/REPO"},
		{"bad GitHub App id", []string{"serve", "--data", dir}, map[string]string{"PERFGATE_GITHUB_APP_ID": "abc"}, "PERFGATE_GITHUB_APP_ID"},
		// Given as flags, the GitHub settings are refused by their flags'
		// names, not only by the variables that default them.
		{"bad GitHub App id flag", []string{"serve", "--data", dir, "--github-app-id", "abc"}, nil, "--github-app-id \"abc\""},
		{"bad installation id flag", []string{"serve", "--data", dir, "--github-app-id", "1", "--github-installation-id", "-3"}, nil, "--github-installation-id \"-3\""},
		{"missing App key file", []string{"serve", "--data", dir, "--github-app-id", "1", "--github-app-key", filepath.Join(dir, "none.pem")}, nil, "--github-app-key " + filepath.Join(dir, "none.pem")},
		{"stray argument", []string{"migrate", "--data", dir, "now"}, nil, "unexpected argument \"now\""},
	} {
		_, _, err := run(tc.args, tc.env)
		if err == nil || exit.Code(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (exit %d), want exit 2 naming %s", tc.name, err, exit.Code(err), tc.want)
		}
	}
}

// TestOIDCFromFlags runs serve with its own issuer as --oidc-issuer, an
// audience and an allow-list from the environment: the job's token writes
// its own run's attempt, another audience's does not, nor a token of a
// workflow --workflow leaves out.
func TestOIDCFromFlags(t *testing.T) {
	is := oidctest.New(t)
	store := storeArgs(t, "sqlite")
	p := start(t, append(store, "--oidc-issuer", is.URL, "--oidc-audience", "perfgate-verdictd",
		"--workflow", "perfgate/perfgate/.github/workflows/perf.yml@refs/tags/*"),
		"PERFGATE_VERDICTD_ALLOW_REPO=acme/api=4242")
	// claims are the token of a job of push run run (body's event).
	claims := func(run int64) map[string]any {
		c := is.Claims()
		c["event_name"], c["run_id"] = "push", strconv.FormatInt(run, 10)
		return c
	}
	if code, err := post(p.url, oidctest.Sign(t, is.Key, claims(1)), body(t, 1)); err != nil || code != 201 {
		t.Errorf("the job's OIDC token: %d, %v; want 201", code, err)
	}
	other := claims(2)
	other["aud"] = "someone-else"
	if code, err := post(p.url, oidctest.Sign(t, is.Key, other), body(t, 2)); err != nil || code != 401 {
		t.Errorf("another audience's token: %d, %v; want 401", code, err)
	}
	branch := claims(3)
	branch["job_workflow_ref"] = "perfgate/perfgate/.github/workflows/perf.yml@refs/heads/main"
	if code, err := post(p.url, oidctest.Sign(t, is.Key, branch), body(t, 3)); err != nil || code != 403 {
		t.Errorf("a token of a workflow --workflow leaves out: %d, %v; want 403", code, err)
	}
}
