package armdb

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"
)

func TestRunCertsVerifyForLoopbackNames(t *testing.T) {
	c, err := newRunCerts(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(c.certPEM, c.keyPEM)
	if err != nil {
		t.Fatalf("server certificate and key do not match: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.caPEM) {
		t.Fatal("ca.pem holds no certificate")
	}
	for _, name := range []string{"127.0.0.1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool}); err != nil {
			t.Errorf("server certificate does not verify for %s: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "127.0.0.2", Roots: pool}); err == nil {
		t.Error("server certificate verifies for 127.0.0.2, which the server never listens on")
	}
	if leaf.IsCA {
		t.Error("the server certificate is a CA")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: x509.NewCertPool()}); err == nil {
		t.Error("the server certificate verified without the run's CA")
	}
}
