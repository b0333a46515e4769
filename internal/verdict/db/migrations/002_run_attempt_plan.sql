-- Attempts and runs are keyed on the workflow run's attempt and the plan as
-- well: "Re-run all jobs" keeps the run id and raises GITHUB_RUN_ATTEMPT,
-- and is judged anew; two plans in one run are two judgments. Runs also
-- keep which publish targets reached GitHub, so a retry redoes only the
-- others. SQLite cannot change a primary key in place, so each table is
-- copied into its new shape; every stored row stays readable (a run's
-- run attempt is its attempts', which shared one before this migration).
CREATE TABLE attempts_v2 (
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
	PRIMARY KEY (repo, run_id, run_attempt, plan, attempt)
);
INSERT INTO attempts_v2 SELECT repo, run_id, attempt, run_attempt, event, head_sha, base_sha, pr,
	merge_group_sha, tag, plan, cpu_model, has_exit_code, exit_code, workflow_cancelled,
	details_url, verdict, next, reason, final_verdict, base_note, received_ns, report FROM attempts;

CREATE TABLE attempt_metrics_v2 (
	repo TEXT NOT NULL,
	run_id BIGINT NOT NULL,
	run_attempt INTEGER NOT NULL,
	plan TEXT NOT NULL,
	attempt INTEGER NOT NULL,
	metric TEXT NOT NULL,
	base DOUBLE PRECISION NOT NULL,
	head DOUBLE PRECISION NOT NULL,
	ratio DOUBLE PRECISION NOT NULL,
	fail INTEGER NOT NULL,
	PRIMARY KEY (repo, run_id, run_attempt, plan, attempt, metric)
);
INSERT INTO attempt_metrics_v2 SELECT m.repo, m.run_id, a.run_attempt, a.plan, m.attempt, m.metric, m.base, m.head, m.ratio, m.fail
	FROM attempt_metrics m JOIN attempts a ON a.repo = m.repo AND a.run_id = m.run_id AND a.attempt = m.attempt;

CREATE TABLE runs_v2 (
	repo TEXT NOT NULL,
	run_id BIGINT NOT NULL,
	run_attempt INTEGER NOT NULL,
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
	published_check INTEGER NOT NULL,
	published_comment INTEGER NOT NULL,
	published_release INTEGER NOT NULL,
	publish_error TEXT NOT NULL,
	updated_ns BIGINT NOT NULL,
	PRIMARY KEY (repo, run_id, run_attempt, plan)
);
INSERT INTO runs_v2 SELECT r.repo, r.run_id,
	COALESCE((SELECT MAX(a.run_attempt) FROM attempts a WHERE a.repo = r.repo AND a.run_id = r.run_id), 1),
	r.event, r.head_sha, r.base_sha, r.pr, r.merge_group_sha, r.tag, r.plan, r.verdict, r.title,
	r.final_attempt, r.release_line, r.published, r.published, r.published, r.published, r.publish_error, r.updated_ns
	FROM runs r;

DROP TABLE attempt_metrics;
DROP TABLE attempts;
DROP TABLE runs;
ALTER TABLE attempts_v2 RENAME TO attempts;
ALTER TABLE attempt_metrics_v2 RENAME TO attempt_metrics;
ALTER TABLE runs_v2 RENAME TO runs;
CREATE INDEX attempts_model ON attempts (cpu_model, received_ns);
CREATE INDEX runs_head ON runs (repo, head_sha);
CREATE INDEX runs_pr ON runs (repo, pr);
CREATE INDEX runs_merge_group ON runs (repo, merge_group_sha);
CREATE INDEX runs_tag ON runs (repo, tag);
CREATE INDEX runs_updated ON runs (repo, updated_ns);
CREATE INDEX runs_unpublished ON runs (published, updated_ns);
