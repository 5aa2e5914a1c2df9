/*
 * store_export: what a job's reports and exports read beyond the API's
 * documents: every sample with its commit, task and agent, and the agents
 * that measured the job.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "store.h"
#include "store_internal.h"
#include "util.h"

void store_export_samples_free(struct export_sample *x, size_t n)
{
	for (size_t i = 0; x && i < n; i++) {
		free(x[i].sha);
		free(x[i].subject);
		free(x[i].agent);
		free(x[i].unit);
		free(x[i].error);
	}
	free(x);
}

int store_export_samples(struct export_sample **out, size_t *n, struct store *s, long long job)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = store_prepare(&st, s, "SELECT s.idx, c.sha, c.subject, s.task_id, a.name, s.attempt, s.run, "
				"s.value, s.unit, s.error, s.created FROM samples s "
				"JOIN job_commits c ON c.job_id = s.job_id AND c.idx = s.idx "
				"JOIN tasks t ON t.id = s.task_id LEFT JOIN agents a ON a.id = t.agent_id "
				"WHERE s.job_id = ? ORDER BY s.id", "i", job)))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		struct export_sample *x;

		*out = xgrow(*out, *n, &cap, sizeof(**out));
		x = &(*out)[(*n)++];
		x->idx = sqlite3_column_int(st, 0);
		x->sha = store_col_text(st, 1);
		x->subject = store_col_text(st, 2);
		x->task = sqlite3_column_int64(st, 3);
		x->agent = store_col_text(st, 4);
		x->attempt = sqlite3_column_int64(st, 5);
		x->run = sqlite3_column_int64(st, 6);
		x->value = sqlite3_column_double(st, 7);
		x->unit = store_col_text(st, 8);
		x->error = store_col_text(st, 9);
		x->created = sqlite3_column_int64(st, 10);
	}
	store_finish(s, st);
	if (rc < 0) {
		store_export_samples_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc < 0 ? rc : 0;
}

void store_job_agents_free(struct job_agent *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++) {
		free(a[i].name);
		strv_free(a[i].labels);
	}
	free(a);
}

int store_job_agents(struct job_agent **out, size_t *n, struct store *s, long long job)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = store_prepare(&st, s, "SELECT a.name, a.labels, a.last_seen, "
				"count(DISTINCT CASE WHEN t.state = 'done' THEN t.id END), "
				"(SELECT count(*) FROM samples x JOIN tasks y ON y.id = x.task_id "
				" WHERE y.job_id = ? AND y.agent_id = a.id AND x.value > 0) "
				"FROM tasks t JOIN agents a ON a.id = t.agent_id WHERE t.job_id = ? "
				"GROUP BY a.id ORDER BY a.name", "ii", job, job)))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		struct job_agent *a;
		char *labels;

		*out = xgrow(*out, *n, &cap, sizeof(**out));
		a = &(*out)[(*n)++];
		a->name = store_col_text(st, 0);
		labels = store_col_text(st, 1);
		a->labels = store_parse_strv(labels);
		free(labels);
		a->last_seen = sqlite3_column_int64(st, 2);
		a->tasks = sqlite3_column_int64(st, 3);
		a->runs = sqlite3_column_int64(st, 4);
	}
	store_finish(s, st);
	if (rc < 0) {
		store_job_agents_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc < 0 ? rc : 0;
}
