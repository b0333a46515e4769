package publish

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-github/v62/github"
)

// ErrRateLimited matches (errors.Is) every error GitHub gave because a rate
// limit was reached, primary or secondary. Such a request may succeed later
// unchanged, unlike a refused one; callers test for it without importing
// go-github.
var ErrRateLimited = errors.New("GitHub rate limit reached")

// RateLimitedError is what a publishing step returns when GitHub refused it
// for a rate limit. It wraps go-github's *github.RateLimitError or
// *github.AbuseRateLimitError (errors.As still finds them) and says when
// to try again.
type RateLimitedError struct {
	Doing     string    // what was being published, for example "creating check run"
	Secondary bool      // GitHub's secondary (abuse) limit rather than the hourly quota
	Retry     time.Time // when GitHub said the limit resets; zero when it did not say
	Err       error
}

func (e *RateLimitedError) Error() string {
	kind := "hourly"
	if e.Secondary {
		kind = "secondary"
	}
	when := "later"
	if !e.Retry.IsZero() {
		when = "after " + e.Retry.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%s: GitHub's %s rate limit was reached, try again %s: %v", e.Doing, kind, when, e.Err)
}

func (e *RateLimitedError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrRateLimited) true.
func (e *RateLimitedError) Is(target error) bool { return target == ErrRateLimited }

// RetryAt says when the request may be tried again (zero when GitHub did
// not say). The verdict service reads it through this method alone.
func (e *RateLimitedError) RetryAt() time.Time { return e.Retry }

// failed wraps an error from go-github with what was being done. Rate
// limits become *RateLimitedError; a refusal for permissions names the
// permission the token lacks, since "403 Resource not accessible by
// integration" alone does not say what to grant.
func failed(err error, permission, format string, args ...any) error {
	doing := fmt.Sprintf(format, args...)
	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		return &RateLimitedError{Doing: doing, Retry: rl.Rate.Reset.Time, Err: err}
	}
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) {
		e := &RateLimitedError{Doing: doing, Secondary: true, Err: err}
		if abuse.RetryAfter != nil {
			e.Retry = time.Now().Add(*abuse.RetryAfter)
		}
		return e
	}
	var app *appRefused
	if errors.As(err, &app) {
		// The App itself was refused while its installations were
		// listed for this request: no permission on the repository
		// would help, and app's message says what would.
		return fmt.Errorf("%s: %w", doing, err)
	}
	var resp *github.ErrorResponse
	if errors.As(err, &resp) && resp.Response != nil {
		switch resp.Response.StatusCode {
		case http.StatusTooManyRequests:
			// go-github v62 types only 403s as rate limits; GitHub also
			// answers 429.
			e := &RateLimitedError{Doing: doing, Secondary: true, Err: err}
			if d, perr := time.ParseDuration(resp.Response.Header.Get("Retry-After") + "s"); perr == nil {
				e.Retry = time.Now().Add(d)
			}
			return e
		case http.StatusUnauthorized:
			return fmt.Errorf("%s: GitHub refused the credentials (check the token or the App's key, ID and installation ID): %w", doing, err)
		case http.StatusForbidden, http.StatusNotFound:
			return fmt.Errorf("%s: GitHub refused or did not find it; the credentials need the %q permission on the repository (a GitHub App also needs installing on it): %w", doing, permission, err)
		}
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// appRefused is GitHub refusing the GitHub App itself (401, 403 or 404 to
// GET /app/installations, which is signed with the App's JWT): a key or an
// ID GitHub does not take ("A JSON web token could not be decoded",
// "Integration not found"). No permission on a repository changes that.
type appRefused struct {
	appID int64
	err   error // go-github's
}

func (e *appRefused) Error() string {
	return fmt.Sprintf("listing GitHub App %d's installations: GitHub refused the App's JWT or knows no App %d (%v): check --github-app-id (the App's settings page shows its ID) and --github-app-key (a private key generated on that page, PEM)", e.appID, e.appID, e.err)
}

func (e *appRefused) Unwrap() error { return e.err }
