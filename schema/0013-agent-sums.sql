-- bisectd schema, version 13: each agent's running sums of its runs of a
-- commit (stats_acc in lib/stats.h), kept as an upload adds them, so that
-- a job's commits at one agent's level (coord_levels.c) cost a row per
-- commit and agent, not every run of the job. Filled here from the
-- samples already kept; a run with a value <= 0 (or none) is a failure.
CREATE TABLE agent_sums (
	job_id   INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	idx      INTEGER NOT NULL,
	agent_id INTEGER NOT NULL,    -- 0: a task without an agent
	n        INTEGER NOT NULL,
	failures INTEGER NOT NULL,
	sum      REAL NOT NULL,
	sum_inv  REAL NOT NULL,
	sum_inv2 REAL NOT NULL,
	mean     REAL NOT NULL,
	m2       REAL NOT NULL,
	min      REAL,
	max      REAL,
	PRIMARY KEY (job_id, idx, agent_id)
);

INSERT INTO agent_sums (job_id, idx, agent_id, n, failures, sum, sum_inv, sum_inv2, mean, m2, min, max)
SELECT s.job_id, s.idx, coalesce(t.agent_id, 0),
	count(CASE WHEN s.value > 0 THEN 1 END),
	count(CASE WHEN s.value > 0 THEN NULL ELSE 1 END),
	coalesce(sum(CASE WHEN s.value > 0 THEN s.value END), 0),
	coalesce(sum(CASE WHEN s.value > 0 THEN 1.0 / s.value END), 0),
	coalesce(sum(CASE WHEN s.value > 0 THEN 1.0 / (s.value * s.value) END), 0),
	coalesce(avg(CASE WHEN s.value > 0 THEN s.value END), 0),
	max(0, coalesce(sum(CASE WHEN s.value > 0 THEN s.value * s.value END) -
		sum(CASE WHEN s.value > 0 THEN s.value END) * sum(CASE WHEN s.value > 0 THEN s.value END) /
		count(CASE WHEN s.value > 0 THEN 1 END), 0)),
	min(CASE WHEN s.value > 0 THEN s.value END),
	max(CASE WHEN s.value > 0 THEN s.value END)
FROM samples s JOIN tasks t ON t.id = s.task_id
GROUP BY s.job_id, s.idx, coalesce(t.agent_id, 0);
