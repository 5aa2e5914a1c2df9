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
	return store_samples_add(s, x, 1);
}

static int bind_text(sqlite3_stmt *st, int i, const char *v)
{
	return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

/* One statement prepared for all of an upload's samples: an upload costs its rows, not a parse each. */
int store_samples_add(struct store *s, const struct sample *x, size_t n)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(&st, s, "INSERT INTO samples (task_id, attempt, run, job_id, idx, value, unit, "
				"error, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", "")))
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (sqlite3_bind_int64(st, 1, x[i].task) || sqlite3_bind_int64(st, 2, x[i].attempt) ||
		    sqlite3_bind_int64(st, 3, x[i].run) || sqlite3_bind_int64(st, 4, x[i].job) ||
		    sqlite3_bind_int64(st, 5, x[i].idx) || sqlite3_bind_double(st, 6, x[i].value) ||
		    bind_text(st, 7, x[i].unit) || bind_text(st, 8, x[i].error) ||
		    sqlite3_bind_int64(st, 9, x[i].created))
			rc = store_db_err(s, "bind");
		else if (sqlite3_step(st) != SQLITE_DONE)
			rc = store_db_err(s, "insert sample");
		sqlite3_reset(st);
	}
	store_finish(s, st);
	return rc;
}

int store_job_samples(struct sample **out, size_t *n, struct store *s, long long job)
{
	return store_job_samples_after(out, n, s, job, 0);
}

int store_job_samples_after(struct sample **out, size_t *n, struct store *s, long long job, long long after)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	/*
	 * All of a job's samples through its index; the ones since `after`
	 * through the rowid range (the unary + keeps sqlite off the job's
	 * index, which would walk every sample of the job): they are the last
	 * rows of the table, so reading them costs what they are, not the job.
	 */
	if (after <= 0)
		rc = store_prepare(&st, s, "SELECT s.id, s.task_id, s.attempt, s.run, s.idx, s.value, s.created, "
				   "coalesce(t.agent_id, 0), t.confirm FROM samples s JOIN tasks t ON t.id = s.task_id "
				   "WHERE s.job_id = ? ORDER BY s.id", "i", job);
	else
		rc = store_prepare(&st, s, "SELECT s.id, s.task_id, s.attempt, s.run, s.idx, s.value, s.created, "
				   "coalesce(t.agent_id, 0), t.confirm FROM samples s JOIN tasks t ON t.id = s.task_id "
				   "WHERE s.id > ? AND +s.job_id = ? ORDER BY s.id", "ii", after, job);
	if (rc)
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
	store_finish(s, st);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int store_commit_values(double **out, size_t *n, struct store *s, long long job, int idx)
{
	return store_doubles(out, n, s, "SELECT value FROM samples WHERE job_id = ? AND idx = ? ORDER BY id",
			     "ii", job, (long long)idx);
}

int store_task_nr_samples(long long *n, struct store *s, long long task, long long attempt)
{
	return store_int(n, s, "SELECT count(*) FROM samples WHERE task_id = ? AND attempt = ?", "ii", task, attempt);
}

int store_sample_last_error(char **out, struct store *s, long long job, int idx)
{
	sqlite3_stmt *st;
	int rc;

	*out = NULL;
	if ((rc = store_prepare(&st, s, "SELECT error FROM samples WHERE job_id = ? AND idx = ? AND "
				"error IS NOT NULL ORDER BY id DESC LIMIT 1", "ii", job, (long long)idx)))
		return rc;
	if ((rc = store_step(s, st)) == 1) {
		*out = store_col_text(st, 0);
		rc = 0;
	}
	store_finish(s, st);
	return rc;
}

int store_summary_put(struct store *s, long long job, int idx, const struct summary *sum)
{
	int rc = store_exec(s, "INSERT OR REPLACE INTO summaries (job_id, idx, n, failures, hmean, amean, cv) "
			    "VALUES (?, ?, ?, ?, ?, ?, ?)", "iiiiddd", job, (long long)idx, (long long)sum->n,
			    (long long)sum->failures, sum->hmean, sum->amean, sum->cv);

	return rc < 0 ? rc : 0;
}

