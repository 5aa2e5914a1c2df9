-- bisectd schema, version 5: a job may end `undecided` (the data cannot
-- decide within its budget), and has a wall-time budget.
--
-- SQLite cannot change a CHECK constraint, so jobs is rebuilt: a new
-- table, the rows copied, the old one dropped, the new one renamed, its
-- index made again. The store runs migrations with foreign keys off (a
-- DROP TABLE with them on would first delete every job's commits, tasks
-- and decisions through ON DELETE CASCADE) and checks them before the
-- commit; the children's REFERENCES jobs(id) then name the new table.

CREATE TABLE jobs_new (
	id         INTEGER PRIMARY KEY,
	repo_id    INTEGER NOT NULL REFERENCES repos(id),
	workload   TEXT NOT NULL,
	pool       TEXT NOT NULL,
	good       TEXT NOT NULL,     -- full commit ids
	bad        TEXT NOT NULL,
	good_ref   TEXT NOT NULL,     -- as the user wrote them
	bad_ref    TEXT NOT NULL,
	runs       INTEGER NOT NULL,  -- runs per task
	unit       TEXT NOT NULL,
	direction  TEXT NOT NULL CHECK (direction IN ('higher', 'lower')),
	state      TEXT NOT NULL DEFAULT 'queued'
	           CHECK (state IN ('queued', 'running', 'done', 'failed', 'not-reproduced', 'undecided',
	                            'cancelled')),
	created    INTEGER NOT NULL,
	finished   INTEGER,
	culprit    INTEGER,           -- idx into job_commits
	error      TEXT,
	report     TEXT,              -- JSON, once ended
	policy     TEXT NOT NULL DEFAULT 'bisectd' CHECK (policy IN ('bisectd', 'split')),
	confidence REAL NOT NULL DEFAULT 0.99,
	alpha      REAL NOT NULL DEFAULT 0.01,
	min_effect REAL NOT NULL DEFAULT 0.01,
	budget_runs INTEGER NOT NULL DEFAULT 0,     -- 0: derived by the engine
	budget_builds INTEGER NOT NULL DEFAULT 0,   -- 0: none
	append     TEXT,
	budget_seconds INTEGER NOT NULL DEFAULT 0,  -- wall time from created; 0: derived
	budget_runs_auto INTEGER,                   -- the derived budgets at the last step, for show
	budget_seconds_auto INTEGER
);

INSERT INTO jobs_new (id, repo_id, workload, pool, good, bad, good_ref, bad_ref, runs, unit, direction,
		      state, created, finished, culprit, error, report, policy, confidence, alpha, min_effect,
		      budget_runs, budget_builds, append)
	SELECT id, repo_id, workload, pool, good, bad, good_ref, bad_ref, runs, unit, direction,
	       state, created, finished, culprit, error, report, policy, confidence, alpha, min_effect,
	       budget_runs, budget_builds, append FROM jobs;

DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;
CREATE INDEX jobs_state ON jobs(state);
