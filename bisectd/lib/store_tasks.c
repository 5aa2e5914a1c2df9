/* store_tasks: tasks, their leases and chains. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "err.h"
#include "store.h"
#include "store_internal.h"
#include "util.h"

void store_task_release(struct task *t)
{
	if (!t)
		return;
	free(t->unit);
	free(t->pool);
	free(t->workload);
	free(t->append);
	free(t->config);
	free(t->repo);
	free(t->url);
	free(t->sha);
	free(t->agent_name);
	memset(t, 0, sizeof(*t));
}

void store_tasks_free(struct task *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_task_release(&t[i]);
	free(t);
}

/* Every row of st into a new array, each by fill. */
static int task_rows(struct task **out, size_t *n, struct store *s, sqlite3_stmt *st,
		     void (*fill)(struct task *, sqlite3_stmt *))
{
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	while ((rc = store_step(s, st)) == 1) {
		*out = xgrow(*out, *n, &cap, sizeof(**out));
		memset(&(*out)[*n], 0, sizeof(**out));
		fill(&(*out)[(*n)++], st);
	}
	store_finish(s, st);
	if (rc < 0) {
		store_tasks_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int store_task_add(long long *id, struct store *s, long long job, int idx, long long runs, long long time,
		   int confirm, long long after)
{
	int rc;

	if (after > 0)
		rc = store_exec(s, "INSERT INTO tasks (job_id, idx, runs, created, confirm, after_task) "
				"VALUES (?, ?, ?, ?, ?, ?)", "iiiiii", job, (long long)idx, runs, time,
				(long long)confirm, after);
	else
		rc = store_exec(s, "INSERT INTO tasks (job_id, idx, runs, created, confirm) VALUES (?, ?, ?, ?, ?)",
				"iiiii", job, (long long)idx, runs, time, (long long)confirm);
	*id = rc < 0 ? 0 : store_last_id(s);
	return rc < 0 ? rc : 0;
}

int store_task_get(struct task *t, struct store *s, long long id)
{
	sqlite3_stmt *st;
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = store_prepare(&st, s, "SELECT t.id, t.job_id, t.idx, t.state, t.attempt, t.agent_id, t.runs, "
				"j.state, j.unit FROM tasks t JOIN jobs j ON j.id = t.job_id WHERE t.id = ?", "i", id)))
		return rc;
	rc = store_step(s, st);
	if (rc == 1) {
		t->id = sqlite3_column_int64(st, 0);
		t->job = sqlite3_column_int64(st, 1);
		t->idx = sqlite3_column_int(st, 2);
		store_col_buf(t->state, sizeof(t->state), st, 3);
		t->attempt = sqlite3_column_int64(st, 4);
		t->agent = sqlite3_column_int64(st, 5);
		t->runs = sqlite3_column_int64(st, 6);
		store_col_buf(t->job_state, sizeof(t->job_state), st, 7);
		t->unit = store_col_text(st, 8);
		rc = 0;
	} else if (rc == 0) {
		rc = err_set(ERR_NOTFOUND, "task %lld does not exist", id);
	}
	store_finish(s, st);
	return rc;
}

int store_tasks_outstanding(int *out, int n, struct store *s, long long job)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, (size_t)n * sizeof(*out));
	if ((rc = store_prepare(&st, s, "SELECT idx, count(*) FROM tasks WHERE job_id = ? "
				"AND state IN ('queued', 'claimed') GROUP BY idx", "i", job)))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		int idx = sqlite3_column_int(st, 0);

		if (idx >= 0 && idx < n)
			out[idx] = sqlite3_column_int(st, 1);
	}
	store_finish(s, st);
	return rc;
}

int store_tasks_busy(long long *n, struct store *s, long long job)
{
	return store_int(n, s, "SELECT count(*) FROM tasks t LEFT JOIN tasks prev ON prev.id = "
			 "t.after_task WHERE t.job_id = ? AND t.state IN ('queued', 'claimed') AND "
			 "(prev.id IS NULL OR prev.state NOT IN ('queued', 'claimed'))", "i", job);
}

