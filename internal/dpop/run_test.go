package dpop_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/dpop"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

// A plan of FerroFED's contact-point groups: the treatment token and the
// emergency token, both bound to one DPoP key, beside a group that sends
// no proof, and a proof bound to no token.
const dpopPlan = `[vars]
ncp_token = { secret = true }
ncp_emergency_token = { secret = true }

[data.patient]
file = "patients.txt"
exhausted = "reshuffle"

[[group]]
name = "contact-point-summary"
path = "/fhir/Patient/$summary?identifier=urn:oid:2.999.1.1%%7C{patient}"
headers = { Authorization = "Bearer {ncp_token}", ncp-correlation-id = "perf" }
dpop_key_file = "%s"
expect = 200

[[group]]
name = "contact-point-emergency"
method = "POST"
path = "/fhir/Patient/$summary?identifier=urn:oid:2.999.1.1%%7C{patient}&emergency=1"
headers = { Authorization = "DPoP {ncp_emergency_token}" }
dpop_key_file = "%s"
expect = 200

[[group]]
name = "token-endpoint"
method = "POST"
path = "/token"
dpop_key_file = "%s"
expect = 200

[[group]]
name = "plain"
path = "/metadata"
expect = 200
`

// TestEveryProofVerifies drives a real attack from a parsed plan at a real
// server that checks every proof as a resource server does: signature by
// the plan's key, htm, htu, a jti never repeated, iat fresh and ath.
func TestEveryProofVerifies(t *testing.T) {
	t.Parallel()
	key, keyPath := newKey(t)
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.toml")
	rel, err := filepath.Rel(dir, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(dpopPlan, rel, keyPath, rel)
	if err := os.WriteFile(planPath, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "patients.txt"), []byte("ffd-test-0001\nffd-test-0002\nffd-test-0003\nffd-test-0004\nffd-test-0005\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := plan.ParseFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	v, err := plan.ResolveVars(p, []string{"ncp_token=treat-123", "ncp_emergency_token=emerg-456"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}

	verifier := &dpop.Verifier{Key: &key.PublicKey, Window: 10 * time.Second}
	var mu sync.Mutex
	verified := map[string]int{}
	var refused []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proof := r.Header.Get("DPoP")
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/metadata" {
			if proof != "" || r.Header.Get("Authorization") != "" {
				refused = append(refused, "the plain group carried DPoP headers")
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			verified["plain"]++
			return
		}
		auth := r.Header.Get("Authorization")
		c, err := verifier.Verify(proof, r.Method, "http://"+r.Host+r.URL.RequestURI(), auth)
		if err == nil {
			switch {
			case r.URL.Path == "/token" && c.ATH != "":
				err = fmt.Errorf("the token endpoint's proof is bound to a token")
			case r.URL.Query().Has("emergency") && auth != "DPoP emerg-456":
				err = fmt.Errorf("the emergency group sent %q", auth)
			case r.URL.Path != "/token" && !r.URL.Query().Has("emergency") && auth != "DPoP treat-123":
				err = fmt.Errorf("the summary group sent %q", auth)
			case r.URL.Path != "/token" && !r.URL.Query().Has("emergency") && r.Header.Get("ncp-correlation-id") != "perf":
				err = fmt.Errorf("the plan's other headers were lost")
			}
		}
		if err != nil {
			if len(refused) < 5 {
				refused = append(refused, err.Error())
			}
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		verified[r.URL.Path]++
	}))
	t.Cleanup(srv.Close)

	src, groups, err := p.Source(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	wrapped, stop, err := p.DPoP(t.Context(), src, v, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	res, err := load.Run(t.Context(), load.Attack{
		Target: srv.URL, Source: wrapped, Groups: groups,
		Pacer: load.ConstantPacer{Freq: 100}, Warmup: 200 * time.Millisecond, Duration: 2 * time.Second,
	})
	stop()
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refused) > 0 {
		t.Fatalf("the server refused proofs: %v", refused)
	}
	total := res.Total()
	if total.Requests < 150 || total.Failures() != 0 {
		t.Fatalf("measured %d requests, %d failed", total.Requests, total.Failures())
	}
	for _, path := range []string{"/fhir/Patient/$summary", "/token", "plain"} {
		if verified[path] == 0 {
			t.Fatalf("no request reached %s verified: %v", path, verified)
		}
	}
	st := wrapped.(*dpop.Source).Stats()
	if st.Inline != 0 || st.Failed != 0 {
		t.Fatalf("signing delayed sends: %+v (a pool of %d signs ahead of 100 arrivals/s)", st, dpop.DefaultDepth)
	}
	t.Logf("verified %v; pools %+v", verified, st)
}

func TestPlanRefusesDPoPGroups(t *testing.T) {
	cases := []struct {
		name, group, want string
	}{
		{"data in the path", `path = "/p/{patient}"` + "\ndpop_key_file = \"k.pem\"", "plan.toml:11: group \"g\" sends DPoP proofs but its path draws {patient} before the query; a proof's htu is signed ahead of the send, so move {patient} into the query (path = \"/p?patient={patient}\")"},
		{"basic auth", `path = "/p"` + "\nheaders = { Authorization = \"Basic {patient_b}\" }\ndpop_key_file = \"k.pem\"", "is not \"Bearer <token>\""},
		{"data in the token", `path = "/p"` + "\nheaders = { Authorization = \"Bearer {patient}\" }\ndpop_key_file = \"k.pem\"", "its Authorization header draws {patient}"},
		{"empty", `path = "/p"` + "\ndpop_key_file = \"\"", "dpop_key_file is empty"},
		{"not a string", `path = "/p"` + "\ndpop_key_file = 3", "dpop_key_file must be a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "p.txt"), []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			src := "[vars]\npatient_b = \"x\"\n\n[data.patient]\nfile = \"p.txt\"\nexhausted = \"reshuffle\"\n[[group]]\nname = \"g\"\nexpect = 200\n" + c.group + "\n"
			_, err := plan.Parse(filepath.Join(dir, "plan.toml"), []byte(src))
			if err == nil || !strings.Contains(err.Error(), c.want) || exit.Code(err) != exit.CannotJudge {
				t.Fatalf("Parse = %v, want exit 2 and %q", err, c.want)
			}
		})
	}
	t.Run("missing key at run time", func(t *testing.T) {
		dir := t.TempDir()
		src := "[[group]]\nname = \"g\"\npath = \"/p\"\nexpect = 200\ndpop_key_file = \"nokey.pem\"\n"
		p, err := plan.Parse(filepath.Join(dir, "plan.toml"), []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if !p.HasDPoP() {
			t.Fatal("HasDPoP is false for a DPoP group")
		}
		v, _ := plan.ResolveVars(p, nil, func(string) string { return "" })
		s, _, _ := p.Source(v, 1)
		_, _, err = p.DPoP(t.Context(), s, v, "http://127.0.0.1:9")
		if err == nil || !strings.Contains(err.Error(), "plan.toml:5: group \"g\"'s DPoP key") || exit.Code(err) != exit.CannotJudge {
			t.Fatalf("DPoP = %v", err)
		}
	})
}

// TestPlanRefusesDPoPGroupsAtRunTime: what only the run can check (the
// scheme of an Authorization header that is a placeholder alone, the
// target the proofs' htu is made of) is refused with exit 2 naming the
// group and the plan line to fix, never the secret's value.
func TestPlanRefusesDPoPGroupsAtRunTime(t *testing.T) {
	_, keyPath := newKey(t)
	const secret = "c2VjcmV0cGFzcw=="
	src := `[vars]
auth = { secret = true }

[[group]]
name = "first"
path = "/a"
expect = 200

[[group]]
name = "second"
path = "/b"
headers = { Authorization = "{auth}" }
dpop_key_file = "` + keyPath + `"
expect = 200
`
	p, err := plan.Parse(filepath.Join(t.TempDir(), "plan.toml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, auth, target, want string
	}{
		{"a filled header in another scheme", "Basic " + secret, "http://127.0.0.1:9",
			`plan.toml:12: group "second" sends DPoP proofs but the Authorization header is not "Bearer <token>" or "DPoP <token>" once {auth} is filled in`},
		{"a target that is not http", "Bearer tok-42", "ftp://127.0.0.1:9",
			`plan.toml:11: group "second"'s DPoP proofs: making the DPoP htu of "ftp://127.0.0.1:9/b": it is not an http or https URL`},
		{"a filled header in the Bearer scheme", "Bearer tok-42", "http://127.0.0.1:9", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := plan.ResolveVars(p, nil, func(name string) string {
				if name == "PERFGATE_VAR_AUTH" {
					return tc.auth
				}
				return ""
			})
			if err != nil {
				t.Fatal(err)
			}
			s, _, err := p.Source(v, 1)
			if err != nil {
				t.Fatal(err)
			}
			_, stop, err := p.DPoP(t.Context(), s, v, tc.target)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("DPoP = %v", err)
				}
				stop()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || exit.Code(err) != exit.CannotJudge {
				t.Fatalf("DPoP = %v, want exit 2 and %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the refusal quotes the secret: %v", err)
			}
		})
	}
}

// TestWrapNamesTheGroup: Wrap's refusal names the group as its plan does,
// not by its index among the plan's groups.
func TestWrapNamesTheGroup(t *testing.T) {
	key, _ := newKey(t)
	for _, tc := range []struct {
		name string
		b    dpop.Binding
		want string
	}{
		{"a scheme other than Bearer or DPoP", dpop.Binding{Group: 1, Name: "second", Key: key, Method: "GET", Path: "/b", Authorization: "Basic x"},
			`binding group "second" to its DPoP key: the Authorization header is not "Bearer <token>"`},
		{"an htu that is no URL", dpop.Binding{Group: 1, Name: "second", Key: key, Method: "GET", Path: "%zz"},
			`binding group "second" to its DPoP key: making the DPoP htu`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := dpop.Wrap(t.Context(), nil, "http://127.0.0.1:9", []dpop.Binding{tc.b})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Wrap = %v, want %q", err, tc.want)
			}
		})
	}
}
