package dpop_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/cli"
	"github.com/perfgate/perfgate/internal/dpop"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/testslot"
)

// armEnv makes this test binary a resource server that checks every DPoP
// proof it is sent against the key named by DPOP_TEST_KEY: the arm of the
// gate tests below, a real process started by the gate.
const armEnv = "DPOP_TEST_ARM"

func TestMain(m *testing.M) {
	if os.Getenv(armEnv) == "1" {
		os.Exit(serveArm())
	}
	os.Exit(m.Run())
}

func serveArm() int {
	addr := flag.String("addr", "127.0.0.1:0", "")
	flag.Parse()
	key, err := dpop.ReadKey(os.Getenv("DPOP_TEST_KEY"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	v := &dpop.Verifier{Key: &key.PublicKey, Window: 10 * time.Second}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, err := v.Verify(r.Header.Get("DPoP"), r.Method, "http://"+r.Host+r.URL.RequestURI(), r.Header.Get("Authorization")); err != nil {
			fmt.Fprintln(os.Stderr, "refused a proof:", err)
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

const gatePlan = `[vars]
ncp_token = { secret = true }

[ab]
pairs = 2
warmup = "300ms"
measure = "1500ms"
rate = 40
idle = "0s"

[[group]]
name = "summary"
path = "/fhir/Patient/$summary?identifier=x"
headers = { Authorization = "Bearer {ncp_token}" }
dpop_key_file = "dpop.pem"
expect = 200

[[group]]
name = "token"
method = "POST"
path = "/token"
dpop_key_file = "dpop.pem"
expect = 200
`

func dpopPlanDir(t *testing.T) (string, string) {
	t.Helper()
	_, keyPath := newKey(t)
	dir := filepath.Dir(keyPath)
	planPath := filepath.Join(dir, "plan.toml")
	if err := os.WriteFile(planPath, []byte(gatePlan), 0o600); err != nil {
		t.Fatal(err)
	}
	return planPath, keyPath
}

// TestMeasuredArmsVerifyEveryProof runs the A/B gate (internal/pairs)
// over two real processes that answer 401 to any proof that fails the
// resource server's checks; each arm gets proofs for its own URL.
func TestMeasuredArmsVerifyEveryProof(t *testing.T) {
	planPath, keyPath := dpopPlanDir(t)
	p, err := plan.ParseFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	vars, err := plan.ResolveVars(p, []string{"ncp_token=tok-123"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	arm := gate.ArmSpec{Command: []string{self, "--addr", "127.0.0.1:@PORT@"}, Env: []string{armEnv + "=1", "DPOP_TEST_KEY=" + keyPath}, Ready: "/healthz"}
	out := t.TempDir()
	release := testslot.Hold(t)
	// The gate's time starts with its slot: the wait for one is the
	// other gates' time, not this one's.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := gate.Run(ctx, gate.Options{Plan: p, Vars: vars, Arms: gate.Pair(arm, arm), OutDir: out, Seed: 1})
	release()
	if err != nil {
		t.Fatalf("gate run: %v", err)
	}
	answered := 0
	for _, side := range [][]judge.Phase{rep.Input.Base, rep.Input.Head} {
		for _, ph := range side {
			for _, g := range ph.Groups {
				answered += int(g.Requests)
				if len(g.WrongStatus) > 0 {
					b, _ := os.ReadFile(filepath.Join(out, "head.log"))
					t.Fatalf("pair %d, group %s: statuses %v (an arm refused proofs)\nhead log: %s", ph.Pair, g.Name, g.WrongStatus, b)
				}
			}
		}
	}
	if answered < 200 {
		t.Fatalf("only %d requests answered over both arms", answered)
	}
	// 401 as a status, not as digits of a figure ("174016.2 %").
	status401 := regexp.MustCompile(`(^|[^0-9.])401([^0-9.]|$)`)
	for _, f := range append(rep.Verdict.Failures, rep.Verdict.Notes...) {
		if status401.MatchString(f) {
			t.Fatalf("the verdict names a refused proof: %s", f)
		}
	}
}

// TestLoadCommandSendsProofs is perfgate load with a DPoP plan against the
// same verifying server, in this process.
func TestLoadCommandSendsProofs(t *testing.T) {
	t.Parallel()
	planPath, keyPath := dpopPlanDir(t)
	key, err := dpop.ReadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	v := &dpop.Verifier{Key: &key.PublicKey, Window: 10 * time.Second}
	refused := make(chan error, 1)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if _, err := v.Verify(r.Header.Get("DPoP"), r.Method, "http://"+r.Host+r.URL.RequestURI(), r.Header.Get("Authorization")); err != nil {
			select {
			case refused <- err:
			default:
			}
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	report := filepath.Join(t.TempDir(), "load.json")
	var stdout, stderr bytes.Buffer
	err = cli.RunIO(context.Background(), []string{"load", "--plan", planPath, "--target", srv, "--rate", "50", "--duration", "2s", "--warmup", "200ms", "--var", "ncp_token=tok-9", "--out", report},
		&cli.IO{Out: &stdout, Err: &stderr, Getenv: func(string) string { return "" }})
	select {
	case e := <-refused:
		t.Fatalf("the server refused a proof: %v", e)
	default:
	}
	if err != nil {
		t.Fatalf("perfgate load: exit %d: %v\n%s%s", exit.Code(err), err, stdout.String(), stderr.String())
	}
	if b, err := os.ReadFile(report); err != nil || !bytes.Contains(b, []byte(`"summary"`)) || !bytes.Contains(b, []byte(`"token"`)) {
		t.Fatalf("the load report names neither group (%v)", err)
	}
	if strings.Contains(stdout.String()+stderr.String(), "tok-9") {
		t.Fatal("the secret token was printed")
	}
}

func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	ln, err := listen()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

func listen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
