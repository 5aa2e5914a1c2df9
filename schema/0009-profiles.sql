-- bisectd schema, version 9: perf profiles of a culprit and its parent,
-- for a workload with `profile: true` (docs/REPORTS.md, "Profiles").
--
-- When the engine names a culprit, the job's verdict is held here (the
-- report as the engine made it) while one profile task on the parent and
-- one on the culprit run, chained on one agent; once both are in or have
-- failed, the job ends `done` with that verdict and the profiles' diff. A
-- failed profile says why in its row; the culprit stands.

CREATE TABLE profile_holds (
	job_id   INTEGER PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
	culprit  INTEGER NOT NULL,    -- idx into job_commits
	report   TEXT NOT NULL,       -- JSON: the verdict's report, without the profiles
	created  INTEGER NOT NULL
);

CREATE TABLE profiles (
	id       INTEGER PRIMARY KEY,
	job_id   INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	role     TEXT NOT NULL CHECK (role IN ('parent', 'culprit')),
	idx      INTEGER NOT NULL,
	task_id  INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	state    TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'ok', 'failed')),
	agent    TEXT,                -- who recorded it
	error    TEXT,                -- why it failed
	report   TEXT,                -- `perf report --stdio` as the agent uploaded it
	finished INTEGER,
	UNIQUE (job_id, role)
);
CREATE INDEX profiles_task ON profiles(task_id);
