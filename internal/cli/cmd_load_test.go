package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/load/hostiletest"
)

const loadPlan = `[vars]
api_token = { secret = true }

[load]
rate = 40
warmup = "200ms"
duration = "1s"

[[group]]
name = "hello"
path = "/hello?x=1"
expect = 200
headers = { Authorization = "Bearer {api_token}" }

[[group]]
name = "missing"
path = "/missing"
expect = 200
`

func writePlan(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.toml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadCommand(t *testing.T) {
	const token = "s3cret-token-value"
	var authorized, other atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hello" {
			other.Add(1)
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") == "Bearer "+token && r.URL.RawQuery == "x=1" {
			authorized.Add(1)
		}
	}))
	t.Cleanup(srv.Close)
	planPath := writePlan(t, loadPlan)
	report := filepath.Join(t.TempDir(), "report.json")
	var out, errb bytes.Buffer
	err := RunIO(context.Background(), []string{"load", "--plan", planPath, "--target", srv.URL, "--rate", "60",
		"--duration", "1s", "--out", report, "--var", "api_token=" + token}, &IO{Out: &out, Err: &errb})
	if err != nil {
		t.Fatalf("perfgate load: %v\n%s%s", err, out.String(), errb.String())
	}
	if strings.Contains(out.String()+errb.String(), token) {
		t.Errorf("the secret token was printed:\n%s%s", out.String(), errb.String())
	}
	for _, want := range []string{"offered 60.0/s", "hello", "missing", "30 failed (30 unexpected status"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	f, err := os.Open(report)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := load.ReadReport(f)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Schedule.Intended != 60 || len(rep.Groups) != 2 || rep.Groups[0].Expected != 30 || rep.Groups[1].Statuses[404] != 30 {
		t.Errorf("report: schedule %+v, groups %+v", rep.Schedule, rep.Groups)
	}
	if rep.Plan != planPath || rep.WarmupS != 0.2 {
		t.Errorf("report plan %q warm-up %v, want %q and 0.2", rep.Plan, rep.WarmupS, planPath)
	}
	// Warm-up (6 of 12 arrivals) and measured (30) hello requests all
	// carried the token.
	if authorized.Load() != 36 {
		t.Errorf("%d authorized hello requests reached the target, want 36", authorized.Load())
	}
}

func TestLoadCommandRefuses(t *testing.T) {
	good := writePlan(t, loadPlan)
	bad := writePlan(t, "[load]\nrate = \"20\"\n[[group]]\nname = \"a\"\npath = \"/a\"\nexpect = 200\n")
	staged := writePlan(t, "[load]\nrate = 1\n[[load.stage]]\ntarget = 5\nduration = \"1s\"\n[[group]]\nname = \"a\"\npath = \"/a\"\nexpect = 200\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no target", []string{"--plan", good, "--var", "api_token=x"}, "--target is missing"},
		{"bad plan", []string{"--plan", bad, "--target", "http://127.0.0.1:1"}, bad + ":2:"},
		{"missing plan", []string{"--plan", filepath.Join(t.TempDir(), "nope.toml"), "--target", "http://127.0.0.1:1"}, "nope.toml:1:"},
		{"remote target", []string{"--plan", good, "--target", "http://192.0.2.7:8080", "--var", "api_token=x"}, "not loopback"},
		{"duration with stages", []string{"--plan", staged, "--target", "http://127.0.0.1:1", "--duration", "5s"}, "drop --duration"},
		{"stray argument", []string{"--plan", good, "extra"}, "unexpected argument"},
		{"port 0", []string{"--plan", good, "--target", "http://127.0.0.1:0", "--var", "api_token=x"}, "port 0 is not one a server can listen on"},
		{"port 65536", []string{"--plan", good, "--target", "http://127.0.0.1:65536", "--var", "api_token=x"}, "port 65536 is not one"},
		{"credentials in the target", []string{"--plan", good, "--target", "http://u:pw-in-url@127.0.0.1:8080", "--var", "api_token=x"},
			"carries credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := RunIO(context.Background(), append([]string{"load"}, tc.args...), &IO{Out: &out, Err: &errb})
			if exit.Code(err) != exit.CannotJudge || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 with %q", exit.Code(err), errb.String(), tc.want)
			}
			if strings.Contains(out.String()+errb.String(), "pw-in-url") {
				t.Errorf("the target's password was printed: %q", out.String()+errb.String())
			}
		})
	}
}

