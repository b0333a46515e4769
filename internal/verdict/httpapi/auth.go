package httpapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/perfgate/perfgate/internal/verdict"
)

// GitHubIssuer is the issuer of GitHub Actions' OIDC tokens.
const GitHubIssuer = "https://token.actions.githubusercontent.com"

// TokenPrefix starts every per-repository token this service mints, which
// tells it from an OIDC token (a JWT) at a glance.
const TokenPrefix = "pgv_"

// NewToken mints a per-repository write token and returns it with the hash
// the store keeps; the token itself is shown once and never stored.
func NewToken() (token, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("minting a token: %w", err)
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token), nil
}

// HashToken is the stored form of a token: its SHA-256 in hex. A token
// has 256 random bits, so an unsalted fast hash is enough: nothing about
// it can be guessed from the hash.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// Auth decides who may write, and read when reads are not public. A
// request carries "Authorization: Bearer <token>": a GitHub Actions OIDC
// token, or a per-repository token (TokenPrefix...) stored hashed.
type Auth struct {
	// OIDC verifies Actions tokens; nil accepts none.
	OIDC *OIDC
	// TokenRepository returns the repository a token hash writes for
	// (verdict.ErrNotFound when none); nil accepts no tokens.
	TokenRepository func(ctx context.Context, hash string) (string, error)
	// ReadsPublic lets anyone read verdicts and the page.
	ReadsPublic bool
	// Runs, when set (the service has GitHub credentials), confirms each
	// posted attempt against GitHub's record of its run before it is filed
	// and published: head SHA, event, run attempt and pull request.
	Runs verdict.RunRecords
}

// OIDC verifies GitHub Actions OIDC tokens: the issuer's signature and
// expiry, the configured audience, and a repository allow-list bound to
// repository_id (names change on renames and transfers, and the sub
// claim's format changes for repositories created after 2026-07-15; the
// id does not). A write is further bound to the token's run (bind.go).
type OIDC struct {
	Issuer   string
	Audience string
	// Allow maps a repository_id to the owner/name it may write for.
	Allow map[int64]string
	// Workflows are the workflows whose jobs may post their own run's
	// attempts, matched against the token's job_workflow_ref (see
	// WorkflowMatches); nil is DefaultWorkflows.
	Workflows []string
	// Relays are the workflows that may post another run's attempts: a
	// fork pull request's, on workflow_run (workflows/perf-relay.yml);
	// nil is DefaultRelays.
	Relays []string
	// UseTokenID records a token's jti as used until it expires and says
	// false when it was used before (a replay); nil checks no replays.
	UseTokenID func(ctx context.Context, jti string, expires time.Time) (bool, error)
	// Client fetches the issuer's discovery document and keys; nil is
	// http.DefaultClient.
	Client *http.Client

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
}

// actionsClaims are the claims of a GitHub Actions OIDC token this service
// reads; GitHub sends the numbers as strings.
type actionsClaims struct {
	Repository     string          `json:"repository"`
	RepositoryID   json.RawMessage `json:"repository_id"`
	RunID          string          `json:"run_id"`
	RunAttempt     string          `json:"run_attempt"`
	EventName      string          `json:"event_name"`
	Ref            string          `json:"ref"`
	JobWorkflowRef string          `json:"job_workflow_ref"`
	JTI            string          `json:"jti"`
}

// credential is who a request is: the repository it writes for and, for
// an OIDC token, the token's claims (nil for a repository token).
type credential struct {
	repo   string
	claims *actionsClaims
}

// authError is a refusal: 401 when who is asking is unknown, 403 when
// they may not do this.
type authError struct {
	status int
	msg    string
}

func (e *authError) Error() string { return e.msg }

func unauthorized(format string, a ...any) error {
	return &authError{status: http.StatusUnauthorized, msg: fmt.Sprintf(format, a...)}
}

func forbidden(format string, a ...any) error {
	return &authError{status: http.StatusForbidden, msg: fmt.Sprintf(format, a...)}
}

// authorize says whether r may act for repo; it returns its credential.
func (a *Auth) authorize(r *http.Request, repo string) (credential, error) {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	raw = strings.TrimSpace(raw)
	if !ok || raw == "" {
		return credential{}, unauthorized("no credential: send Authorization: Bearer <the job's OIDC token or the repository's token>")
	}
	var who credential
	var err error
	if strings.HasPrefix(raw, TokenPrefix) {
		who.repo, err = a.token(r.Context(), raw)
	} else {
		who, err = a.oidc(r.Context(), raw)
	}
	if err != nil {
		return credential{}, err
	}
	if repo != "" {
		return who, mayActFor(who.repo, repo)
	}
	return who, nil
}

