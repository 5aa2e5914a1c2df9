-- bisectd schema, version 2: the probabilistic engine's job options,
-- interleaved confirmation tasks, and the decisions it takes.

ALTER TABLE jobs ADD COLUMN policy TEXT NOT NULL DEFAULT 'bisectd'
	CHECK (policy IN ('bisectd', 'split'));
ALTER TABLE jobs ADD COLUMN confidence REAL NOT NULL DEFAULT 0.99;
ALTER TABLE jobs ADD COLUMN alpha REAL NOT NULL DEFAULT 0.01;
ALTER TABLE jobs ADD COLUMN min_effect REAL NOT NULL DEFAULT 0.01;
ALTER TABLE jobs ADD COLUMN budget_runs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN budget_builds INTEGER NOT NULL DEFAULT 0;

-- A confirmation is a chain of one-run tasks, parent and culprit in turn,
-- on one agent: each link waits for the one before and goes to its agent.
ALTER TABLE tasks ADD COLUMN confirm INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN after_task INTEGER REFERENCES tasks(id);

CREATE TABLE decisions (
	id         INTEGER PRIMARY KEY,
	job_id     INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	time       INTEGER NOT NULL,
	state      TEXT NOT NULL,     -- ends, search, confirm, done
	queries    TEXT NOT NULL,     -- JSON: [{"idx", "runs", "mass", "gain", "confirm"}]
	top        TEXT NOT NULL,     -- JSON: [{"idx", "p"}], the posterior's most probable commits
	why        TEXT NOT NULL
);
CREATE INDEX decisions_job ON decisions(job_id, id);
