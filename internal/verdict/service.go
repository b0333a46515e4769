package verdict

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/exit"
)

// Service is the verdict service's whole behaviour, what the HTTP API and
// the page call: one interface in the way docker compose's api.Compose is,
// so a caller needs no knowledge of the store or of GitHub.
type Service interface {
	// Ingest files one attempt (idempotent on its RunKey and attempt
	// number: a repeat returns the stored attempt), decides retry or
	// final, and publishes: the check in progress at a run's first
	// attempt, completed with the PR comment at its final verdict.
	Ingest(ctx context.Context, s Submission) (Receipt, error)
	// Decision is the stored answer for one attempt, ErrNotFound when the
	// attempt was never posted.
	Decision(ctx context.Context, k RunKey, attempt int) (Decision, error)
	// Verdicts are the runs q selects, newest first.
	Verdicts(ctx context.Context, q Query) ([]Run, error)
	// ReleaseLine is the release-notes line of the newest final run of
	// plan for tag: ErrNoBase when its gate named no base, ErrNotFinal
	// before its final attempt, ErrNotFound when no run of the plan has
	// the tag.
	ReleaseLine(ctx context.Context, repo, tag, plan string) (string, error)
	// Republish publishes again the final verdicts updated since that did
	// not all reach GitHub (a release not made yet, GitHub down), only
	// the targets that failed; it returns how many runs it completed.
	Republish(ctx context.Context, since time.Time) (int, error)
	// Repositories lists the repositories with runs.
	Repositories(ctx context.Context) ([]string, error)
	// Repository is one repository's page: latest runs, trends, models.
	Repository(ctx context.Context, repo string) (RepoView, error)
	// Models are the CPU models' recent attempts and stall-prone marks.
	Models(ctx context.Context) ([]ModelStat, error)
	// Ready says the store answers.
	Ready(ctx context.Context) error
}

// Config is the service's policy and collaborators.
type Config struct {
	// StallProne are the CPU models configured as stall-prone: an exit 1
	// on them is retried.
	StallProne []string
	// MaxRetries as attempts.Policy reads it (0: its default of 2).
	MaxRetries int
	// Learn says when a CPU model becomes stall-prone from history.
	Learn Learn
	// Publisher publishes verdicts; nil publishes nothing (a service
	// that only records and decides).
	Publisher Publisher
	// OnAttempt, when set, is told of every attempt stored (metrics).
	OnAttempt func(a *Attempt)
	Log       *slog.Logger
	Now       func() time.Time
}

type service struct {
	st  Store
	cfg Config
	log *slog.Logger
}

// New is the service over st.
func New(st Store, cfg Config) Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Learn = cfg.Learn.withDefaults()
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &service{st: st, cfg: cfg, log: log}
}

func (s *service) Ready(ctx context.Context) error { return s.st.Ping(ctx) }

func (s *service) Decision(ctx context.Context, k RunKey, attempt int) (Decision, error) {
	a, err := s.st.GetAttempt(ctx, k, attempt)
	if err != nil {
		return Decision{}, err
	}
	return a.Decision, nil
}

func (s *service) Verdicts(ctx context.Context, q Query) ([]Run, error) {
	return s.st.Runs(ctx, q)
}

func (s *service) Repositories(ctx context.Context) ([]string, error) {
	return s.st.Repositories(ctx)
}

