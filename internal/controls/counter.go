package controls

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/pgdsn"
	"github.com/perfgate/perfgate/internal/plan"
)

// Target is an arm as the checks reach it: its base URL (and the CA of a
// TLS one) and the connection string of its store database ("" = none).
type Target struct {
	Name   string // "head", "variant"
	URL    string
	CAFile string
	DSN    string
}

// CounterResult is one counter on one arm (its words live with the
// judge's control rule; the report keeps it for perfgate compare).
type CounterResult = judge.CounterResult

// counterTimeout bounds each request and each count read.
const counterTimeout = 10 * time.Second

// RunCounter sends c.Requests requests of c.Group to t, one after the
// other, reading the count before and after. A request answered with a
// status the plan does not expect is an error, and so is a count that fell
// while they were sent: either way the count would not say what it claims.
// An error names the counter's plan line, where the fix is made.
func RunCounter(ctx context.Context, p *plan.Plan, v *plan.Vars, c plan.Counter, t Target, seed int64) (r CounterResult, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("%s:%d: %w", p.Path, c.Line, err)
		}
	}()
	r = CounterResult{Counter: c.Name, Arm: t.Name, MaxPerRequest: c.MaxPerRequest}
	gi := -1
	for i, g := range p.Groups {
		if g.Name == c.Group {
			gi = i
		}
	}
	if gi < 0 {
		return r, fmt.Errorf("counter %s: the plan has no group %q", c.Name, c.Group)
	}
	client, err := httpClient(t.CAFile)
	if err != nil {
		return r, err
	}
	defer client.CloseIdleConnections()
	src, _, err := p.Source(v, seed)
	if err != nil {
		return r, err
	}
	src, stop, err := p.DPoP(ctx, src, v, t.URL)
	if err != nil {
		return r, err
	}
	defer stop()
	if r.Before, err = readCount(ctx, client, c, t); err != nil {
		return r, err
	}
	expect := p.Groups[gi].Expect
	// The source hands out the plan's groups in their order; the other
	// groups' requests are drawn and not sent. The bound stops a source
	// that never gives this group (weights of zero are refused by the plan).
	for tries := 0; r.Sent < c.Requests; tries++ {
		if tries > c.Requests*(len(p.Groups)+1)*1000 {
			return r, fmt.Errorf("counter %s: the plan's source gave %d requests of group %s in %d draws", c.Name, r.Sent, c.Group, tries)
		}
		req := src.Next(load.Measured)
		if req.Group != gi {
			continue
		}
		status, err := send(ctx, client, t.URL, req)
		if err != nil {
			return r, fmt.Errorf("counter %s: request %d of group %s to the %s: %w", c.Name, r.Sent+1, c.Group, t.Name, err)
		}
		if !contains(expect, status) {
			return r, fmt.Errorf("counter %s: request %d of group %s to the %s was answered %d, which the plan does not expect (%v)", c.Name, r.Sent+1, c.Group, t.Name, status, expect)
		}
		r.Sent++
	}
	if r.After, err = readCount(ctx, client, c, t); err != nil {
		return r, err
	}
	// A growth below zero would pass any limit: a service restarted
	// between the readings, or a count of rows something deletes, says
	// nothing about these requests.
	if r.After < r.Before {
		return r, fmt.Errorf("counter %s: the count fell from %s to %s while %d requests of group %s were sent to the %s, so it does not count them; read a count that only grows, such as the service's total since it started", c.Name, num(r.Before), num(r.After), r.Sent, c.Group, t.Name)
	}
	r.Fail = r.Grew() > c.MaxPerRequest*float64(r.Sent)+1e-9
	return r, nil
}