// mayActFor refuses (403) a credential for who acting for repo.
func mayActFor(who, repo string) error {
	if !strings.EqualFold(who, repo) {
		return forbidden("the credential is for %s, not %s", who, repo)
	}
	return nil
}

func (a *Auth) token(ctx context.Context, raw string) (string, error) {
	if a.TokenRepository == nil {
		return "", unauthorized("this service accepts no repository tokens: send the job's OIDC token")
	}
	repo, err := a.TokenRepository(ctx, HashToken(raw))
	if errors.Is(err, verdict.ErrNotFound) {
		return "", unauthorized("the token is not one this service issued (or it was replaced): mint one with `perfgate-verdictd token add OWNER/REPO`")
	}
	if err != nil {
		return "", fmt.Errorf("checking a token: %w", err)
	}
	return repo, nil
}

func (a *Auth) oidc(ctx context.Context, raw string) (credential, error) {
	o := a.OIDC
	if o == nil {
		return credential{}, unauthorized("this service accepts no OIDC tokens: send the repository's token (pgv_...)")
	}
	v, err := o.verifierFor(ctx)
	if err != nil {
		return credential{}, err
	}
	tok, err := v.Verify(ctx, raw)
	if err != nil {
		var exp *oidc.TokenExpiredError
		if errors.As(err, &exp) {
			return credential{}, unauthorized("the OIDC token expired at %s: ask the job for a fresh one", exp.Expiry.UTC().Format("15:04:05Z"))
		}
		return credential{}, unauthorized("the OIDC token does not verify against %s with audience %q: %v", o.Issuer, o.Audience, err)
	}
	var c actionsClaims
	if err := tok.Claims(&c); err != nil {
		return credential{}, unauthorized("reading the OIDC token's claims: %v", err)
	}
	id, err := strconv.ParseInt(strings.Trim(string(c.RepositoryID), `"`), 10, 64)
	if err != nil {
		return credential{}, forbidden("the OIDC token has no numeric repository_id claim (%s)", c.RepositoryID)
	}
	name, ok := o.Allow[id]
	if !ok {
		return credential{}, forbidden("repository %s (repository_id %d) is not on this service's allow-list: add --allow-repo %s=%d", c.Repository, id, c.Repository, id)
	}
	if err := o.once(ctx, c.JTI, tok.Expiry); err != nil {
		return credential{}, err
	}
	return credential{repo: name, claims: &c}, nil
}

// once accepts a token's id (jti) once within the token's life: a token
// captured from a log or a proxy cannot be sent again. The client asks the
// job for a fresh token for every request, so an honest retry never
// repeats one.
func (o *OIDC) once(ctx context.Context, jti string, expires time.Time) error {
	if o.UseTokenID == nil {
		return nil
	}
	if jti == "" {
		return unauthorized("the OIDC token has no jti claim, so a replay of it could not be told apart: send a GitHub Actions token")
	}
	fresh, err := o.UseTokenID(ctx, jti, expires)
	if err != nil {
		return fmt.Errorf("checking the OIDC token for a replay: %w", err)
	}
	if !fresh {
		return unauthorized("the OIDC token (jti %s) was already used: each request needs a fresh token from the job (a replayed token is refused)", jti)
	}
	return nil
}

// verifierFor discovers the issuer's keys once; a failed discovery is
// tried again on the next request instead of failing the service's start.
func (o *OIDC) verifierFor(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.verifier != nil {
		return o.verifier, nil
	}
	c := o.Client
	if c == nil {
		c = http.DefaultClient
	}
	// The provider keeps the context it was made with for fetching keys
	// later, so it gets one that outlives this request.
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), c), o.Issuer)
	if err != nil {
		return nil, &authError{status: http.StatusServiceUnavailable, msg: fmt.Sprintf("reaching the OIDC issuer %s: %v", o.Issuer, err)}
	}
	o.verifier = p.Verifier(&oidc.Config{ClientID: o.Audience})
	return o.verifier, nil
}

// ParseAllow reads one --allow-repo value, owner/name=repository_id.
func ParseAllow(s string, into map[int64]string) error {
	name, idText, ok := strings.Cut(s, "=")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil || id <= 0 || !verdict.ValidRepository(name) {
		return fmt.Errorf("--allow-repo %q: write owner/name=repository_id, for example acme/api=123456789 (the id is on https://api.github.com/repos/OWNER/NAME)", s)
	}
	into[id] = name
	return nil
}
