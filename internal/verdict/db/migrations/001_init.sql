-- The service's schema, in the SQL that SQLite and PostgreSQL both read:
-- TEXT, BIGINT, INTEGER (0/1 for booleans), DOUBLE PRECISION, composite
-- primary keys (no serial ids, whose syntax differs).
CREATE TABLE attempts (
	repo TEXT NOT NULL,
	run_id BIGINT NOT NULL,
	attempt INTEGER NOT NULL,
	run_attempt INTEGER NOT NULL,
	event TEXT NOT NULL,
	head_sha TEXT NOT NULL,
	base_sha TEXT NOT NULL,
	pr INTEGER NOT NULL,
	merge_group_sha TEXT NOT NULL,
	tag TEXT NOT NULL,
	plan TEXT NOT NULL,
	cpu_model TEXT NOT NULL,
	has_exit_code INTEGER NOT NULL,
	exit_code INTEGER NOT NULL,
	workflow_cancelled INTEGER NOT NULL,
	details_url TEXT NOT NULL,
	verdict TEXT NOT NULL,
	next TEXT NOT NULL,
	reason TEXT NOT NULL,
	final_verdict TEXT NOT NULL,
	base_note TEXT NOT NULL,
	received_ns BIGINT NOT NULL,
	report TEXT NOT NULL,
	PRIMARY KEY (repo, run_id, attempt)
);
CREATE INDEX attempts_model ON attempts (cpu_model, received_ns);

CREATE TABLE attempt_metrics (
	repo TEXT NOT NULL,
	run_id BIGINT NOT NULL,
	attempt INTEGER NOT NULL,
	metric TEXT NOT NULL,
	base DOUBLE PRECISION NOT NULL,
	head DOUBLE PRECISION NOT NULL,
	ratio DOUBLE PRECISION NOT NULL,
	fail INTEGER NOT NULL,
	PRIMARY KEY (repo, run_id, attempt, metric)
);

CREATE TABLE runs (
	repo TEXT NOT NULL,
	run_id BIGINT NOT NULL,
	event TEXT NOT NULL,
	head_sha TEXT NOT NULL,
	base_sha TEXT NOT NULL,
	pr INTEGER NOT NULL,
	merge_group_sha TEXT NOT NULL,
	tag TEXT NOT NULL,
	plan TEXT NOT NULL,
	verdict TEXT NOT NULL,
	title TEXT NOT NULL,
	final_attempt INTEGER NOT NULL,
	release_line TEXT NOT NULL,
	published INTEGER NOT NULL,
	publish_error TEXT NOT NULL,
	updated_ns BIGINT NOT NULL,
	PRIMARY KEY (repo, run_id)
);
CREATE INDEX runs_head ON runs (repo, head_sha);
CREATE INDEX runs_pr ON runs (repo, pr);
CREATE INDEX runs_merge_group ON runs (repo, merge_group_sha);
CREATE INDEX runs_tag ON runs (repo, tag);
CREATE INDEX runs_updated ON runs (repo, updated_ns);

CREATE TABLE tokens (
	hash TEXT NOT NULL PRIMARY KEY,
	repo TEXT NOT NULL,
	created_ns BIGINT NOT NULL
);
