package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/redact"
	"github.com/perfgate/perfgate/internal/verdict"
)

// TokenSource gives the bearer token of one request.
type TokenSource func(ctx context.Context) (string, error)

// StaticToken is a repository token minted by `perfgate-verdictd token add`.
func StaticToken(token string) TokenSource {
	return func(context.Context) (string, error) { return token, nil }
}

// Client is one service's API.
type Client struct {
	base  *url.URL
	hc    *http.Client
	token TokenSource
	// Tries is how many times a request that failed in transit or got a
	// 5xx goes out; Backoff is the wait before the second, doubling.
	Tries   int
	Backoff time.Duration
}

// New is a client of the service at baseURL (http://127.0.0.1:8088).
// token may be nil for a service whose reads are public; hc nil is a
// client with a 30 s timeout.
func New(baseURL string, token TokenSource, hc *http.Client) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the verdict service's address %q is not an http(s) URL: write --service https://verdicts.example.com", redact.URL(baseURL))
	}
	if u.User != nil {
		// The job authenticates with its OIDC token; a password here would
		// be neither sent nor kept out of the job's log.
		bare := *u
		bare.User = nil
		return nil, fmt.Errorf("the verdict service's address %q carries a user name or password, which perfgate would neither send nor keep secret (the service knows the job by its OIDC token); drop it: --service %s", redact.URL(baseURL), bare.String())
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{base: u, hc: hc, token: token, Tries: 4, Backoff: 500 * time.Millisecond}, nil
}

// APIError is an answer of the service that was not a success.
type APIError struct {
	Status  int
	Message string
	Field   string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("the verdict service answered %d: %s", e.Status, e.Message)
}

// Is lets callers test with errors.Is against the service's own errors:
// a 404 is verdict.ErrNotFound, a 409 on a release line ErrNoBase or
// ErrNotFinal.
func (e *APIError) Is(target error) bool {
	switch target {
	case verdict.ErrNotFound:
		return e.Status == http.StatusNotFound
	case verdict.ErrNoBase:
		return e.Status == http.StatusConflict && strings.Contains(e.Message, verdict.ErrNoBase.Error())
	case verdict.ErrNotFinal:
		return e.Status == http.StatusConflict && strings.Contains(e.Message, verdict.ErrNotFinal.Error())
	}
	return false
}

// PostAttempt files one attempt and returns the service's receipt (Created
// false for a repeat, which returns the attempt stored first).
func (c *Client) PostAttempt(ctx context.Context, s verdict.Submission) (verdict.Receipt, error) {
	var rc verdict.Receipt
	b, err := json.Marshal(s)
	if err != nil {
		return rc, fmt.Errorf("posting attempt %d: %w", s.Facts.Attempt, err)
	}
	err = c.do(ctx, http.MethodPost, "/v1/attempts", nil, b, &rc)
	if err != nil {
		return rc, fmt.Errorf("posting attempt %d of run %d: %w", s.Facts.Attempt, s.Facts.RunID, err)
	}
	return rc, nil
}

// Decision asks retry or final for one posted attempt of the judgment k.
func (c *Client) Decision(ctx context.Context, k verdict.RunKey, attempt int) (verdict.Decision, error) {
	var d verdict.Decision
	q := url.Values{"repo": {k.Repository}, "run_id": {strconv.FormatInt(k.RunID, 10)},
		"run_attempt": {strconv.Itoa(max(k.RunAttempt, 1))}, "attempt": {strconv.Itoa(attempt)}}
	if k.Plan != "" {
		q.Set("plan", k.Plan)
	}
	if err := c.do(ctx, http.MethodGet, "/v1/decision", q, nil, &d); err != nil {
		return d, fmt.Errorf("asking for the decision on attempt %d of %s: %w", attempt, k, err)
	}
	return d, nil
}

