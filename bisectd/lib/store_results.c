/* store_results: the samples agents upload and the per-commit summaries. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "store.h"
#include "store_internal.h"
#include "util.h"

int store_sample_add(struct store *s, const struct sample *x)
{
	int rc = store_exec(s, "INSERT INTO samples (task_id, attempt, run, job_id, idx, value, unit, "
			    "error, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", "iiiiidssi", x->task,
			    x->attempt, x->run, x->job, (long long)x->idx, x->value, x->unit, x->error, x->created);

	return rc < 0 ? rc : 0;
}

int store_job_samples(struct sample **out, size_t *n, struct store *s, long long job)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = store_prepare(s, &st, "SELECT s.id, s.task_id, s.attempt, s.run, s.idx, s.value, s.created, "
				"coalesce(t.agent_id, 0), t.confirm FROM samples s JOIN tasks t ON t.id = s.task_id "
				"WHERE s.job_id = ? ORDER BY s.id", "i", job)))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		struct sample *x;

		*out = xgrow(*out, *n, &cap, sizeof(**out));
		x = &(*out)[(*n)++];
		memset(x, 0, sizeof(*x));
		x->id = sqlite3_column_int64(st, 0);
		x->task = sqlite3_column_int64(st, 1);
		x->attempt = sqlite3_column_int64(st, 2);
		x->run = sqlite3_column_int64(st, 3);
		x->job = job;
		x->idx = sqlite3_column_int(st, 4);
		x->value = sqlite3_column_double(st, 5);
		x->created = sqlite3_column_int64(st, 6);
		x->agent = sqlite3_column_int64(st, 7);
		x->confirm = sqlite3_column_int(st, 8);
	}
	sqlite3_finalize(st);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int store_commit_values(double **out, size_t *n, struct store *s, long long job, int idx)
{
	return store_doubles(s, out, n, "SELECT value FROM samples WHERE job_id = ? AND idx = ? ORDER BY id",
			     "ii", job, (long long)idx);
}

int store_task_nr_samples(long long *n, struct store *s, long long task, long long attempt)
{
	return store_int(s, n, "SELECT count(*) FROM samples WHERE task_id = ? AND attempt = ?", "ii", task, attempt);
}

int store_sample_last_error(char **out, struct store *s, long long job, int idx)
{
	sqlite3_stmt *st;
	int rc;

	*out = NULL;
	if ((rc = store_prepare(s, &st, "SELECT error FROM samples WHERE job_id = ? AND idx = ? AND "
				"error IS NOT NULL ORDER BY id DESC LIMIT 1", "ii", job, (long long)idx)))
		return rc;
	if ((rc = store_step(s, st)) == 1) {
		*out = store_col_text(st, 0);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

int store_summary_put(struct store *s, long long job, int idx, const struct summary *sum)
{
	int rc = store_exec(s, "INSERT OR REPLACE INTO summaries (job_id, idx, n, failures, hmean, amean, cv) "
			    "VALUES (?, ?, ?, ?, ?, ?, ?)", "iiiiddd", job, (long long)idx, (long long)sum->n,
			    (long long)sum->failures, sum->hmean, sum->amean, sum->cv);

	return rc < 0 ? rc : 0;
}

int store_summaries(struct summary *sum, int n, struct store *s, long long job)
{
	sqlite3_stmt *st;
	int rc;

	memset(sum, 0, (size_t)n * sizeof(*sum));
	if ((rc = store_prepare(s, &st, "SELECT idx, n, failures, hmean, amean, cv FROM summaries WHERE job_id = ?",
				"i", job)))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		int idx = sqlite3_column_int(st, 0);

		if (idx < 0 || idx >= n)
			continue;
		sum[idx].n = (size_t)sqlite3_column_int64(st, 1);
		sum[idx].failures = (size_t)sqlite3_column_int64(st, 2);
		sum[idx].hmean = sqlite3_column_double(st, 3);
		sum[idx].amean = sqlite3_column_double(st, 4);
		sum[idx].cv = sqlite3_column_double(st, 5);
	}
	sqlite3_finalize(st);
	return rc;
}