int store_summary_acc(struct stats_acc *a, struct store *s, long long job, int idx)
{
	sqlite3_stmt *st;
	int rc, legacy = 0;

	memset(a, 0, sizeof(*a));
	if ((rc = store_prepare(&st, s, "SELECT n, failures, acc_sum, acc_sum_inv, acc_mean, acc_m2, acc_min, "
				"acc_max FROM summaries WHERE job_id = ? AND idx = ?", "ii", job, (long long)idx)))
		return rc;
	if ((rc = store_step(s, st)) == 1) {
		rc = 0;
		if (sqlite3_column_type(st, 2) == SQLITE_NULL) {
			legacy = 1;
		} else {
			a->n = (size_t)sqlite3_column_int64(st, 0);
			a->failures = (size_t)sqlite3_column_int64(st, 1);
			a->sum = sqlite3_column_double(st, 2);
			a->sum_inv = sqlite3_column_double(st, 3);
			a->mean = sqlite3_column_double(st, 4);
			a->m2 = sqlite3_column_double(st, 5);
			a->min = sqlite3_column_double(st, 6);
			a->max = sqlite3_column_double(st, 7);
		}
	}
	store_finish(s, st);
	if (rc == 0 && legacy) {
		/* A summary from before schema 8: its sums made again from the samples, once. */
		double *v = NULL;
		size_t n = 0;

		if ((rc = store_commit_values(&v, &n, s, job, idx)) == 0)
			for (size_t i = 0; i < n; i++)
				stats_acc_add(a, v[i]);
		free(v);
	}
	return rc;
}

int store_summary_acc_put(struct store *s, long long job, int idx, const struct stats_acc *a)
{
	struct summary sum;
	int rc;

	stats_acc_summary(&sum, a);
	rc = store_exec(s, "INSERT OR REPLACE INTO summaries (job_id, idx, n, failures, hmean, amean, cv, acc_sum, "
			"acc_sum_inv, acc_mean, acc_m2, acc_min, acc_max) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			"iiiiddddddddd", job, (long long)idx, (long long)sum.n, (long long)sum.failures, sum.hmean,
			sum.amean, sum.cv, a->sum, a->sum_inv, a->mean, a->m2, a->min, a->max);
	return rc < 0 ? rc : 0;
}

int store_summaries(struct summary *sum, int n, struct store *s, long long job)
{
	sqlite3_stmt *st;
	int rc;

	memset(sum, 0, (size_t)n * sizeof(*sum));
	if ((rc = store_prepare(&st, s, "SELECT idx, n, failures, hmean, amean, cv FROM summaries WHERE job_id = ?",
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
	store_finish(s, st);
	return rc;
}

/* An agent_sums row's sums from column `at` on: n, failures, sum, sum_inv, sum_inv2, mean, m2, min, max. */
static void acc_row(struct stats_acc *a, sqlite3_stmt *st, int at)
{
	memset(a, 0, sizeof(*a));
	a->n = (size_t)sqlite3_column_int64(st, at);
	a->failures = (size_t)sqlite3_column_int64(st, at + 1);
	a->sum = sqlite3_column_double(st, at + 2);
	a->sum_inv = sqlite3_column_double(st, at + 3);
	a->sum_inv2 = sqlite3_column_double(st, at + 4);
	a->mean = sqlite3_column_double(st, at + 5);
	a->m2 = sqlite3_column_double(st, at + 6);
	a->min = sqlite3_column_double(st, at + 7);
	a->max = sqlite3_column_double(st, at + 8);
}

int store_agent_acc(struct stats_acc *a, struct store *s, long long job, int idx, long long agent)
{
	sqlite3_stmt *st;
	int rc;

	memset(a, 0, sizeof(*a));
	if ((rc = store_prepare(&st, s, "SELECT n, failures, sum, sum_inv, sum_inv2, mean, m2, coalesce(min, 0), "
				"coalesce(max, 0) FROM agent_sums WHERE job_id = ? AND idx = ? AND agent_id = ?", "iii",
				job, (long long)idx, agent)))
		return rc;
	if ((rc = store_step(s, st)) == 1) {
		acc_row(a, st, 0);
		rc = 0;
	}
	store_finish(s, st);
	return rc;
}

int store_agent_acc_put(struct store *s, long long job, int idx, long long agent, const struct stats_acc *a)
{
	int rc = store_exec(s, "INSERT OR REPLACE INTO agent_sums (job_id, idx, agent_id, n, failures, sum, sum_inv, "
			    "sum_inv2, mean, m2, min, max) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "iiiiiddddddd",
			    job, (long long)idx, agent, (long long)a->n, (long long)a->failures, a->sum, a->sum_inv,
			    a->sum_inv2, a->mean, a->m2, a->min, a->max);

	return rc < 0 ? rc : 0;
}

int store_job_agent_accs(struct agent_acc **out, size_t *n, struct store *s, long long job)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = store_prepare(&st, s, "SELECT idx, agent_id, n, failures, sum, sum_inv, sum_inv2, mean, m2, "
				"coalesce(min, 0), coalesce(max, 0) FROM agent_sums WHERE job_id = ? ORDER BY idx, agent_id",
				"i", job)))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		struct agent_acc *x;

		*out = xgrow(*out, *n, &cap, sizeof(**out));
		x = &(*out)[(*n)++];
		x->idx = sqlite3_column_int(st, 0);
		x->agent = sqlite3_column_int64(st, 1);
		acc_row(&x->acc, st, 2);
	}
	store_finish(s, st);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
		return rc;
	}
	return 0;
}