// TestLoadCommandNoAnswer: a run in which no request got an answer
// measured no target, so it exits 2 saying why, never 0.
func TestLoadCommandNoAnswer(t *testing.T) {
	t.Parallel()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(tlsSrv.Close)
	planPath := writePlan(t, loadPlan)
	for _, tc := range []struct {
		name, target string
		want         []string
	}{
		{"nothing listening", "http://" + hostiletest.ClosedPort(t), []string{"no request of 10 got an answer (10 x connection refused)", "nothing listens"}},
		{"https without --ca-file", tlsSrv.URL, []string{"10 x tls", "no --ca-file was given", "pass --ca-file"}},
		{"https to a plain HTTP target", strings.Replace(plain.URL, "http:", "https:", 1), []string{"10 x tls", "use http://"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := RunIO(context.Background(), []string{"load", "--plan", planPath, "--target", tc.target, "--rate", "10",
				"--duration", "1s", "--warmup", "0s", "--var", "api_token=x"}, &IO{Out: &out, Err: &errb})
			if exit.Code(err) != exit.CannotJudge {
				t.Fatalf("exit %d, want 2; stderr %q", exit.Code(err), errb.String())
			}
			for _, w := range append(tc.want, "cannot judge") {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr %q lacks %q", errb.String(), w)
				}
			}
			if !strings.Contains(out.String(), "schedule: offered 10.0/s") {
				t.Errorf("no summary printed:\n%s", out.String())
			}
		})
	}
}

// TestLoadCommandCanceled is Ctrl-C: the command stops at once, still
// prints and writes what was measured, and exits 2 (cannot judge).
func TestLoadCommandCanceled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	planPath := writePlan(t, strings.Replace(loadPlan, `duration = "1s"`, `duration = "30s"`, 1))
	report := filepath.Join(t.TempDir(), "report.json")
	ctx, cancel := context.WithCancel(context.Background())
	// Timed from when the cancel was made (a loaded machine fires the
	// timer late); the run is 30 s long, so 2 s is headroom, not a
	// tolerance, between stopping at once and not hearing the cancel.
	var canceled time.Time
	time.AfterFunc(1200*time.Millisecond, func() { canceled = time.Now(); cancel() })
	var out, errb bytes.Buffer
	err := RunIO(ctx, []string{"load", "--plan", planPath, "--target", srv.URL, "--out", report, "--var", "api_token=x"},
		&IO{Out: &out, Err: &errb, IsTerminal: true})
	if took := time.Since(canceled); took > 2*time.Second {
		t.Errorf("took %v after the cancel", took)
	}
	if exit.Code(err) != exit.CannotJudge || !strings.Contains(errb.String(), "canceled") {
		t.Errorf("exit %d, stderr %q; want exit 2 saying canceled", exit.Code(err), errb.String())
	}
	if !strings.Contains(out.String(), "canceled: partial result") {
		t.Errorf("summary does not say it is partial:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "measured") || !strings.Contains(errb.String(), "req/s") {
		t.Errorf("no progress line on a terminal: %q", errb.String())
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no partial report: %v", err)
	}
	rep, err := load.ReadReport(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("partial report: %v", err)
	}
	if !rep.Canceled || rep.Total.Requests < 20 {
		t.Errorf("partial report: canceled %v, %d requests; want canceled with about 40", rep.Canceled, rep.Total.Requests)
	}
}
