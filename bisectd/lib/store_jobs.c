/* store_jobs: repos, jobs, their commits, decisions and events. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "store.h"
#include "store_internal.h"
#include "util.h"

int store_repo_put(struct store *s, const char *name, const char *url)
{
	int rc = store_exec(s, "INSERT INTO repos (name, url) VALUES (?, ?) "
			    "ON CONFLICT(name) DO UPDATE SET url = excluded.url", "ss", name, url);

	return rc < 0 ? rc : 0;
}

int store_repo_id(long long *id, struct store *s, const char *name)
{
	return store_int(id, s, "SELECT id FROM repos WHERE name = ?", "s", name);
}

int store_event_add(struct store *s, long long job, long long time, const char *kind, const char *msg)
{
	int rc;

	if (job > 0)
		rc = store_exec(s, "INSERT INTO events (time, job_id, kind, message) VALUES (?, ?, ?, ?)",
				"iiss", time, job, kind, msg);
	else
		rc = store_exec(s, "INSERT INTO events (time, job_id, kind, message) VALUES (?, NULL, ?, ?)",
				"iss", time, kind, msg);
	return rc < 0 ? rc : 0;
}

#define JOB_COLUMNS "id, repo_id, workload, pool, good, bad, good_ref, bad_ref, runs, unit, direction, " \
	"state, created, finished, culprit, error, policy, confidence, alpha, min_effect, budget_runs, " \
	"budget_builds, budget_seconds, append, config, end_runs, ends_max"

static void job_from_row(struct job *j, sqlite3_stmt *st)
{
	j->id = sqlite3_column_int64(st, 0);
	j->repo_id = sqlite3_column_int64(st, 1);
	j->workload = store_col_text(st, 2);
	j->pool = store_col_text(st, 3);
	j->good = store_col_text(st, 4);
	j->bad = store_col_text(st, 5);
	j->good_ref = store_col_text(st, 6);
	j->bad_ref = store_col_text(st, 7);
	j->runs = sqlite3_column_int64(st, 8);
	j->unit = store_col_text(st, 9);
	j->higher = !strcmp((const char *)sqlite3_column_text(st, 10), "higher");
	store_col_buf(j->state, sizeof(j->state), st, 11);
	j->created = sqlite3_column_int64(st, 12);
	j->finished = sqlite3_column_int64(st, 13);
	j->culprit = sqlite3_column_type(st, 14) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 14);
	j->error = store_col_text(st, 15);
	store_col_buf(j->policy, sizeof(j->policy), st, 16);
	j->confidence = sqlite3_column_double(st, 17);
	j->alpha = sqlite3_column_double(st, 18);
	j->min_effect = sqlite3_column_double(st, 19);
	j->budget_runs = sqlite3_column_int64(st, 20);
	j->budget_builds = sqlite3_column_int64(st, 21);
	j->budget_seconds = sqlite3_column_int64(st, 22);
	j->append = store_col_text(st, 23);
	j->config = store_col_text(st, 24);
	j->end_runs = sqlite3_column_int64(st, 25);
	j->ends_max = sqlite3_column_int64(st, 26);
}

int store_job_get(struct job *job, struct store *s, long long id)
{
	sqlite3_stmt *st;
	int rc;

	memset(job, 0, sizeof(*job));
	job->culprit = -1;
	if ((rc = store_prepare(&st, s, "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?", "i", id)))
		return rc;
	rc = store_step(s, st);
	if (rc == 1) {
		job_from_row(job, st);
		rc = 0;
	} else if (rc == 0) {
		rc = err_set(ERR_NOTFOUND, "job %lld does not exist", id);
	}
	store_finish(s, st);
	return rc;
}

void store_job_release(struct job *j)
{
	if (!j)
		return;
	free(j->workload);
	free(j->pool);
	free(j->good);
	free(j->bad);
	free(j->good_ref);
	free(j->bad_ref);
	free(j->unit);
	free(j->error);
	free(j->append);
	free(j->config);
	memset(j, 0, sizeof(*j));
	j->culprit = -1;
}

int store_job_insert(long long *id, struct store *s, const struct job *j)
{
	int rc = store_exec(s, "INSERT INTO jobs (repo_id, workload, pool, good, bad, good_ref, bad_ref, runs, "
			    "unit, direction, created, policy, confidence, alpha, min_effect, budget_runs, budget_builds, "
			    "append, budget_seconds, config, end_runs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
			    "?, ?, ?, ?, ?, ?, ?)",
			    "issssssissisdddiisisi", j->repo_id, j->workload, j->pool, j->good, j->bad, j->good_ref,
			    j->bad_ref, j->runs, j->unit, j->higher ? "higher" : "lower", j->created, j->policy,
			    j->confidence, j->alpha, j->min_effect, j->budget_runs, j->budget_builds, j->append,
			    j->budget_seconds, j->config, j->end_runs);

	*id = rc < 0 ? 0 : store_last_id(s);
	return rc < 0 ? rc : 0;
}

int store_job_finish(struct store *s, long long id, const char *state, long long finished, int culprit,
		     const char *report, const char *error)
{
	int rc;

	if (culprit >= 0)
		rc = store_exec(s, "UPDATE jobs SET state = ?, finished = ?, culprit = ?, report = ?, "
				"error = ? WHERE id = ?", "siissi", state, finished, (long long)culprit, report, error, id);
	else
		rc = store_exec(s, "UPDATE jobs SET state = ?, finished = ?, culprit = NULL, report = ?, "
				"error = ? WHERE id = ?", "sissi", state, finished, report, error, id);
	return rc < 0 ? rc : 0;
}

int store_job_resume(struct store *s, long long id, const char *from, long long budget_runs, long long budget_builds,
		     long long ends_max, long long budget_seconds)
{
	int rc = store_exec(s, "UPDATE jobs SET state = 'running', finished = NULL, culprit = NULL, report = NULL, "
			    "error = NULL, budget_runs = ?, budget_builds = ?, budget_seconds = ?, "
			    "ends_max = max(ends_max, ?) WHERE id = ? AND state = ?", "iiiiis", budget_runs,
			    budget_builds, budget_seconds, ends_max, id, from);

	if (rc < 0)
		return rc;
	return rc == 0 ? err_set(ERR_CONFLICT, "job %lld is not %s", id, from) : 0;
}

int store_job_set_running(struct store *s, long long id)
{
	int rc = store_exec(s, "UPDATE jobs SET state = 'running' WHERE id = ? AND state = 'queued'", "i", id);

	return rc < 0 ? rc : 0;
}

int store_job_set_auto_budgets(struct store *s, long long id, long long runs, long long seconds)
{
	int rc = store_exec(s, "UPDATE jobs SET budget_runs_auto = nullif(?1, 0), budget_seconds_auto = nullif(?2, 0) "
			    "WHERE id = ?3 AND (budget_runs_auto IS NOT nullif(?1, 0) OR "
			    "budget_seconds_auto IS NOT nullif(?2, 0))", "iii", runs, seconds, id);

	return rc < 0 ? rc : 0;
}

int store_job_ids(long long **ids, size_t *n, struct store *s, int max)
{
	return store_ints(ids, n, s, "SELECT id FROM jobs ORDER BY id DESC LIMIT ?", "i", (long long)max);
}

int store_job_reproduced(int *yes, struct store *s, long long id)
{
	long long one;
	/* Not 'done': a job that ended at its ends (undecided there, then resumed) did not reproduce. */
	int rc = store_int(&one, s, "SELECT 1 FROM decisions WHERE job_id = ? AND state IN ('search', 'confirm') "
			   "LIMIT 1", "i", id);

	*yes = rc == 0;
	return rc == ERR_NOTFOUND ? 0 : rc;
}

