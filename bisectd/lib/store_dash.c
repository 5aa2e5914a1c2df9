/*
 * store_dash: what the dashboard shows beyond the job and agent documents:
 * each agent's tasks done and failed and the task in hand, a job's runs,
 * builds and most probable commit, and a job's samples one by one.
 */
#include <sqlite3.h>

#include "store.h"
#include "store_internal.h"

int store_dash_agents_doc(json_t **out, struct store *s)
{
	/* One row per agent; the task in hand is the newest claimed one. */
	return store_rows(out, s, "SELECT a.name, "
			  "(SELECT count(*) FROM tasks t WHERE t.agent_id = a.id AND t.state = 'done') AS tasks_done, "
			  "(SELECT count(*) FROM tasks t WHERE t.agent_id = a.id AND t.state IN ('failed', 'skipped')) "
			  "AS tasks_failed, c.id AS task, c.job_id AS job, c.idx, jc.sha AS commit_sha, "
			  "jc.subject AS commit_subject, c.claimed, c.progress, c.confirm "
			  "FROM agents a LEFT JOIN tasks c ON c.id = (SELECT max(t.id) FROM tasks t WHERE "
			  "t.agent_id = a.id AND t.state = 'claimed') LEFT JOIN job_commits jc ON "
			  "jc.job_id = c.job_id AND jc.idx = c.idx ORDER BY a.name", "");
}

int store_dash_job_doc(json_t **out, struct store *s, long long id)
{
	return store_row(out, s, "SELECT (SELECT count(*) FROM samples WHERE job_id = ?1 AND value > 0) AS runs, "
			 "(SELECT count(*) FROM samples WHERE job_id = ?1 AND value <= 0) AS failed_runs, "
			 "(SELECT count(DISTINCT idx) FROM tasks WHERE job_id = ?1 AND state IN ('done', 'skipped')) "
			 "AS builds, d.best_idx, d.best_p, c.sha AS best_sha, c.subject AS best_subject, "
			 "(SELECT count(*) FROM decisions WHERE job_id = ?1) AS nr_decisions "
			 "FROM (SELECT 1) LEFT JOIN (SELECT json_extract(top, '$[0].idx') AS best_idx, "
			 "json_extract(top, '$[0].p') AS best_p FROM decisions WHERE job_id = ?1 ORDER BY id DESC LIMIT 1) d ON 1 "
			 "LEFT JOIN job_commits c ON c.job_id = ?1 AND c.idx = d.best_idx", "i", id);
}

int store_dash_samples_doc(json_t **out, struct store *s, long long job, long long max)
{
	return store_rows(out, s, "SELECT x.idx, x.task_id AS task, a.name AS agent, x.attempt, x.run, x.value, "
			  "x.error, x.created FROM samples x JOIN tasks t ON t.id = x.task_id LEFT JOIN agents a "
			  "ON a.id = t.agent_id WHERE x.job_id = ? ORDER BY x.idx, x.id LIMIT ?", "ii", job, max);
}
