package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/verdict"
)

const attemptColumns = `repo, run_id, attempt, run_attempt, event, head_sha, base_sha, pr,
	merge_group_sha, tag, plan, cpu_model, has_exit_code, exit_code, workflow_cancelled,
	details_url, verdict, next, reason, final_verdict, base_note, received_ns, report`

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// PutAttempt inserts a unless its RunKey and attempt number are taken, in one
// transaction with its metrics and the run r, and returns the row stored:
// one commit, so one sync of the log, per attempt.
func (db *DB) PutAttempt(ctx context.Context, a *verdict.Attempt, r *verdict.Run) (verdict.Attempt, bool, error) {
	f := a.Facts
	exit, has := 0, f.ExitCode != nil
	if has {
		exit = *f.ExitCode
	}
	report := string(a.Report)
	done, err := db.writing(ctx)
	if err != nil {
		return verdict.Attempt{}, false, err
	}
	defer done()
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return verdict.Attempt{}, false, fmt.Errorf("storing attempt %d of run %d of %s: %w", f.Attempt, f.RunID, f.Repository, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO attempts (`+attemptColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)
		ON CONFLICT (repo, run_id, run_attempt, plan, attempt) DO NOTHING`,
		f.Repository, f.RunID, f.Attempt, f.RunAttempt, f.Event, f.HeadSHA, f.BaseSHA, f.PR,
		f.MergeGroupSHA, f.Tag, f.Plan, f.CPUModel, b2i(has), exit, b2i(f.WorkflowCancelled),
		f.DetailsURL, a.Verdict, a.Decision.Next, a.Decision.Reason, a.Decision.Verdict, a.BaseNote,
		a.Received.UnixNano(), report)
	if err != nil {
		return verdict.Attempt{}, false, fmt.Errorf("storing attempt %d of run %d of %s: %w", f.Attempt, f.RunID, f.Repository, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return verdict.Attempt{}, false, fmt.Errorf("storing attempt %d of run %d of %s: %w", f.Attempt, f.RunID, f.Repository, err)
	}
	created := n == 1
	if created {
		if len(a.Metrics) > 0 {
			// One statement for every metric: one round trip to PostgreSQL.
			var q strings.Builder
			q.WriteString(`INSERT INTO attempt_metrics (repo, run_id, run_attempt, plan, attempt, metric, base, head, ratio, fail) VALUES `)
			args := make([]any, 0, 10*len(a.Metrics))
			for i, m := range a.Metrics {
				if i > 0 {
					q.WriteString(", ")
				}
				n := len(args)
				fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8, n+9, n+10)
				args = append(args, f.Repository, f.RunID, f.RunAttempt, f.Plan, f.Attempt, m.ID, m.Base, m.Head, m.Ratio, b2i(m.Fail))
			}
			if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
				return verdict.Attempt{}, false, fmt.Errorf("storing the metrics of attempt %d of run %d of %s: %w", f.Attempt, f.RunID, f.Repository, err)
			}
		}
		if r != nil {
			if err := putRun(ctx, tx, r); err != nil {
				return verdict.Attempt{}, false, err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return verdict.Attempt{}, false, fmt.Errorf("storing attempt %d of run %d of %s: %w", f.Attempt, f.RunID, f.Repository, err)
	}
	if created {
		// What was written is what is stored; the times at the store's
		// precision (nanoseconds, UTC) as a read gives them back.
		got := *a
		got.Received = time.Unix(0, a.Received.UnixNano()).UTC()
		return got, true, nil
	}
	got, err := db.GetAttempt(ctx, f.Key(), f.Attempt)
	return got, false, err
}

type scanner interface{ Scan(...any) error }

func scanAttempt(s scanner) (verdict.Attempt, error) {
	var a verdict.Attempt
	f := &a.Facts
	var has, cancelled int
	var exit int
	var ns int64
	var report string
	err := s.Scan(&f.Repository, &f.RunID, &f.Attempt, &f.RunAttempt, &f.Event, &f.HeadSHA, &f.BaseSHA, &f.PR,
		&f.MergeGroupSHA, &f.Tag, &f.Plan, &f.CPUModel, &has, &exit, &cancelled,
		&f.DetailsURL, &a.Verdict, &a.Decision.Next, &a.Decision.Reason, &a.Decision.Verdict, &a.BaseNote, &ns, &report)
	if err != nil {
		return a, err
	}
	if has == 1 {
		f.ExitCode = &exit
	}
	f.WorkflowCancelled = cancelled == 1
	a.Received = time.Unix(0, ns).UTC()
	if report != "" {
		a.Report = []byte(report)
	}
	return a, nil
}

// keyWhere selects one RunKey's rows, its values from $1 to $4.
const keyWhere = `repo = $1 AND run_id = $2 AND run_attempt = $3 AND plan = $4`

func keyArgs(k verdict.RunKey, more ...any) []any {
	return append([]any{k.Repository, k.RunID, k.RunAttempt, k.Plan}, more...)
}

// GetAttempt returns one attempt with its metrics.
func (db *DB) GetAttempt(ctx context.Context, k verdict.RunKey, attempt int) (verdict.Attempt, error) {
	row := db.sql.QueryRowContext(ctx, `SELECT `+attemptColumns+` FROM attempts WHERE `+keyWhere+` AND attempt = $5`, keyArgs(k, attempt)...)
	a, err := scanAttempt(row)
	if errors.Is(err, sql.ErrNoRows) {
		return a, verdict.ErrNotFound
	}
	if err != nil {
		return a, fmt.Errorf("reading attempt %d of %s: %w", attempt, k, err)
	}
	a.Metrics, err = db.metrics(ctx, k, attempt)
	return a, err
}

func (db *DB) metrics(ctx context.Context, k verdict.RunKey, attempt int) ([]verdict.MetricPoint, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT metric, base, head, ratio, fail FROM attempt_metrics
		WHERE `+keyWhere+` AND attempt = $5 ORDER BY metric`, keyArgs(k, attempt)...)
	if err != nil {
		return nil, fmt.Errorf("reading the metrics of attempt %d of %s: %w", attempt, k, err)
	}
	defer rows.Close()
	var ms []verdict.MetricPoint
	for rows.Next() {
		var m verdict.MetricPoint
		var fail int
		if err := rows.Scan(&m.ID, &m.Base, &m.Head, &m.Ratio, &fail); err != nil {
			return nil, fmt.Errorf("reading the metrics of attempt %d of %s: %w", attempt, k, err)
		}
		m.Fail = fail == 1
		ms = append(ms, m)
	}
	return ms, rows.Err()
}

// RunAttempts returns a run's attempts in attempt order, without their
// metrics (GetAttempt has them).
func (db *DB) RunAttempts(ctx context.Context, k verdict.RunKey) ([]verdict.Attempt, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+attemptColumns+` FROM attempts WHERE `+keyWhere+` ORDER BY attempt`, keyArgs(k)...)
	if err != nil {
		return nil, fmt.Errorf("reading the attempts of %s: %w", k, err)
	}
	defer rows.Close()
	var as []verdict.Attempt
	for rows.Next() {
		a, err := scanAttempt(rows)
		if err != nil {
			return nil, fmt.Errorf("reading the attempts of %s: %w", k, err)
		}
		as = append(as, a)
	}
	return as, rows.Err()
}

// Models counts each CPU model's last window attempts and their exit 2s.
// The window is per model, newest first, so a model's old history ages
// out as it runs again.
func (db *DB) Models(ctx context.Context, window int) ([]verdict.ModelStat, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT cpu_model, COUNT(*), SUM(CASE WHEN has_exit_code = 1 AND exit_code = 2 THEN 1 ELSE 0 END)
		FROM (SELECT cpu_model, has_exit_code, exit_code,
			ROW_NUMBER() OVER (PARTITION BY cpu_model ORDER BY received_ns DESC, repo, run_id, attempt) AS k
			FROM attempts WHERE cpu_model <> '') recent
		WHERE k <= $1 GROUP BY cpu_model ORDER BY cpu_model`, window)
	if err != nil {
		return nil, fmt.Errorf("counting attempts by CPU model: %w", err)
	}
	defer rows.Close()
	var out []verdict.ModelStat
	for rows.Next() {
		var m verdict.ModelStat
		if err := rows.Scan(&m.CPUModel, &m.Attempts, &m.Exit2); err != nil {
			return nil, fmt.Errorf("counting attempts by CPU model: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ModelWindow counts model's last window attempts and their exit 2s,
// reading only that model's newest rows (the cpu_model, received_ns index).
func (db *DB) ModelWindow(ctx context.Context, model string, window int) (verdict.ModelStat, error) {
	m := verdict.ModelStat{CPUModel: model}
	err := db.sql.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN has_exit_code = 1 AND exit_code = 2 THEN 1 ELSE 0 END), 0)
		FROM (SELECT has_exit_code, exit_code FROM attempts WHERE cpu_model = $1
			ORDER BY received_ns DESC LIMIT $2) recent`, model, window).Scan(&m.Attempts, &m.Exit2)
	if err != nil {
		return m, fmt.Errorf("counting the attempts on %s: %w", model, err)
	}
	return m, nil
}

// Repositories lists the repositories with runs.
func (db *DB) Repositories(ctx context.Context) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT DISTINCT repo FROM runs ORDER BY repo`)
	if err != nil {
		return nil, fmt.Errorf("listing repositories: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, fmt.Errorf("listing repositories: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Trends returns the metrics of the final attempts of repo's newest runs
// that have one, oldest first.
func (db *DB) Trends(ctx context.Context, repo string, runs int) ([]verdict.TrendPoint, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT r.run_id, r.plan, r.head_sha, r.updated_ns, m.metric, m.ratio, m.fail
		FROM (SELECT run_id, run_attempt, plan, head_sha, updated_ns, final_attempt FROM runs
			WHERE repo = $1 AND final_attempt > 0 ORDER BY updated_ns DESC, run_id DESC LIMIT $2) r
		JOIN attempt_metrics m ON m.repo = $1 AND m.run_id = r.run_id AND m.run_attempt = r.run_attempt
			AND m.plan = r.plan AND m.attempt = r.final_attempt
		ORDER BY r.updated_ns, r.run_id, r.plan, m.metric`, repo, runs)
	if err != nil {
		return nil, fmt.Errorf("reading the trends of %s: %w", repo, err)
	}
	defer rows.Close()
	var out []verdict.TrendPoint
	for rows.Next() {
		var p verdict.TrendPoint
		var ns int64
		var fail int
		if err := rows.Scan(&p.RunID, &p.Plan, &p.HeadSHA, &ns, &p.Metric, &p.Ratio, &fail); err != nil {
			return nil, fmt.Errorf("reading the trends of %s: %w", repo, err)
		}
		p.Updated = time.Unix(0, ns).UTC()
		p.Fail = fail == 1
		out = append(out, p)
	}
	return out, rows.Err()
}

// PutTokenHash stores a write token's hash for repo.
func (db *DB) PutTokenHash(ctx context.Context, repo, hash string) error {
	done, err := db.writing(ctx)
	if err != nil {
		return err
	}
	defer done()
	_, err = db.sql.ExecContext(ctx, `INSERT INTO tokens (hash, repo, created_ns) VALUES ($1, $2, $3)
		ON CONFLICT (hash) DO UPDATE SET repo = excluded.repo`, hash, repo, time.Now().UnixNano())
	if err != nil {
		return fmt.Errorf("storing a token for %s: %w", repo, err)
	}
	return nil
}

// TokenRepository returns the repository a token hash writes for.
func (db *DB) TokenRepository(ctx context.Context, hash string) (string, error) {
	var repo string
	err := db.sql.QueryRowContext(ctx, `SELECT repo FROM tokens WHERE hash = $1`, hash).Scan(&repo)
	if errors.Is(err, sql.ErrNoRows) {
		return "", verdict.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("looking a token up: %w", err)
	}
	return repo, nil
}