int store_job_commits(struct job_commit **out, int *n, struct store *s, long long job)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = store_prepare(&st, s, "SELECT idx, state, parents FROM job_commits WHERE job_id = ? ORDER BY idx",
				"i", job)))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		struct job_commit *c;

		*out = xgrow(*out, *n, &cap, sizeof(**out));
		c = &(*out)[(*n)++];
		c->idx = sqlite3_column_int(st, 0);
		store_col_buf(c->state, sizeof(c->state), st, 1);
		store_parse_ints(&c->parents, &c->nr_parents, (const char *)sqlite3_column_text(st, 2));
	}
	store_finish(s, st);
	if (rc < 0) {
		store_job_commits_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

void store_job_commits_free(struct job_commit *c, int n)
{
	for (int i = 0; i < n; i++)
		free(c[i].parents);
	free(c);
}

int store_job_commit_add(struct store *s, long long job, int idx, const char *sha, const char *subject,
			 const int *parents, int nr_parents)
{
	struct sbuf ps = SBUF_INIT;
	int rc;

	if (!parents)
		return (rc = store_exec(s, "INSERT INTO job_commits (job_id, idx, sha, subject) VALUES (?, ?, ?, ?)",
					"iiss", job, (long long)idx, sha, subject)) < 0 ? rc : 0;
	sbuf_adds(&ps, "[");
	for (int j = 0; j < nr_parents; j++)
		sbuf_addf(&ps, "%s%d", j ? "," : "", parents[j]);
	sbuf_adds(&ps, "]");
	rc = store_exec(s, "INSERT INTO job_commits (job_id, idx, sha, subject, parents) VALUES (?, ?, ?, ?, ?)",
			"iisss", job, (long long)idx, sha, subject, ps.buf);
	sbuf_release(&ps);
	return rc < 0 ? rc : 0;
}

int store_job_commit_set_state(struct store *s, long long job, int idx, const char *state)
{
	int rc = store_exec(s, "UPDATE job_commits SET state = ? WHERE job_id = ? AND idx = ?",
			    "sii", state, job, (long long)idx);

	return rc < 0 ? rc : 0;
}

int store_job_commit_queued(struct store *s, long long job, int idx)
{
	int rc = store_exec(s, "UPDATE job_commits SET state = 'queued' WHERE job_id = ? AND idx = ? "
			    "AND state = 'untested'", "ii", job, (long long)idx);

	return rc < 0 ? rc : 0;
}

int store_decision_add(struct store *s, long long job, long long time, const char *state, const char *queries,
		       const char *top, const char *why, const char *agents)
{
	int rc = store_exec(s, "INSERT INTO decisions (job_id, time, state, queries, top, why, agents) VALUES "
			    "(?, ?, ?, ?, ?, ?, ?)", "iisssss", job, time, state, queries, top, why, agents);

	return rc < 0 ? rc : 0;
}

int store_job_agent_ids(long long **ids, size_t *n, struct store *s, long long job)
{
	return store_ints(ids, n, s, "SELECT DISTINCT agent_id FROM agent_sums WHERE job_id = ? AND n > 0 "
			  "ORDER BY agent_id", "i", job);
}

int store_job_levels_doc(json_t **out, struct store *s, long long job)
{
	json_t *row = NULL;
	int rc;

	*out = NULL;
	rc = store_row(&row, s, "SELECT agents AS agents_json FROM decisions WHERE job_id = ? AND agents IS NOT NULL "
		       "ORDER BY id DESC LIMIT 1", "i", job);
	if (rc == ERR_NOTFOUND) {
		err_clear();
		return 0;
	}
	if (rc == 0 && json_is_array(json_object_get(row, "agents")))
		*out = json_incref(json_object_get(row, "agents"));
	json_decref(row);
	return rc;
}

/* --- the API's documents ----------------------------------------------- */

int store_job_doc(json_t **out, struct store *s, long long id)
{
	return store_row(out, s, "SELECT j.id, r.name AS repo, j.workload, j.pool, j.good, j.bad, j.good_ref, "
			 "j.bad_ref, j.runs, j.unit, j.direction, j.state, j.created, j.finished, j.culprit, "
			 "j.error, j.report AS report_json, j.policy, j.confidence, j.alpha, j.min_effect, "
			 "j.budget_runs, j.budget_builds, j.append, j.config AS config_json, j.budget_seconds, "
			 "j.budget_runs_auto, j.budget_seconds_auto, j.end_runs, nullif(j.ends_max, 0) AS ends_max FROM jobs j JOIN repos r ON r.id = j.repo_id WHERE j.id = ?", "i", id);
}

int store_job_nr_commits(long long *n, struct store *s, long long id)
{
	return store_int(n, s, "SELECT count(*) FROM job_commits WHERE job_id = ?", "i", id);
}

int store_job_commit_doc(json_t **out, struct store *s, long long job, int idx)
{
	return store_row(out, s, "SELECT idx, sha, subject FROM job_commits WHERE job_id = ? AND idx = ?",
			 "ii", job, (long long)idx);
}

/*
 * A commit's state as the API shows it (c: job_commits, s: its summary):
 * good, bad and skipped as the engine set them; in a job's live list,
 * running (a task of it claimed) or queued (one waiting); else measured
 * (runs in; the store keeps 'queued' from its first task on) or untested.
 * A report's commits, made as the job ends, say only what their runs are.
 */
#define STATE_SET "CASE WHEN c.state IN ('good', 'bad', 'skipped') THEN c.state "
#define STATE_OPEN "WHEN o.claimed THEN 'running' WHEN o.idx IS NOT NULL THEN 'queued' "
/* o for STATE_OPEN: the job's (?1) commits with a task open, from one pass over its tasks (index tasks_job). */
#define OPEN_TASKS \
	"LEFT JOIN (SELECT idx, max(state = 'claimed') AS claimed FROM tasks WHERE state IN ('queued', " \
	"'claimed') AND job_id = ?1 GROUP BY idx) o ON o.idx = c.idx "
#define STATE_RUNS "WHEN coalesce(s.n, 0) + coalesce(s.failures, 0) > 0 THEN 'measured' ELSE 'untested' END AS state"

int store_job_commit_summary_doc(json_t **out, struct store *s, long long job, int idx)
{
	return store_row(out, s, "SELECT c.idx, c.sha, c.subject, " STATE_SET STATE_RUNS ", s.n, s.failures, s.hmean, "
			 "s.amean, s.cv FROM job_commits c LEFT JOIN summaries s ON s.job_id = c.job_id "
			 "AND s.idx = c.idx WHERE c.job_id = ? AND c.idx = ?", "ii", job, (long long)idx);
}

int store_job_progress_doc(json_t **out, struct store *s, long long id)
{
	return store_row(out, s, "SELECT (SELECT count(*) FROM tasks WHERE job_id = ?1 AND state IN "
			 "('done', 'skipped', 'failed')) AS tasks_done, (SELECT count(*) FROM tasks WHERE job_id = ?1 "
			 "AND state != 'cancelled') AS tasks_total, (SELECT count(*) FROM samples WHERE job_id = ?1) "
			 "AS samples, (SELECT count(*) FROM job_commits WHERE job_id = ?1 AND state IN ('good', 'bad')) "
			 "AS classified, (SELECT count(DISTINCT idx) FROM samples WHERE job_id = ?1) AS measured",
			 "i", id);
}

int store_job_running_doc(json_t **out, struct store *s, long long id)
{
	return store_rows(out, s, "SELECT t.id AS task, t.idx, a.name AS agent, t.claimed, t.progress FROM tasks t "
			  "JOIN agents a ON a.id = t.agent_id WHERE t.job_id = ? AND t.state = 'claimed' ORDER BY t.id",
			  "i", id);
}

int store_job_commits_doc(json_t **out, struct store *s, long long id)
{
	return store_rows(out, s, "SELECT c.idx, c.sha, c.subject, c.parents AS parents_json, " STATE_SET STATE_OPEN STATE_RUNS ", "
			  "s.n, s.failures, s.hmean, s.amean, s.cv FROM job_commits c LEFT JOIN summaries s "
			  "ON s.job_id = c.job_id AND s.idx = c.idx " OPEN_TASKS "WHERE c.job_id = ?1 AND (c.state != 'untested' "
			  "OR c.idx = 0 OR c.idx = (SELECT max(idx) FROM job_commits WHERE job_id = c.job_id)) "
			  "ORDER BY c.idx", "i", id);
}

int store_job_decisions_doc(json_t **out, struct store *s, long long id)
{
	return store_rows(out, s, "SELECT time, state, queries AS queries_json, top AS top_json, why FROM "
			  "(SELECT * FROM decisions WHERE job_id = ? ORDER BY id DESC LIMIT 50) ORDER BY id", "i", id);
}

int store_job_events_doc(json_t **out, struct store *s, long long id)
{
	return store_rows(out, s, "SELECT time, kind, message FROM (SELECT * FROM events WHERE job_id = ? "
			  "ORDER BY id DESC LIMIT 200) ORDER BY id", "i", id);
}

int store_job_active_ids(long long **ids, size_t *n, struct store *s)
{
	return store_ints(ids, n, s, "SELECT id FROM jobs WHERE state IN ('queued', 'running') ORDER BY id", "");
}