// Verdicts are the runs q selects (one of SHA, PR, MergeGroupSHA, Tag).
func (c *Client) Verdicts(ctx context.Context, q verdict.Query) ([]verdict.Run, error) {
	v := url.Values{"repo": {q.Repository}}
	switch {
	case q.SHA != "":
		v.Set("sha", q.SHA)
	case q.PR > 0:
		v.Set("pr", strconv.Itoa(q.PR))
	case q.MergeGroupSHA != "":
		v.Set("merge_group", q.MergeGroupSHA)
	case q.Tag != "":
		v.Set("tag", q.Tag)
	}
	var out struct {
		Verdicts []verdict.Run `json:"verdicts"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/verdicts", v, nil, &out); err != nil {
		return nil, fmt.Errorf("reading verdicts of %s: %w", q.Repository, err)
	}
	return out.Verdicts, nil
}

// ReleaseLine is the release-notes line of plan ("" for the default plan)
// for tag; errors.Is(err, verdict.ErrNoBase) when the gate named no base.
func (c *Client) ReleaseLine(ctx context.Context, repo, tag, plan string) (string, error) {
	var out struct {
		Line string `json:"line"`
	}
	q := url.Values{"repo": {repo}, "tag": {tag}}
	if plan != "" {
		q.Set("plan", plan)
	}
	if err := c.do(ctx, http.MethodGet, "/v1/release-line", q, nil, &out); err != nil {
		return "", fmt.Errorf("reading the release line of %s %s: %w", repo, tag, err)
	}
	return out.Line, nil
}

func (c *Client) do(ctx context.Context, method, path string, q url.Values, body []byte, into any) error {
	u := *c.base
	u.Path += path
	u.RawQuery = q.Encode()
	wait := c.Backoff
	var last error
	for try := 1; try <= max(c.Tries, 1); try++ {
		if try > 1 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w (after %v)", ctx.Err(), last)
			case <-time.After(wait):
			}
			wait *= 2
		}
		retry, err := c.once(ctx, method, u.String(), body, into)
		if err == nil || !retry {
			return err
		}
		last = err
	}
	return last
}

// once sends one request; retry says whether another try may help (the
// request failed in transit, or the service answered 5xx).
func (c *Client) once(ctx context.Context, method, u string, body []byte, into any) (retry bool, err error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return false, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != nil {
		tok, err := c.token(ctx)
		if err != nil {
			return false, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return true, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		e := &APIError{Status: resp.StatusCode}
		var body struct {
			Error string `json:"error"`
			Field string `json:"field"`
		}
		if json.Unmarshal(b, &body) == nil && body.Error != "" {
			e.Message, e.Field = body.Error, body.Field
		} else {
			e.Message = strings.TrimSpace(string(b))
		}
		return resp.StatusCode >= 500, e
	}
	if err := json.Unmarshal(b, into); err != nil {
		return false, fmt.Errorf("the answer is not the JSON expected: %w", err)
	}
	return false, nil
}

// ActionsOIDC asks the running GitHub Actions job for an OIDC token for
// audience (the job needs `permissions: id-token: write`; fork pull
// requests get none). getenv reads ACTIONS_ID_TOKEN_REQUEST_URL and
// ACTIONS_ID_TOKEN_REQUEST_TOKEN.
func ActionsOIDC(getenv func(string) string, audience string, hc *http.Client) (TokenSource, error) {
	reqURL, reqTok := getenv("ACTIONS_ID_TOKEN_REQUEST_URL"), getenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
	if reqURL == "" || reqTok == "" {
		return nil, errors.New("no OIDC token to send the verdict service: ACTIONS_ID_TOKEN_REQUEST_URL is unset; give the job `permissions: id-token: write` (fork pull requests get none), or a repository token")
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return func(ctx context.Context) (string, error) {
		u, err := url.Parse(reqURL)
		if err != nil {
			return "", fmt.Errorf("ACTIONS_ID_TOKEN_REQUEST_URL is no URL: %w", err)
		}
		q := u.Query()
		q.Set("audience", audience)
		u.RawQuery = q.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return "", err
		}
		req.Header.Set("Authorization", "Bearer "+reqTok)
		resp, err := hc.Do(req)
		if err != nil {
			return "", fmt.Errorf("asking the job for its OIDC token: %w", err)
		}
		defer resp.Body.Close()
		var out struct {
			Value string `json:"value"`
		}
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("asking the job for its OIDC token: the runner answered %s", resp.Status)
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil || out.Value == "" {
			return "", fmt.Errorf("asking the job for its OIDC token: no token in the answer (%v)", err)
		}
		return out.Value, nil
	}, nil
}
