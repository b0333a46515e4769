package arms

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/redact"
)

// probe answers nil once the arm is ready.
type probe func(ctx context.Context) error

func parseReady(name, ready string) (probe, error) {
	if ready == "" {
		return nil, nil
	}
	u, err := url.Parse(ready)
	if err != nil || u.Host == "" {
		return nil, exit.Refusef("arm %s: ready probe %q is not a URL: write http://host:port/path or tcp://host:port", name, redact.URL(ready))
	}
	switch u.Scheme {
	case "http", "https":
		client := &http.Client{
			Transport: &http.Transport{
				Proxy:             nil, // the arm is local: never through a proxy
				DisableKeepAlives: true,
				// Readiness of our own arm, not trust in it: an arm serving
				// a self-signed certificate on loopback is still ready.
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
			},
		}
		return func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, ready, nil)
			if err != nil {
				return err
			}
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			if resp.StatusCode < 200 || resp.StatusCode > 299 {
				return fmt.Errorf("GET %s answered %s", ready, resp.Status)
			}
			return nil
		}, nil
	case "tcp":
		return func(ctx context.Context) error {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", u.Host)
			if err != nil {
				return err
			}
			return c.Close()
		}, nil
	}
	return nil, exit.Refusef("arm %s: ready probe %q has scheme %q: write http://, https:// or tcp://", name, ready, u.Scheme)
}

// waitReady polls the probe until it passes, the arm exits, the timeout
// passes or ctx ends.
func (a *Process) waitReady(ctx context.Context, p probe) error {
	if p == nil {
		select {
		case <-a.exited:
			return a.earlyExit()
		default:
			return ctx.Err()
		}
	}
	deadline := time.Now().Add(a.spec.ReadyTimeout)
	wait := 20 * time.Millisecond
	var last error
	for {
		attempt, cancel := context.WithDeadline(ctx, minTime(deadline, time.Now().Add(2*time.Second)))
		err := p(attempt)
		cancel()
		if err == nil {
			return nil
		}
		// An attempt cut short by the overall deadline says less than the
		// answer before it (a 503, a refused connection).
		if last == nil || !errors.Is(err, context.DeadlineExceeded) {
			last = err
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return exit.Refusef("arm %s did not get ready within %s (%s: %v); last lines of its log %s:\n%s",
				a.spec.Name, a.spec.ReadyTimeout, a.spec.Ready, last, a.logPath, indent(a.LogTail(20)))
		}
		t := time.NewTimer(min(wait, remaining))
		select {
		case <-a.exited:
			t.Stop()
			return a.earlyExit()
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for arm %s to get ready: %w", a.spec.Name, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}

func (a *Process) earlyExit() error {
	if err := a.exitError("before it was ready"); err != nil {
		return err
	}
	return exit.Refusef("arm %s exited before it was ready", a.spec.Name)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
