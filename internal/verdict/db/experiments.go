package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/internal/verdict"
)

var _ verdict.ExperimentStore = (*DB)(nil)

const experimentColumns = `id, repo, target, branch, default_branch, commit_sha, received_ns, knee, knee_level,
	first_resource, first_resource_level, plateau_growth, recovery_s, exit_code, verdict`

// PutExperiment stores e under the next id, in one transaction with the
// read of the default branch's last experiment on its target.
func (db *DB) PutExperiment(ctx context.Context, e *verdict.Experiment) (int64, *verdict.Experiment, error) {
	done, err := db.writing(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer done()
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("storing an experiment of %s: %w", e.Repository, err)
	}
	defer tx.Rollback()
	var prev *verdict.Experiment
	row := tx.QueryRowContext(ctx, `SELECT `+experimentColumns+` FROM experiments
		WHERE repo = $1 AND target = $2 AND default_branch = 1 ORDER BY id DESC LIMIT 1`, e.Repository, e.Target)
	if p, err := scanExperiment(row); err == nil {
		prev = &p
	} else if !errors.Is(err, sql.ErrNoRows) {
		return 0, nil, fmt.Errorf("reading the last experiment of %s on %s: %w", e.Repository, e.Target, err)
	}
	var id int64
	// The ids count up across every repository, so "the last one stored"
	// is the highest id, whatever the clocks of the replicas say.
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM experiments`).Scan(&id); err != nil {
		return 0, nil, fmt.Errorf("numbering an experiment of %s: %w", e.Repository, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO experiments (`+experimentColumns+`, report)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		id, e.Repository, e.Target, e.Branch, b2i(e.DefaultBranch), e.CommitSHA, e.Received.UnixNano(), e.Knee, e.KneeLevel,
		e.FirstResource, e.FirstResourceLevel, e.PlateauGrowth, e.RecoveryS, e.Exit, e.Verdict, string(e.Report))
	if err != nil {
		return 0, nil, fmt.Errorf("storing an experiment of %s: %w", e.Repository, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, nil, fmt.Errorf("storing an experiment of %s: %w", e.Repository, err)
	}
	return id, prev, nil
}

// Experiments returns a target's newest limit experiments, oldest first.
func (db *DB) Experiments(ctx context.Context, repo, target string, limit int) ([]verdict.Experiment, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT * FROM (SELECT `+experimentColumns+` FROM experiments
		WHERE repo = $1 AND target = $2 ORDER BY id DESC LIMIT $3) newest ORDER BY id`, repo, target, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the experiments of %s on %s: %w", repo, target, err)
	}
	defer rows.Close()
	var out []verdict.Experiment
	for rows.Next() {
		e, err := scanExperiment(rows)
		if err != nil {
			return nil, fmt.Errorf("reading the experiments of %s on %s: %w", repo, target, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the experiments of %s on %s: %w", repo, target, err)
	}
	return out, nil
}

func scanExperiment(row interface{ Scan(...any) error }) (verdict.Experiment, error) {
	var e verdict.Experiment
	var def int
	var at int64
	var knee, level, firstAt, growth, rec sql.NullFloat64
	if err := row.Scan(&e.ID, &e.Repository, &e.Target, &e.Branch, &def, &e.CommitSHA, &at, &knee, &level,
		&e.FirstResource, &firstAt, &growth, &rec, &e.Exit, &e.Verdict); err != nil {
		return e, err
	}
	e.DefaultBranch, e.Received = def == 1, time.Unix(0, at).UTC()
	e.Knee, e.KneeLevel, e.FirstResourceLevel, e.PlateauGrowth, e.RecoveryS = nf(knee), nf(level), nf(firstAt), nf(growth), nf(rec)
	return e, nil
}

func nf(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	v := f.Float64
	return &v
}
