-- bisectd schema, version 1.
-- Applied in one transaction at start-up; PRAGMA user_version records it.

CREATE TABLE repos (
	id        INTEGER PRIMARY KEY,
	name      TEXT NOT NULL UNIQUE,
	url       TEXT NOT NULL
);

CREATE TABLE agents (
	id         INTEGER PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	labels     TEXT NOT NULL DEFAULT '[]',   -- JSON array
	registered INTEGER NOT NULL,
	last_seen  INTEGER NOT NULL
);

CREATE TABLE jobs (
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
	           CHECK (state IN ('queued', 'running', 'done', 'failed', 'not-reproduced', 'cancelled')),
	created    INTEGER NOT NULL,
	finished   INTEGER,
	culprit    INTEGER,           -- idx into job_commits
	error      TEXT,
	report     TEXT               -- JSON, once ended
);
CREATE INDEX jobs_state ON jobs(state);

-- The commits of a job in topological order (parents first): idx 0 is
-- the good end, 1..N the candidates, N the bad end.
CREATE TABLE job_commits (
	job_id     INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	idx        INTEGER NOT NULL,
	sha        TEXT NOT NULL,
	subject    TEXT NOT NULL,
	parents    TEXT NOT NULL DEFAULT '[]', -- JSON array of idx inside the set
	state      TEXT NOT NULL DEFAULT 'untested'
	           CHECK (state IN ('untested', 'queued', 'good', 'bad', 'skipped')),
	PRIMARY KEY (job_id, idx)
);

CREATE TABLE tasks (
	id         INTEGER PRIMARY KEY,
	job_id     INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	idx        INTEGER NOT NULL,
	runs       INTEGER NOT NULL,
	state      TEXT NOT NULL DEFAULT 'queued'
	           CHECK (state IN ('queued', 'claimed', 'done', 'skipped', 'failed', 'cancelled')),
	attempt    INTEGER NOT NULL DEFAULT 0,
	agent_id   INTEGER REFERENCES agents(id),
	lease      INTEGER,          -- unix time the claim expires
	created    INTEGER NOT NULL,
	claimed    INTEGER,
	finished   INTEGER,
	build_s    REAL,
	run_s      REAL,
	error      TEXT,
	log_tail   TEXT,
	FOREIGN KEY (job_id, idx) REFERENCES job_commits(job_id, idx)
);
CREATE INDEX tasks_state ON tasks(state, id);
CREATE INDEX tasks_job ON tasks(job_id);

-- One row per run. (task_id, attempt, run) is unique: a retried upload
-- never doubles a sample.
CREATE TABLE samples (
	id         INTEGER PRIMARY KEY,
	task_id    INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	attempt    INTEGER NOT NULL,
	run        INTEGER NOT NULL,
	job_id     INTEGER NOT NULL,
	idx        INTEGER NOT NULL,
	value      REAL NOT NULL,     -- <= 0: a failed run
	unit       TEXT NOT NULL,
	error      TEXT,
	created    INTEGER NOT NULL,
	UNIQUE (task_id, attempt, run)
);
CREATE INDEX samples_commit ON samples(job_id, idx);

-- Per-commit summaries, rewritten in the same transaction as the samples.
CREATE TABLE summaries (
	job_id     INTEGER NOT NULL,
	idx        INTEGER NOT NULL,
	n          INTEGER NOT NULL,  -- successful runs
	failures   INTEGER NOT NULL,
	hmean      REAL,
	amean      REAL,
	cv         REAL,
	PRIMARY KEY (job_id, idx)
);

CREATE TABLE events (
	id         INTEGER PRIMARY KEY,
	time       INTEGER NOT NULL,
	job_id     INTEGER,
	kind       TEXT NOT NULL,
	message    TEXT NOT NULL
);
CREATE INDEX events_job ON events(job_id, id);
