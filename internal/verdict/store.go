package verdict

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is what a Store returns for an attempt, run or token it does
// not hold.
var ErrNotFound = errors.New("not found")

// TrendPoint is one metric of one run's final attempt: the head/base ratio
// the page draws over commits.
type TrendPoint struct {
	RunID   int64
	Plan    string
	HeadSHA string
	Updated time.Time
	Metric  string
	Ratio   float64
	Fail    bool
}

// Store is where the service keeps everything: it holds no state of its
// own, so several replicas can share one PostgreSQL. internal/verdict/db
// implements it over SQLite and PostgreSQL.
type Store interface {
	// PutAttempt stores a unless an attempt with the same RunKey and
	// attempt number is stored already, and with it, in the same
	// transaction, the run r as a leaves it (r may be nil); it returns the
	// stored attempt and whether this call stored it. A repeat writes
	// nothing.
	PutAttempt(ctx context.Context, a *Attempt, r *Run) (Attempt, bool, error)
	// GetAttempt returns one attempt, ErrNotFound when absent.
	GetAttempt(ctx context.Context, k RunKey, attempt int) (Attempt, error)
	// RunAttempts returns a run's attempts by attempt number.
	RunAttempts(ctx context.Context, k RunKey) ([]Attempt, error)
	// PutRun writes a run's header and verdict (not its attempts).
	PutRun(ctx context.Context, r *Run) error
	// GetRun returns one run's header and verdict without its attempts
	// (RunAttempts has them), ErrNotFound when absent.
	GetRun(ctx context.Context, k RunKey) (Run, error)
	// Runs returns the runs q selects, newest first, with their attempts.
	Runs(ctx context.Context, q Query) ([]Run, error)
	// Unpublished returns the final runs updated since (UnixNano) whose
	// verdict has not reached GitHub, oldest first, at most limit.
	Unpublished(ctx context.Context, since int64, limit int) ([]Run, error)
	// Latest returns a repository's newest runs, with their attempts.
	Latest(ctx context.Context, repo string, limit int) ([]Run, error)
	// Models counts, per CPU model, its last window attempts (over every
	// repository: a runner's CPU stalls whoever runs on it) and how many
	// of them ended with exit 2. Attempts and Exit2 are set; the rest is
	// the service's to fill.
	Models(ctx context.Context, window int) ([]ModelStat, error)
	// ModelWindow counts one CPU model's last window attempts and their
	// exit 2s, as Models does for every model.
	ModelWindow(ctx context.Context, model string, window int) (ModelStat, error)
	// Repositories lists the repositories with at least one attempt.
	Repositories(ctx context.Context) ([]string, error)
	// Trends returns the metrics of the final attempts of a repository's
	// newest runs, oldest run first.
	Trends(ctx context.Context, repo string, runs int) ([]TrendPoint, error)
	// PutTokenHash lets the bearer token whose SHA-256 is hash write for
	// repo; the token itself is never stored.
	PutTokenHash(ctx context.Context, repo, hash string) error
	// TokenRepository returns the repository a token hash writes for,
	// ErrNotFound when none.
	TokenRepository(ctx context.Context, hash string) (string, error)
	// Ping says the store answers (readiness).
	Ping(ctx context.Context) error
	Close() error
}