func contains(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

func httpClient(caFile string) (*http.Client, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	if caFile != "" {
		pemData, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("reading the arm's CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemData) {
			return nil, fmt.Errorf("the arm's CA file %s holds no PEM certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: counterTimeout}, nil
}

func send(ctx context.Context, client *http.Client, base string, req load.Request) (int, error) {
	var body io.Reader
	if len(req.Body) > 0 {
		body = bytes.NewReader(req.Body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.Method, strings.TrimRight(base, "/")+req.Path, body)
	if err != nil {
		return 0, fmt.Errorf("making the request: %w", err)
	}
	for _, h := range req.Header {
		if strings.EqualFold(h.Name, "Host") {
			hr.Host = h.Value
			continue
		}
		hr.Header.Add(h.Name, h.Value)
	}
	resp, err := client.Do(hr)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, nil
}

// readCount reads the counter's count: its HTTP path on the arm, its full
// URL (another loopback service of the run, such as the token service,
// read as written whichever arm the requests went to), or its SQL query on
// the arm's store database.
func readCount(ctx context.Context, client *http.Client, c plan.Counter, t Target) (float64, error) {
	f, err := readRaw(ctx, client, c, t)
	// NaN compares false with every limit, so a count of NaN (or an
	// infinite one, whose growth is NaN) would pass the check unseen.
	if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
		from := c.URL
		if c.SQL != "" {
			from = "its sql"
		}
		return 0, fmt.Errorf("counter %s: %s gave %v for the %s, not a finite count; read a count such as 12", c.Name, from, f, t.Name)
	}
	return f, err
}

func readRaw(ctx context.Context, client *http.Client, c plan.Counter, t Target) (float64, error) {
	if c.SQL != "" {
		return sqlCount(ctx, c, t)
	}
	ctx, cancel := context.WithTimeout(ctx, counterTimeout)
	defer cancel()
	u, on := strings.TrimRight(t.URL, "/")+c.URL, "on the "+t.Name
	if !strings.HasPrefix(c.URL, "/") {
		u, on = c.URL, "for the "+t.Name
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, fmt.Errorf("counter %s: making the read of %s: %w", c.Name, c.URL, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("counter %s: reading %s %s: %w", c.Name, c.URL, on, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("counter %s: reading %s %s: %w", c.Name, c.URL, on, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("counter %s: %s %s answered %d, not 200", c.Name, c.URL, on, resp.StatusCode)
	}
	if c.Field == "" {
		f, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
		if err != nil {
			return 0, fmt.Errorf("counter %s: %s %s answered %q, not a number; name the JSON field with field = \"...\"", c.Name, c.URL, on, clip(data))
		}
		return f, nil
	}
	return jsonField(data, c)
}

// jsonField walks a dotted path ("calls.exchanges", "items.0.n") into a
// JSON answer and reads a number there.
func jsonField(data []byte, c plan.Counter) (float64, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return 0, fmt.Errorf("counter %s: %s answered %q, not JSON: %w", c.Name, c.URL, clip(data), err)
	}
	for _, part := range strings.Split(c.Field, ".") {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[part]
			if !ok {
				return 0, fmt.Errorf("counter %s: %s's answer has no field %q (of %s); write field = the path of the count", c.Name, c.URL, part, c.Field)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return 0, fmt.Errorf("counter %s: %s's answer has no element %q (of %s)", c.Name, c.URL, part, c.Field)
			}
			v = x[i]
		default:
			return 0, fmt.Errorf("counter %s: %s's answer has no field %q (of %s)", c.Name, c.URL, part, c.Field)
		}
	}
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return 0, fmt.Errorf("counter %s: field %s of %s's answer is %s, beyond what a count can be: %w", c.Name, c.Field, c.URL, clip([]byte(x)), err)
		}
		return f, nil
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return f, nil
		}
	}
	return 0, fmt.Errorf("counter %s: field %s of %s's answer is %v, not a number", c.Name, c.Field, c.URL, v)
}

func sqlCount(ctx context.Context, c plan.Counter, t Target) (float64, error) {
	if t.DSN == "" {
		return 0, fmt.Errorf("counter %s reads sql, but the %s has no store; run the gate with a store or read url = \"...\"", c.Name, t.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, counterTimeout)
	defer cancel()
	cfg, err := pgdsn.Parse(t.DSN, "counter "+c.Name)
	if err != nil {
		return 0, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("counter %s: connecting to the %s's store: %w", c.Name, t.Name, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var v any
	if err := conn.QueryRow(ctx, c.SQL).Scan(&v); err != nil {
		return 0, fmt.Errorf("counter %s: running its sql on the %s's store: %w", c.Name, t.Name, err)
	}
	switch x := v.(type) {
	case int64:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int16:
		return float64(x), nil
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case pgtype.Numeric:
		// sum() of an integer column is numeric in PostgreSQL.
		if f, err := x.Float64Value(); err == nil && f.Valid {
			return f.Float64, nil
		}
	case nil:
		return 0, fmt.Errorf("counter %s: its sql gave NULL, not a number; select a count that is never NULL, such as SELECT coalesce(sum(n), 0) FROM the table", c.Name)
	}
	return 0, fmt.Errorf("counter %s: its sql gave %v (%T), not a number; select one integer, such as SELECT count(*) FROM the table", c.Name, v, v)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}
