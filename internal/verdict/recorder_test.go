package verdict_test

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/perfgate/perfgate/internal/verdict"
)

// recorder is a Publisher that records each call as one line, in the
// style of an in-memory fake at the port; failNext makes the next call of
// a method fail once.
type recorder struct {
	mu       sync.Mutex
	calls    []string
	outcomes []verdict.Outcome
	comments []string
	failNext map[string]bool
	// noRelease makes SetReleaseLine answer verdict.ErrNoRelease while set.
	noRelease bool
}

func (r *recorder) record(method, line string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failNext[method] {
		delete(r.failNext, method)
		return fmt.Errorf("%s: GitHub answered 502", method)
	}
	r.calls = append(r.calls, method+" "+line)
	return nil
}

func (r *recorder) CheckInProgress(_ context.Context, t verdict.CheckTarget) error {
	return r.record("in_progress", t.Name+" "+t.SHA[:7])
}

func (r *recorder) CheckCompleted(_ context.Context, t verdict.CheckTarget, o verdict.Outcome) error {
	if err := r.record("completed", t.Name+" "+t.SHA[:7]+" "+o.Word); err != nil {
		return err
	}
	r.mu.Lock()
	r.outcomes = append(r.outcomes, o)
	r.mu.Unlock()
	return nil
}

func (r *recorder) UpsertComment(_ context.Context, t verdict.CheckTarget, md string) error {
	if err := r.record("comment", fmt.Sprintf("pr %d plan %q", t.PR, t.Plan)); err != nil {
		return err
	}
	r.mu.Lock()
	r.comments = append(r.comments, md)
	r.mu.Unlock()
	return nil
}

func (r *recorder) SetReleaseLine(_ context.Context, t verdict.CheckTarget, tag, line string) error {
	r.mu.Lock()
	missing := r.noRelease
	r.mu.Unlock()
	if missing {
		return fmt.Errorf("release %s: %w", tag, verdict.ErrNoRelease)
	}
	return r.record("release", fmt.Sprintf("%s/%s %s plan %q %s", t.Owner, t.Repo, tag, t.Plan, line))
}

// take returns the calls so far and forgets them.
func (r *recorder) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.Join(r.calls, "\n")
	r.calls = nil
	return s
}
