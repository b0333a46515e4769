package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/internal/verdict"
)

const runColumns = `repo, run_id, run_attempt, event, head_sha, base_sha, pr, merge_group_sha, tag, plan,
	verdict, title, final_attempt, release_line, published, published_check, published_comment,
	published_release, publish_error, updated_ns`

// PutRun inserts or replaces a run's header and verdict.
func (db *DB) PutRun(ctx context.Context, r *verdict.Run) error {
	done, err := db.writing(ctx)
	if err != nil {
		return err
	}
	defer done()
	return putRun(ctx, db.sql, r)
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func putRun(ctx context.Context, ex execer, r *verdict.Run) error {
	_, err := ex.ExecContext(ctx, `INSERT INTO runs (`+runColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
		ON CONFLICT (repo, run_id, run_attempt, plan) DO UPDATE SET event = excluded.event, head_sha = excluded.head_sha,
			base_sha = excluded.base_sha, pr = excluded.pr, merge_group_sha = excluded.merge_group_sha,
			tag = excluded.tag, verdict = excluded.verdict, title = excluded.title,
			final_attempt = excluded.final_attempt, release_line = excluded.release_line,
			published = excluded.published, published_check = excluded.published_check,
			published_comment = excluded.published_comment, published_release = excluded.published_release,
			publish_error = excluded.publish_error, updated_ns = excluded.updated_ns`,
		r.Repository, r.RunID, r.RunAttempt, r.Event, r.HeadSHA, r.BaseSHA, r.PR, r.MergeGroupSHA, r.Tag, r.Plan,
		r.Verdict, r.Title, r.FinalAttempt, r.ReleaseLine, b2i(r.Published), b2i(r.Targets.Check), b2i(r.Targets.Comment),
		b2i(r.Targets.Release), r.PublishError, r.Updated.UnixNano())
	if err != nil {
		return fmt.Errorf("storing %s: %w", r.Key(), err)
	}
	return nil
}

func scanRun(s scanner) (verdict.Run, error) {
	var r verdict.Run
	var published, check, comment, release int
	var ns int64
	err := s.Scan(&r.Repository, &r.RunID, &r.RunAttempt, &r.Event, &r.HeadSHA, &r.BaseSHA, &r.PR, &r.MergeGroupSHA, &r.Tag, &r.Plan,
		&r.Verdict, &r.Title, &r.FinalAttempt, &r.ReleaseLine, &published, &check, &comment, &release, &r.PublishError, &ns)
	r.Published = published == 1
	r.Targets = verdict.Targets{Check: check == 1, Comment: comment == 1, Release: release == 1}
	r.Updated = time.Unix(0, ns).UTC()
	return r, err
}

// GetRun returns one run's header and verdict, without its attempts.
func (db *DB) GetRun(ctx context.Context, k verdict.RunKey) (verdict.Run, error) {
	r, err := scanRun(db.sql.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE `+keyWhere, keyArgs(k)...))
	if errors.Is(err, sql.ErrNoRows) {
		return r, verdict.ErrNotFound
	}
	if err != nil {
		return r, fmt.Errorf("reading %s: %w", k, err)
	}
	return r, nil
}

// Unpublished returns the final runs updated since whose verdict has not
// all reached GitHub, oldest first, without their attempts.
func (db *DB) Unpublished(ctx context.Context, since int64, n int) ([]verdict.Run, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+runColumns+` FROM runs
		WHERE published = 0 AND updated_ns >= $1 AND final_attempt > 0 ORDER BY updated_ns, run_id LIMIT $2`, since, limit(n))
	if err != nil {
		return nil, fmt.Errorf("reading the runs not published: %w", err)
	}
	defer rows.Close()
	var out []verdict.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("reading the runs not published: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Runs returns the runs q selects, newest first.
func (db *DB) Runs(ctx context.Context, q verdict.Query) ([]verdict.Run, error) {
	sel := `SELECT ` + runColumns + ` FROM runs WHERE repo = $1 AND `
	order := ` ORDER BY updated_ns DESC, run_id DESC, run_attempt DESC, plan LIMIT $3`
	switch {
	case q.SHA != "":
		// A SHA names the judged commit or the merge queue's head commit:
		// two lookups, each on its own index (an OR across two columns
		// makes SQLite scan the repository's runs).
		return db.queryRuns(ctx, sel+`head_sha = $2 UNION `+sel+`merge_group_sha = $2`+order, q.Repository, q.SHA, limit(q.Limit))
	case q.MergeGroupSHA != "":
		return db.queryRuns(ctx, sel+`merge_group_sha = $2`+order, q.Repository, q.MergeGroupSHA, limit(q.Limit))
	case q.PR > 0:
		return db.queryRuns(ctx, sel+`pr = $2`+order, q.Repository, q.PR, limit(q.Limit))
	case q.Tag != "":
		return db.queryRuns(ctx, sel+`tag = $2`+order, q.Repository, q.Tag, limit(q.Limit))
	}
	return nil, errors.New("selecting runs: give a SHA, a pull request, a merge group or a tag")
}

// Latest returns repo's newest runs.
func (db *DB) Latest(ctx context.Context, repo string, n int) ([]verdict.Run, error) {
	return db.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE repo = $1
		ORDER BY updated_ns DESC, run_id DESC, run_attempt DESC, plan LIMIT $2`, repo, limit(n))
}

func limit(n int) int {
	if n <= 0 || n > 500 {
		return 100
	}
	return n
}

func (db *DB) queryRuns(ctx context.Context, query string, args ...any) ([]verdict.Run, error) {
	rows, err := db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("reading runs of %v: %w", args[0], err)
	}
	var out []verdict.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading runs of %v: %w", args[0], err)
		}
		out = append(out, r)
	}
	// Close before the attempts are read: SQLite's pool may hold one
	// connection per open result.
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading runs of %v: %w", args[0], err)
	}
	for i := range out {
		if err := db.fillAttempts(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (db *DB) fillAttempts(ctx context.Context, r *verdict.Run) error {
	as, err := db.RunAttempts(ctx, r.Key())
	if err != nil {
		return err
	}
	r.Attempts = make([]verdict.AttemptSummary, 0, len(as))
	for _, a := range as {
		r.Attempts = append(r.Attempts, verdict.AttemptSummary{
			Attempt: a.Facts.Attempt, CPUModel: a.Facts.CPUModel, Verdict: a.Verdict,
			Next: a.Decision.Next, Reason: a.Decision.Reason,
		})
	}
	return nil
}