int store_jobs_idle(long long **ids, char ***pools, size_t *n, struct store *s)
{
	sqlite3_stmt *st;
	size_t cap = 0, pcap = 0;
	int rc;

	*ids = NULL;
	*pools = NULL;
	*n = 0;
	if ((rc = store_prepare(&st, s, "SELECT j.id, j.pool FROM jobs j WHERE j.state IN ('queued', 'running') "
				"AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.job_id = j.id AND "
				"t.state IN ('queued', 'claimed')) ORDER BY j.id", "")))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		*ids = xgrow(*ids, *n, &cap, sizeof(**ids));
		*pools = xgrow(*pools, *n + 1, &pcap, sizeof(**pools));
		(*ids)[*n] = sqlite3_column_int64(st, 0);
		(*pools)[*n] = store_col_text(st, 1);
		(*pools)[++*n] = NULL;
	}
	store_finish(s, st);
	if (rc < 0) {
		free(*ids);
		strv_free(*pools);
		*ids = NULL;
		*pools = NULL;
		*n = 0;
	}
	return rc;
}

int store_tasks_cancel_queued(struct store *s, long long job, long long time)
{
	int rc = store_exec(s, "UPDATE tasks SET state = 'cancelled', finished = ? WHERE job_id = ? "
			    "AND state = 'queued'", "ii", time, job);

	return rc < 0 ? rc : 0;
}

int store_tasks_cancel_open(struct store *s, long long job, long long time)
{
	int rc = store_exec(s, "UPDATE tasks SET state = 'cancelled', finished = ? WHERE job_id = ? "
			    "AND state IN ('queued', 'claimed')", "ii", time, job);

	return rc < 0 ? rc : 0;
}

/* What a claim reads of a task: claimable_row()'s columns. */
#define CLAIMABLE_SELECT "SELECT t.id, t.job_id, t.idx, t.runs, t.attempt, j.pool, j.workload, " \
	"j.append, r.name, r.url, c.sha, j.config FROM tasks t JOIN jobs j ON j.id = t.job_id " \
	"JOIN repos r ON r.id = j.repo_id JOIN job_commits c ON c.job_id = t.job_id AND c.idx = t.idx "

static void claimable_row(struct task *t, sqlite3_stmt *st)
{
	t->id = sqlite3_column_int64(st, 0);
	t->job = sqlite3_column_int64(st, 1);
	t->idx = sqlite3_column_int(st, 2);
	t->runs = sqlite3_column_int64(st, 3);
	t->attempt = sqlite3_column_int64(st, 4);
	t->pool = store_col_text(st, 5);
	t->workload = store_col_text(st, 6);
	t->append = store_col_text(st, 7);
	t->repo = store_col_text(st, 8);
	t->url = store_col_text(st, 9);
	t->sha = store_col_text(st, 10);
	t->config = store_col_text(st, 11);
	snprintf(t->state, sizeof(t->state), "queued");
}

int store_tasks_claimable(struct task **out, size_t *n, struct store *s, long long agent, long long seen_since,
			  const char *pools)
{
	sqlite3_stmt *st;
	int rc;

	*out = NULL;
	*n = 0;
	/*
	 * A link of a confirmation chain waits for the link before it, and
	 * goes to the agent that ran it while that agent is alive.
	 */
	if ((rc = store_prepare(&st, s, CLAIMABLE_SELECT "LEFT JOIN tasks prev ON prev.id = t.after_task LEFT JOIN agents pa ON pa.id = prev.agent_id "
				"WHERE t.state = 'queued' AND j.state IN ('queued', 'running') AND (t.after_task IS NULL OR "
				"(prev.state NOT IN ('queued', 'claimed') AND (prev.agent_id = ?1 OR pa.last_seen < ?2))) "
				"AND (?3 IS NULL OR j.pool IN (SELECT value FROM json_each(?3))) "
				"ORDER BY t.id LIMIT 16", "iis", agent, seen_since, pools)))
		return rc;
	return task_rows(out, n, s, st, claimable_row);
}

int store_task_claimable_get(struct task *t, struct store *s, long long id)
{
	sqlite3_stmt *st;
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = store_prepare(&st, s, CLAIMABLE_SELECT "WHERE t.id = ? AND t.state = 'queued'", "i", id)))
		return rc;
	rc = store_step(s, st);
	if (rc == 1) {
		claimable_row(t, st);
		rc = 0;
	} else if (rc == 0) {
		rc = err_set(ERR_NOTFOUND, "task %lld is not queued", id);
	}
	store_finish(s, st);
	return rc;
}

