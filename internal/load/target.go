package load

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
)

// endpointFor resolves the attack's target once, so no request pays for a
// name lookup, and refuses anything but loopback: perfgate drives arms it
// started on the same runner and never sends load across a network.
func endpointFor(ctx context.Context, a *Attack, timeout time.Duration) (*endpoint, error) {
	u, err := url.Parse(a.Target)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("target %q: want a base URL such as http://127.0.0.1:8080", a.Target)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("target %q: drop the query or fragment; request paths come from the plan", a.Target)
	}
	var port string
	switch u.Scheme {
	case "http":
		port = "80"
	case "https":
		port = "443"
	default:
		return nil, fmt.Errorf("target %q: scheme must be http or https", a.Target)
	}
	if p := u.Port(); p != "" {
		port = p
	}
	host := u.Hostname()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolving target host %q: %w", host, err)
	}
	var ip net.IP
	for _, a := range ips {
		if !a.IP.IsLoopback() {
			return nil, fmt.Errorf("target host %q resolves to %s, which is not loopback: perfgate only sends load to 127.0.0.0/8 or ::1", host, a.IP)
		}
		if ip == nil {
			ip = a.IP
		}
	}
	if ip == nil {
		return nil, fmt.Errorf("target host %q resolves to no address", host)
	}
	ep := &endpoint{
		addr:    net.JoinHostPort(ip.String(), port),
		host:    u.Host,
		prefix:  strings.TrimSuffix(u.EscapedPath(), "/"),
		timeout: timeout,
	}
	if a.ServerTiming != "" && !strings.EqualFold(a.ServerTiming, "server-timing") {
		ep.timingHd = []byte(strings.ToLower(a.ServerTiming))
	}
	if u.Scheme == "https" {
		cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
		if a.CAFile != "" {
			pem, err := os.ReadFile(a.CAFile)
			if err != nil {
				return nil, fmt.Errorf("reading the CA file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("reading the CA file %s: no PEM certificate in it", a.CAFile)
			}
			cfg.RootCAs = pool
		}
		ep.tls = cfg
	} else if a.CAFile != "" {
		return nil, fmt.Errorf("a CA file was given but the target %q is not https", a.Target)
	}
	return ep, nil
}