func (s *service) ReleaseLine(ctx context.Context, repo, tag, plan string) (string, error) {
	all, err := s.st.Runs(ctx, Query{Repository: repo, Tag: tag, Limit: 100})
	if err != nil {
		return "", err
	}
	var runs []Run
	for _, r := range all {
		if r.Plan == plan {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return "", fmt.Errorf("no run of %s%s was for the tag %s: %w", repo, planWords(plan), tag, ErrNotFound)
	}
	for _, r := range runs {
		if r.Verdict == WordPending {
			continue
		}
		if r.ReleaseLine == "" {
			return "", fmt.Errorf("run %d of %s for %s: %w, so the release notes may not claim one (the gate's base.md names it; see docs/base.md)", r.RunID, repo, tag, ErrNoBase)
		}
		return r.ReleaseLine, nil
	}
	return "", fmt.Errorf("run %d of %s for %s: %w", runs[0].RunID, repo, tag, ErrNotFinal)
}

// Ingest files an attempt; see Service.
func (s *service) Ingest(ctx context.Context, sub Submission) (Receipt, error) {
	f := sub.Facts
	if err := f.Validate(); err != nil {
		return Receipt{}, err
	}
	// A repeat is found by the insert below (its conflict on the key),
	// not by a read first: new attempts are the common case.
	a, err := parseAttempt(sub, s.cfg.Now())
	if err != nil {
		return Receipt{}, err
	}
	pol, err := s.policy(ctx, a.Facts.CPUModel)
	if err != nil {
		return Receipt{}, err
	}
	d := pol.Decide(outcomeOf(a))
	a.Decision = Decision{Next: string(d.Next), Reason: d.Reason}
	final := a
	if d.Next == attempts.Final {
		prev, err := s.st.RunAttempts(ctx, f.Key())
		if err != nil {
			return Receipt{}, err
		}
		var word string
		word, final = finalWord(append(prev, *a))
		a.Decision.Verdict = word
	}
	run, err := s.st.GetRun(ctx, f.Key())
	first := errors.Is(err, ErrNotFound)
	if err != nil && !first {
		return Receipt{}, err
	}
	run = runOf(f, run, s.cfg.Now())
	if a.Decision.Next == NextFinal {
		run.Verdict = a.Decision.Verdict
		run.FinalAttempt = final.Facts.Attempt
		run.Title = title(final, run.Verdict)
		run.ReleaseLine = releaseLine(final)
		// A new final verdict (a re-run's) publishes every target anew.
		run.Published, run.Targets, run.PublishError = false, Targets{}, ""
	}
	// The attempt and its run commit together: a kill between the two
	// cannot leave an attempt whose run does not know it.
	stored, created, err := s.st.PutAttempt(ctx, a, &run)
	if err != nil {
		return Receipt{}, err
	}
	if !created {
		// Another request stored it first (a retried POST racing itself).
		return s.repeat(ctx, stored)
	}
	if s.cfg.OnAttempt != nil {
		s.cfg.OnAttempt(&stored)
	}
	rc := Receipt{Created: true, Attempt: stored}
	if s.cfg.Publisher != nil && (first || run.Verdict == WordPending) {
		if err := s.cfg.Publisher.CheckInProgress(ctx, f.Target()); err != nil {
			s.log.Warn("marking the check in progress", "run", f.Key().String(), "attempt", f.Attempt, "err", err)
		}
	}
	if stored.Decision.Next == NextFinal {
		rc.Published, rc.PublishError = s.publishFinal(ctx, &run, final)
	}
	return rc, nil
}

// repeat answers a repeated POST with the stored attempt, publishing the
// run's final verdict again when it had not reached GitHub.
func (s *service) repeat(ctx context.Context, stored Attempt) (Receipt, error) {
	rc := Receipt{Attempt: stored}
	f := stored.Facts
	run, err := s.st.GetRun(ctx, f.Key())
	if errors.Is(err, ErrNotFound) {
		return rc, nil
	}
	if err != nil {
		return rc, err
	}
	rc.Published, rc.PublishError = run.Published, run.PublishError
	if run.Verdict == WordPending || run.Published || s.cfg.Publisher == nil || run.FinalAttempt == 0 {
		return rc, nil
	}
	final, err := s.st.GetAttempt(ctx, f.Key(), run.FinalAttempt)
	if err != nil {
		return rc, err
	}
	rc.Published, rc.PublishError = s.publishFinal(ctx, &run, &final)
	return rc, nil
}

// publishFinal completes the check, writes the PR comment and, for a
// release, its line: each target not done yet, so a retry redoes only the
// ones that failed. It records on the run which reached GitHub. A failure
// leaves the attempt stored: the attempt's repeat, or Republish, publishes
// again.
func (s *service) publishFinal(ctx context.Context, run *Run, final *Attempt) (bool, string) {
	if s.cfg.Publisher == nil {
		return false, ""
	}
	all, err := s.st.RunAttempts(ctx, run.Key())
	if err == nil {
		err = s.publish(ctx, run, final, all)
	}
	run.Published, run.PublishError = err == nil && run.Targets.All(), ""
	if err != nil {
		run.PublishError = err.Error()
		level := slog.LevelWarn
		if errors.Is(err, ErrNoRelease) {
			level = slog.LevelInfo // waited for: release.yml may make it later
		}
		s.log.Log(ctx, level, "publishing the verdict", "run", run.Key().String(), "targets", run.Targets, "err", err)
	}
	if perr := s.st.PutRun(ctx, run); perr != nil {
		s.log.Error("recording the publication", "run", run.Key().String(), "err", perr)
	}
	return run.Published, run.PublishError
}

// publish sends the targets run.Targets does not hold yet, marking each
// as it lands; it stops at the first that fails.
func (s *service) publish(ctx context.Context, run *Run, final *Attempt, all []Attempt) error {
	p := s.cfg.Publisher
	t := final.Facts.Target()
	o, err := outcome(run, final, all)
	if err != nil {
		return err
	}
	if !run.Targets.Check {
		if err := p.CheckCompleted(ctx, t, o); err != nil {
			return fmt.Errorf("completing the check %q on %s: %w", t.Name, t.SHA, err)
		}
		run.Targets.Check = true
	}
	if !run.Targets.Comment {
		if t.PR > 0 {
			if err := p.UpsertComment(ctx, t, o.Summary); err != nil {
				return fmt.Errorf("writing the comment on pull request %d: %w", t.PR, err)
			}
		}
		run.Targets.Comment = true
	}
	if !run.Targets.Release {
		if final.Facts.Event == "release" && final.Facts.Tag != "" && run.ReleaseLine != "" {
			if err := p.SetReleaseLine(ctx, t, final.Facts.Tag, run.ReleaseLine); err != nil {
				return fmt.Errorf("writing the release line of %s: %w", final.Facts.Tag, err)
			}
		}
		run.Targets.Release = true
	}
	return nil
}

// Republish retries the final verdicts that did not all reach GitHub; see
// Service.
func (s *service) Republish(ctx context.Context, since time.Time) (int, error) {
	if s.cfg.Publisher == nil {
		return 0, nil
	}
	runs, err := s.st.Unpublished(ctx, since.UnixNano(), 100)
	if err != nil {
		return 0, err
	}
	done := 0
	for i := range runs {
		run := &runs[i]
		final, err := s.st.GetAttempt(ctx, run.Key(), run.FinalAttempt)
		if err != nil {
			return done, err
		}
		if ok, _ := s.publishFinal(ctx, run, &final); ok {
			done++
		}
	}
	return done, nil
}

// planWords is " (plan p)" for a named plan, "" for the default one.
func planWords(plan string) string {
	if plan == "" {
		return ""
	}
	return " (plan " + plan + ")"
}

// runOf is r with the header of the run f belongs to.
func runOf(f Facts, r Run, now time.Time) Run {
	r.Repository, r.RunID, r.RunAttempt, r.Event, r.HeadSHA = f.Repository, f.RunID, f.RunAttempt, f.Event, f.HeadSHA
	r.BaseSHA, r.PR, r.MergeGroupSHA, r.Tag, r.Plan = f.BaseSHA, f.PR, f.MergeGroupSHA, f.Tag, f.Plan
	if r.Verdict == "" {
		r.Verdict = WordPending
	}
	r.Updated = now.UTC()
	return r
}

func outcomeOf(a *Attempt) attempts.Outcome {
	f := a.Facts
	o := attempts.Outcome{Number: f.Attempt, WorkflowCancelled: f.WorkflowCancelled, CPUModel: f.CPUModel}
	if f.ExitCode != nil {
		o.HasExitCode, o.ExitCode = true, *f.ExitCode
	}
	return o
}

// finalWord is the run's verdict over its attempts, the attempts
// package's rule: the last attempt that ran decides; none that ran cannot
// be judged. It returns the deciding attempt (the last one when none ran).
func finalWord(as []Attempt) (string, *Attempt) {
	outs := make([]attempts.Outcome, len(as))
	for i := range as {
		outs[i] = outcomeOf(&as[i])
	}
	last, ok := attempts.FinalOf(outs)
	if !ok {
		return WordCannotJudge, &as[len(as)-1]
	}
	for i := range as {
		if as[i].Facts.Attempt == last.Number {
			return WordOf(attempts.Code(last)), &as[i]
		}
	}
	return WordOf(attempts.Code(last)), &as[len(as)-1]
}

// WordOf is the published word for an exit code.
func WordOf(code int) string {
	switch code {
	case exit.Pass:
		return WordPass
	case exit.Regression:
		return WordRegression
	}
	return WordCannotJudge
}
