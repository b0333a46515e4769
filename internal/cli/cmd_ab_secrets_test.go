package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

// headerLoggerEnv makes this test binary an arm: an HTTP server on the
// address it names that prints every request's line and headers to stdout
// and stderr, as a service with request logging on does, and exits with
// code 1 after the number of requests in headerLoggerDieEnv (0: never).
const (
	headerLoggerEnv    = "PERFGATE_TEST_HEADER_LOGGER"
	headerLoggerDieEnv = "PERFGATE_TEST_HEADER_LOGGER_DIE_AFTER"
)

func init() {
	if addr := os.Getenv(headerLoggerEnv); addr != "" {
		os.Exit(headerLogger(addr, os.Getenv(headerLoggerDieEnv)))
	}
}

func headerLogger(addr, dieAfter string) int {
	limit, _ := strconv.ParseInt(dieAfter, 10, 64)
	var n atomic.Int64
	out := bufio.NewWriter(os.Stdout)
	logged := make(chan string, 1024)
	// An empty line asks the logger to say, by closing flushed, that every
	// line queued before it is written: the last request waits for that
	// before the exit, instead of sleeping and hoping a crowded machine
	// ran the logger meanwhile.
	flushed := make(chan struct{})
	var once sync.Once
	go func() {
		for line := range logged {
			if line == "" {
				once.Do(func() { close(flushed) })
				continue
			}
			out.WriteString(line)
			// Split a line's writes the way a buffered logger may.
			if len(line) > 12 {
				os.Stderr.WriteString(line[:12])
				os.Stderr.WriteString(line[12:])
			}
			out.Flush()
		}
	}()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.RequestURI())
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s: %s\n", k, strings.Join(r.Header[k], ", "))
		}
		logged <- b.String()
		if r.URL.Path != "/healthz" && limit > 0 && n.Add(1) >= limit {
			logged <- ""
			<-flushed
			os.Exit(1)
		}
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "header logger:", err)
		return 3
	}
	return 0
}

const secretsPlan = `[vars]
api_token = { secret = true }

[[group]]
name = "whoami"
path = "/u/{api_token}?q=1"
headers = { Authorization = "Bearer {api_token}", X-Echo = "k={api_token}" }
expect = 200
`

// TestABSecretsNeverLeak is the secrets test: both arms log every request
// header (the token in Authorization, in another header and in the path,
// where a space goes as %20), the head then dies mid-run. The run cannot be
// judged; the secret appears in no stream and in no file under the out
// folder, in any form it was sent in, while the logs still show the
// requests arrived.
func TestABSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		dieAfter int // requests the head serves before it dies; 0: never
	}{
		{"the head dies mid-run", 8},
		{"a whole run, report and summary written", 0},
	} {
		t.Run(tc.name, func(t *testing.T) { secretsRun(t, tc.dieAfter) })
	}
}

func secretsRun(t *testing.T, dieAfter int) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const secret = "tok 51c0ffee-SECRET"
	forms := []string{secret, "tok%2051c0ffee-SECRET", "tok+51c0ffee-SECRET", "51c0ffee-SECRET"}
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.toml")
	if err := os.WriteFile(planPath, []byte(secretsPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	arm := func(dieAfter int) string {
		return fmt.Sprintf("env %s=127.0.0.1:@PORT@ %s=%d %s", headerLoggerEnv, headerLoggerDieEnv, dieAfter, self)
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = RunIO(ctx, []string{"ab", "--plan", planPath, "--out", out,
		"--base-cmd", arm(0), "--head-cmd", arm(dieAfter), "--ready", "/healthz",
		"--idle", "0s", "--pairs", "1", "--warmup", "0s", "--measure", "2s", "--rate", "20"},
		&IO{Out: &stdout, Err: &stderr, Getenv: func(k string) string {
			if k == "PERFGATE_VAR_API_TOKEN" {
				return secret
			}
			return ""
		}})
	errText := ""
	if err != nil {
		errText = err.Error()
	}
	if dieAfter > 0 && exit.Code(err) != exit.CannotJudge {
		t.Fatalf("a run whose head died gave exit %d: %v\nstderr:\n%s", exit.Code(err), err, stderr.String())
	}
	streams := map[string]string{"stdout": stdout.String(), "stderr": stderr.String(), "the error": errText}
	files := 0
	werr := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		streams[path] = string(b)
		return nil
	})
	if werr != nil {
		t.Fatal(werr)
	}
	for name, text := range streams {
		for _, f := range forms {
			if strings.Contains(text, f) {
				t.Errorf("%s holds the secret as %q:\n%s", name, f, text)
			}
		}
	}
	head := streams[filepath.Join(out, "head.log")]
	if !strings.Contains(head, "Authorization: Bearer ***") || !strings.Contains(head, "GET /u/***?q=1") {
		t.Errorf("the head's log does not show the redacted requests:\n%s", head)
	}
	if dieAfter > 0 && (!strings.Contains(stderr.String(), "***") || !strings.Contains(stderr.String(), "head.log")) {
		t.Errorf("stderr does not print the head's redacted tail and its log's path:\n%s", stderr.String())
	}
	if dieAfter == 0 {
		for _, f := range []string{"latest.json", "summary.md"} {
			if _, ok := streams[filepath.Join(out, f)]; !ok {
				t.Errorf("a whole run wrote no %s (exit %d: %v)", f, exit.Code(err), err)
			}
		}
	}
	if files < 2 {
		t.Errorf("only %d files under %s; want both arms' logs", files, out)
	}
}

// TestLoadInnerErrorRedacted: an error from deep inside the load engine
// that quotes the target (here its check of the scheme) prints no secret
// the target holds.
func TestLoadInnerErrorRedacted(t *testing.T) {
	const secret = "tok-9a9a-SECRET"
	planPath := writePlan(t, loadPlan)
	var stdout, stderr bytes.Buffer
	err := RunIO(context.Background(), []string{"load", "--plan", planPath, "--target", "ftp://127.0.0.1:1/" + secret},
		&IO{Out: &stdout, Err: &stderr, Getenv: func(k string) string {
			if k == "PERFGATE_VAR_API_TOKEN" {
				return secret
			}
			return ""
		}})
	if err == nil || exit.Code(err) != exit.CannotJudge {
		t.Fatalf("an ftp target: %v", err)
	}
	for name, text := range map[string]string{"error": err.Error(), "stderr": stderr.String(), "stdout": stdout.String()} {
		if strings.Contains(text, secret) {
			t.Errorf("%s holds the secret: %s", name, text)
		}
	}
	if !strings.Contains(err.Error(), "ftp://127.0.0.1:1/***") {
		t.Errorf("the error no longer names the target: %v", err)
	}
}