int store_task_claim(struct store *s, long long id, long long attempt, long long agent, long long lease,
		     long long time)
{
	int rc = store_exec(s, "UPDATE tasks SET state = 'claimed', attempt = ?, agent_id = ?, lease = ?, "
			    "claimed = ?, progress = NULL WHERE id = ?", "iiiii", attempt, agent, lease, time, id);

	return rc < 0 ? rc : 0;
}

int store_task_heartbeat(int *held, struct store *s, long long id, long long agent, long long attempt,
			 long long lease, const char *progress)
{
	int rc = store_exec(s, "UPDATE tasks SET lease = ?, progress = coalesce(?, progress) WHERE id = ? "
			    "AND agent_id = ? AND attempt = ? AND state = 'claimed'", "isiii",
			    lease, progress, id, agent, attempt);

	*held = rc > 0;
	return rc < 0 ? rc : 0;
}

int store_task_requeue(struct store *s, long long id, const char *why)
{
	int rc = store_exec(s, "UPDATE tasks SET state = 'queued', agent_id = NULL, lease = NULL, error = ? "
			    "WHERE id = ?", "si", why, id);

	return rc < 0 ? rc : 0;
}

int store_task_fail(struct store *s, long long id, long long time, const char *why)
{
	int rc = store_exec(s, "UPDATE tasks SET state = 'failed', finished = ?, error = ? WHERE id = ?", "isi",
			    time, why, id);

	return rc < 0 ? rc : 0;
}

int store_task_finish(struct store *s, long long id, const char *state, long long time, double build_s,
		      double run_s, const char *error, const char *log_tail)
{
	int rc = store_exec(s, "UPDATE tasks SET state = ?, finished = ?, build_s = ?, run_s = ?, error = ?, "
			    "log_tail = ? WHERE id = ?", "siddssi", state, time, build_s, run_s, error, log_tail, id);

	return rc < 0 ? rc : 0;
}

static void expired_row(struct task *t, sqlite3_stmt *st)
{
	t->id = sqlite3_column_int64(st, 0);
	t->job = sqlite3_column_int64(st, 1);
	t->idx = sqlite3_column_int(st, 2);
	t->attempt = sqlite3_column_int64(st, 3);
	t->agent_name = store_col_text(st, 4);
	snprintf(t->state, sizeof(t->state), "claimed");
}

int store_tasks_expired(struct task **out, size_t *n, struct store *s, long long time)
{
	sqlite3_stmt *st;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = store_prepare(&st, s, "SELECT t.id, t.job_id, t.idx, t.attempt, a.name FROM tasks t "
				"LEFT JOIN agents a ON a.id = t.agent_id WHERE t.state = 'claimed' AND t.lease < ?", "i",
				time)))
		return rc;
	return task_rows(out, n, s, st, expired_row);
}

/* The first column of the first row as a heap string; *out NULL when there is none. */
static int first_text(char **out, struct store *s, const char *sql, long long job, int idx)
{
	sqlite3_stmt *st;
	int rc;

	*out = NULL;
	if ((rc = store_prepare(&st, s, sql, "ii", job, (long long)idx)))
		return rc;
	if ((rc = store_step(s, st)) == 1) {
		*out = store_col_text(st, 0);
		rc = 0;
	}
	store_finish(s, st);
	return rc;
}

int store_task_last_error(char **out, struct store *s, long long job, int idx)
{
	return first_text(out, s, "SELECT error FROM tasks WHERE job_id = ? AND idx = ? AND error IS NOT NULL "
			  "ORDER BY id DESC LIMIT 1", job, idx);
}

int store_task_costs(struct task_costs *out, struct store *s, long long job)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = store_prepare(&st, s, "SELECT avg(build_s), sum(run_s) / sum(runs), "
				"(SELECT avg(build_s) FROM tasks WHERE job_id = ?1 AND state = 'done' AND build_s > 0) "
				"FROM tasks WHERE job_id = ?1 AND state = 'done' AND runs > 0", "i", job)))
		return rc;
	if ((rc = store_step(s, st)) == 1) {
		out->build = sqlite3_column_double(st, 0);
		out->run = sqlite3_column_double(st, 1);
		out->per_build = sqlite3_column_double(st, 2);
		rc = 0;
	}
	store_finish(s, st);
	return rc;
}
