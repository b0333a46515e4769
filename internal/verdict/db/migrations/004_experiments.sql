-- Capacity experiments posted to POST /v1/experiments: each target's
-- knee, first resource to run out and routine numbers over commits.
CREATE TABLE experiments (
	id BIGINT NOT NULL PRIMARY KEY,
	repo TEXT NOT NULL,
	target TEXT NOT NULL,
	branch TEXT NOT NULL,
	default_branch INTEGER NOT NULL,
	commit_sha TEXT NOT NULL,
	received_ns BIGINT NOT NULL,
	knee DOUBLE PRECISION,
	knee_level DOUBLE PRECISION,
	first_resource TEXT NOT NULL,
	first_resource_level DOUBLE PRECISION,
	plateau_growth DOUBLE PRECISION,
	recovery_s DOUBLE PRECISION,
	exit_code INTEGER NOT NULL,
	verdict TEXT NOT NULL,
	report TEXT NOT NULL
);
CREATE INDEX experiments_target ON experiments (repo, target, id);
