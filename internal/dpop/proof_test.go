package dpop_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/dpop"
)

func TestProofVerifies(t *testing.T) {
	key, path := newKey(t)
	read, err := dpop.ReadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !read.Equal(key) {
		t.Fatal("ReadKey returned another key")
	}
	s, err := dpop.NewSigner(read, "GET", "http://127.0.0.1:8080/fhir/Patient/$summary?identifier=x#f", "tok-1")
	if err != nil {
		t.Fatal(err)
	}
	proof, err := s.Sign()
	if err != nil {
		t.Fatal(err)
	}
	v := &dpop.Verifier{Key: &key.PublicKey, Window: 10 * time.Second}
	c, err := v.Verify(proof, "GET", "http://127.0.0.1:8080/fhir/Patient/$summary?identifier=other", "DPoP tok-1")
	if err != nil {
		t.Fatalf("a fresh proof was refused: %v", err)
	}
	if c.HTU != "http://127.0.0.1:8080/fhir/Patient/$summary" || c.HTM != "GET" || c.ATH != dpop.TokenHash("tok-1") || len(c.JTI) < 16 {
		t.Fatalf("claims %+v", c)
	}
	if d := time.Since(time.Unix(c.IAT, 0)); d < -time.Second || d > 2*time.Second {
		t.Fatalf("iat %d is not now", c.IAT)
	}
}

// TestVerifierRefuses shows that the test server's checks catch each way a
// proof can be wrong, so a run whose every proof passed them sent good ones.
func TestVerifierRefuses(t *testing.T) {
	key, _ := newKey(t)
	other, _ := newKey(t)
	sign := func(k *ecdsa.PrivateKey, htm, htu, tok string) string {
		s, err := dpop.NewSigner(k, htm, htu, tok)
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Sign()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const u = "http://127.0.0.1:9/a"
	good := sign(key, "GET", u, "tok")
	cases := []struct {
		name, proof, method, url, auth, want string
		now                                  time.Time
	}{
		{"wrong method", good, "POST", u, "DPoP tok", "htm", time.Time{}},
		{"wrong URL", good, "GET", "http://127.0.0.1:9/b", "DPoP tok", "htu", time.Time{}},
		{"wrong port", good, "GET", "http://127.0.0.1:10/a", "DPoP tok", "htu", time.Time{}},
		{"other token", good, "GET", u, "DPoP tok2", "ath", time.Time{}},
		{"bearer scheme", good, "GET", u, "Bearer tok", "scheme", time.Time{}},
		{"no token", good, "GET", u, "", "ath", time.Time{}},
		{"old", good, "GET", u, "DPoP tok", "iat", time.Now().Add(time.Minute)},
		{"from the future", good, "GET", u, "DPoP tok", "iat", time.Now().Add(-time.Minute)},
		{"other key", sign(other, "GET", u, "tok"), "GET", u, "DPoP tok", "expected key", time.Time{}},
		{"tampered", good[:len(good)-4] + "AAAA", "GET", u, "DPoP tok", "signature", time.Time{}},
		{"not a JWS", "abc", "GET", u, "DPoP tok", "parsing", time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := &dpop.Verifier{Key: &key.PublicKey, Window: 10 * time.Second}
			if !c.now.IsZero() {
				v.Now = func() time.Time { return c.now }
			}
			_, err := v.Verify(c.proof, c.method, c.url, c.auth)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Verify = %v, want an error about %s", err, c.want)
			}
		})
	}
	t.Run("replayed jti", func(t *testing.T) {
		v := &dpop.Verifier{Key: &key.PublicKey}
		if _, err := v.Verify(good, "GET", u, "DPoP tok"); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(good, "GET", u, "DPoP tok"); err == nil || !strings.Contains(err.Error(), "used before") {
			t.Fatalf("a replay gave %v", err)
		}
	})
}

func TestReadKeyRefuses(t *testing.T) {
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalECPrivateKey(p384)
	key, _ := newKey(t)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(key)
	cases := []struct {
		name, body, want string
	}{
		{"not PEM", "hello", "no PEM block"},
		{"a certificate", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}})), "not a private key"},
		{"P-384", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})), "not a P-256 key"},
		{"PKCS 8 P-256", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "k.pem")
			if err := os.WriteFile(path, []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := dpop.ReadKey(path)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ReadKey = %v, want %q", err, c.want)
			}
		})
	}
	if _, err := dpop.ReadKey(filepath.Join(t.TempDir(), "missing.pem")); err == nil {
		t.Fatal("a missing key file was read")
	}
}

func TestPoolServesAheadAndStops(t *testing.T) {
	key, _ := newKey(t)
	s, err := dpop.NewSigner(key, "GET", "http://127.0.0.1:9/a", "")
	if err != nil {
		t.Fatal(err)
	}
	p := dpop.Start(t.Context(), s, 8, time.Minute)
	seen := map[string]bool{}
	for range 8 {
		proof, err := p.Take()
		if err != nil {
			t.Fatal(err)
		}
		if seen[proof] {
			t.Fatal("the pool handed out one proof twice")
		}
		seen[proof] = true
	}
	p.Stop()
	p.Stop() // twice is fine
	st := p.Stats()
	if st.Inline != 0 || st.Signed < 8 {
		t.Fatalf("8 takes from a filled pool of 8: %+v", st)
	}
	// Once stopped, a drained pool still serves, by signing on the spot.
	for range 32 {
		if _, err := p.Take(); err != nil {
			t.Fatal(err)
		}
	}
	if p.Stats().Inline == 0 {
		t.Fatal("a stopped, drained pool reported no proof signed on the spot")
	}
}

func TestPoolDropsStaleProofs(t *testing.T) {
	key, _ := newKey(t)
	s, err := dpop.NewSigner(key, "GET", "http://127.0.0.1:9/a", "")
	if err != nil {
		t.Fatal(err)
	}
	p := dpop.Start(t.Context(), s, 4, 50*time.Millisecond)
	t.Cleanup(p.Stop)
	time.Sleep(120 * time.Millisecond)
	if _, err := p.Take(); err != nil {
		t.Fatal(err)
	}
	if p.Stats().Stale == 0 {
		t.Fatal("proofs older than the pool's age limit were handed out")
	}
}

// A request URL that does not parse is named without its user part: url's
// own message quotes the URL whole, password and all.
func TestHTURefusesWithoutQuotingAPassword(t *testing.T) {
	for _, raw := range []string{"http://u:pa@ss%zz-s3cret@127.0.0.1:8080/x", "ftp://u:s3cret@127.0.0.1/x"} {
		_, err := dpop.HTU(raw)
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("HTU(%q): %v; want a refusal naming the host, without the password", raw, err)
		}
	}
}
