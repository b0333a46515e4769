package load

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/redact"
)

// ParseTarget checks a target's base URL before anything runs and returns
// it with its port: http or https, a host, a port a server can listen on
// (1-65535), no query or fragment, and no credentials. Its messages never
// repeat credentials, query values or a fragment (shownTarget).
func ParseTarget(raw string) (u *url.URL, port string, err error) {
	u, err = url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, "", fmt.Errorf("target %q: want a base URL such as http://127.0.0.1:8080", shownTarget(raw, nil))
	}
	shown := shownTarget(raw, u)
	if u.User != nil {
		// Credentials in the URL would be neither sent (the engine writes
		// its own requests) nor kept out of the summary and report.
		return nil, "", fmt.Errorf("target %s: the URL carries credentials (user:password@ before the host), which perfgate would neither send "+
			"nor keep secret; drop them from the URL and send them in a header with a secret variable: in the plan, "+
			"[vars] creds = { secret = true } and in each group headers = { Authorization = \"Basic {creds}\" }", shown)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, "", fmt.Errorf("target %q: drop the query or fragment; request paths come from the plan", shown)
	}
	switch u.Scheme {
	case "http":
		port = "80"
	case "https":
		port = "443"
	default:
		return nil, "", fmt.Errorf("target %q: scheme must be http or https", shown)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, "", fmt.Errorf("target %q: port %s is not one a server can listen on; write the target's port, from 1 to 65535, e.g. http://127.0.0.1:8080", shown, p)
		}
		port = p
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, "", fmt.Errorf("target %q: the port after the colon is missing; write e.g. http://127.0.0.1:8080", shown)
	}
	return u, port, nil
}

// shownTarget is raw as ParseTarget's refusals quote it: without its user
// part, and with each query value and the fragment as redact.Mask. A query
// may carry a token (?api_key=...) that is masked elsewhere only when the
// plan declares it secret. The keys stay, so a refusal still names the
// parameter to drop. u is raw parsed, nil when it did not parse.
func shownTarget(raw string, u *url.URL) string {
	if u != nil {
		v := *u
		v.User = nil
		v.RawQuery = maskQuery(u.RawQuery)
		if u.Fragment != "" {
			v.Fragment, v.RawFragment = redact.Mask, ""
		}
		return v.String()
	}
	// Unparsed, the parts are a guess. redact.URL takes what lies before
	// the last '@' as a user part, as a password may hold a '?' or a '#';
	// an '@' past the first of those may as well sit in a query value, so
	// then everything after the scheme is masked.
	i := strings.IndexAny(raw, "?#")
	if i < 0 {
		return redact.URL(raw)
	}
	if strings.Contains(raw[i:], "@") {
		if k := strings.Index(raw, "//"); k >= 0 && k < i {
			return raw[:k+2] + redact.Mask
		}
		return redact.Mask
	}
	rest, frag, hasFrag := strings.Cut(raw[i:], "#")
	if hasFrag && frag != "" {
		frag = redact.Mask
	}
	if query, ok := strings.CutPrefix(rest, "?"); ok {
		rest = "?" + maskQuery(query)
	}
	if hasFrag {
		rest += "#" + frag
	}
	return redact.URL(raw[:i]) + rest
}

// maskQuery is a raw query with each value as redact.Mask and the keys
// kept. A part with no '=' is masked whole: it may be a token itself.
func maskQuery(q string) string {
	if q == "" {
		return ""
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		if key, _, ok := strings.Cut(p, "="); ok {
			parts[i] = key + "=" + redact.Mask
		} else if p != "" {
			parts[i] = redact.Mask
		}
	}
	return strings.Join(parts, "&")
}

// endpointFor resolves the attack's target once, so no request pays for a
// name lookup, and refuses anything but loopback: perfgate drives arms it
// started on the same runner and never sends load across a network.
func endpointFor(ctx context.Context, a *Attack, timeout time.Duration) (*endpoint, error) {
	u, port, err := ParseTarget(a.Target)
	if err != nil {
		return nil, err
	}
	host := u.Hostname()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolving target host %q: %w", host, err)
	}
	var ip net.IP
	remote := a.Remote // a capacity experiment against a staging host (docs/experiment.md)
	for _, a := range ips {
		if !a.IP.IsLoopback() && !remote {
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
	hm, err := newHitMatch(a.Hit)
	if err != nil {
		return nil, err
	}
	ep.hit = hm
	masks := newSampleMasks(a.Redact) // once per attack: no wrong answer's sample builds a set
	for i, g := range a.Groups {
		am, err := newAnswerMatch(g.Answer, g.Expect, masks)
		if err != nil {
			return nil, fmt.Errorf("group %s: %w", g.Name, err)
		}
		if am != nil && ep.answers == nil {
			ep.answers = make([]*answerMatch, len(a.Groups))
		}
		if am != nil {
			ep.answers[i] = am
		}
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
