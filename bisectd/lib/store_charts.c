/* store_charts: the charts' reads (store_charts.h). */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "store_charts.h"
#include "store_internal.h"
#include "util.h"

int store_commit_rows(struct commit_row **out, int *n, struct store *s, long long job)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = store_prepare(&st, s, "SELECT c.idx, c.sha, c.subject, c.state, coalesce(m.n, 0), "
				"coalesce(m.failures, 0), coalesce(m.hmean, 0), coalesce(m.amean, 0), "
				"coalesce(m.cv, 0) FROM job_commits c LEFT JOIN summaries m ON m.job_id = c.job_id "
				"AND m.idx = c.idx WHERE c.job_id = ? ORDER BY c.idx", "i", job)))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		struct commit_row *c;

		*out = xgrow(*out, *n, &cap, sizeof(**out));
		c = &(*out)[(*n)++];
		memset(c, 0, sizeof(*c));
		c->idx = sqlite3_column_int(st, 0);
		c->sha = store_col_text(st, 1);
		c->subject = store_col_text(st, 2);
		store_col_buf(c->state, sizeof(c->state), st, 3);
		c->sum.n = (size_t)sqlite3_column_int64(st, 4);
		c->sum.failures = (size_t)sqlite3_column_int64(st, 5);
		c->sum.hmean = sqlite3_column_double(st, 6);
		c->sum.amean = sqlite3_column_double(st, 7);
		c->sum.cv = sqlite3_column_double(st, 8);
	}
	store_finish(s, st);
	if (rc < 0) {
		store_commit_rows_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

void store_commit_rows_free(struct commit_row *c, int n)
{
	for (int i = 0; c && i < n; i++) {
		free(c[i].sha);
		free(c[i].subject);
	}
	free(c);
}

/* [{"idx": 20, "p": 0.57}, ...] into d; entries that are not of that shape are left out. */
static void parse_top(struct decision_row *d, const char *text)
{
	json_t *a = text ? json_loads(text, 0, NULL) : NULL;
	size_t i;

	d->nr_top = 0;
	for (i = 0; json_is_array(a) && i < json_array_size(a) && d->nr_top < DECISION_TOP_MAX; i++) {
		json_t *e = json_array_get(a, i), *idx = json_object_get(e, "idx"), *p = json_object_get(e, "p");

		if (!json_is_integer(idx) || !json_is_number(p))
			continue;
		d->top_idx[d->nr_top] = (int)json_integer_value(idx);
		d->top_p[d->nr_top] = json_number_value(p);
		d->nr_top++;
	}
	json_decref(a);
}

int store_decision_rows(struct decision_row **out, size_t *n, struct store *s, long long job)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = store_prepare(&st, s, "SELECT id, time, state, top FROM decisions WHERE job_id = ? ORDER BY id",
				"i", job)))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		struct decision_row *d;

		*out = xgrow(*out, *n, &cap, sizeof(**out));
		d = &(*out)[(*n)++];
		memset(d, 0, sizeof(*d));
		d->id = sqlite3_column_int64(st, 0);
		d->time = sqlite3_column_int64(st, 1);
		store_col_buf(d->state, sizeof(d->state), st, 2);
		parse_top(d, (const char *)sqlite3_column_text(st, 3));
	}
	store_finish(s, st);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int store_job_stamp(struct job_stamp *out, struct store *s, long long job)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = store_prepare(&st, s, "SELECT j.state, coalesce(j.finished, 0), "
				"(SELECT coalesce(max(id), 0) FROM samples WHERE job_id = j.id), "
				"(SELECT count(*) FROM samples WHERE job_id = j.id), "
				"(SELECT coalesce(max(id), 0) FROM decisions WHERE job_id = j.id) "
				"FROM jobs j WHERE j.id = ?", "i", job)))
		return rc;
	rc = store_step(s, st);
	if (rc == 1) {
		store_col_buf(out->state, sizeof(out->state), st, 0);
		out->finished = sqlite3_column_int64(st, 1);
		out->last_sample = sqlite3_column_int64(st, 2);
		out->nr_samples = sqlite3_column_int64(st, 3);
		out->last_decision = sqlite3_column_int64(st, 4);
		rc = 0;
	} else if (rc == 0) {
		rc = err_set(ERR_NOTFOUND, "job %lld does not exist", job);
	}
	store_finish(s, st);
	return rc;
}

int store_job_siblings(long long **ids, size_t *n, struct store *s, long long job, int max)
{
	return store_ints(ids, n, s, "SELECT o.id FROM jobs j JOIN jobs o ON o.repo_id = j.repo_id AND o.good = j.good "
			  "AND o.bad = j.bad AND o.workload = j.workload WHERE j.id = ? ORDER BY o.id LIMIT ?", "ii",
			  job, (long long)max);
}
