/*
 * test_store_results: the samples agents upload and the per-commit
 * summaries (store_results.c), against a real SQLite file.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "err.h"
#include "storefix.h"

static void add(struct storefix *f, long long task, long long attempt, long long run, long long job, int idx,
		double value, const char *error)
{
	struct sample x = { .task = task, .attempt = attempt, .run = run, .job = job, .idx = idx, .value = value,
			    .unit = "ops/s", .error = error, .created = 500 };

	assert_int_equal(store_sample_add(f->s, &x), 0);
}

static void test_samples(void **state)
{
	struct storefix f;
	struct sample *x;
	long long job, t1, t2, n, a;
	double *v;
	size_t nr;
	char *why;
	struct agent ag;

	(void)state;
	storefix_open(&f);
	job = storefix_job(&f, 3, "local");
	assert_int_equal(store_agent_put(f.s, "a", "[]", 100), 0);
	assert_int_equal(store_agent_get(&ag, f.s, "a"), 0);
	a = ag.id;
	store_agent_release(&ag);
	assert_int_equal(store_task_add(&t1, f.s, job, 2, 2, 100, 0, 0), 0);
	assert_int_equal(store_task_add(&t2, f.s, job, 1, 1, 100, 2, 0), 0);
	assert_int_equal(store_task_claim(f.s, t1, 1, a, 200, 100), 0);
	add(&f, t1, 1, 0, job, 2, 10.5, NULL);
	add(&f, t2, 1, 0, job, 1, 0, "exit 1");
	add(&f, t1, 1, 1, job, 2, 11.5, NULL);
	/* A retried upload never doubles a sample. */
	{
		struct sample x2 = { .task = t1, .attempt = 1, .run = 1, .job = job, .idx = 2, .value = 99,
				     .unit = "ops/s", .created = 501 };

		assert_int_equal(store_sample_add(f.s, &x2), ERR_EXISTS);
	}
	/* In the order taken, with the task's agent and kind. */
	assert_int_equal(store_job_samples(&x, &nr, f.s, job), 0);
	assert_int_equal(nr, 3);
	assert_true(x[0].idx == 2 && x[0].value == 10.5 && x[0].task == t1 && x[0].agent == a && x[0].confirm == 0);
	assert_true(x[1].idx == 1 && x[1].value == 0 && x[1].task == t2 && x[1].agent == 0 && x[1].confirm == 2);
	assert_true(x[2].idx == 2 && x[2].value == 11.5 && x[2].run == 1);
	free(x);
	assert_int_equal(store_commit_values(&v, &nr, f.s, job, 2), 0);
	assert_int_equal(nr, 2);
	assert_true(v[0] == 10.5 && v[1] == 11.5);
	free(v);
	assert_int_equal(store_commit_values(&v, &nr, f.s, job, 0), 0);
	assert_int_equal(nr, 0);
	assert_null(v);
	assert_int_equal(store_task_nr_samples(&n, f.s, t1, 1), 0);
	assert_int_equal(n, 2);
	assert_int_equal(store_task_nr_samples(&n, f.s, t1, 2), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_sample_last_error(&why, f.s, job, 1), 0);
	assert_string_equal(why, "exit 1");
	free(why);
	assert_int_equal(store_sample_last_error(&why, f.s, job, 2), 0);
	assert_null(why);
	storefix_close(&f);
}

static void test_summaries(void **state)
{
	struct storefix f;
	struct summary in = { .n = 4, .failures = 1, .hmean = 10.25, .amean = 10.5, .cv = 0.02 }, out[3];
	struct summary none = { .n = 0, .failures = 3, .hmean = NAN, .amean = NAN, .cv = 0 };
	long long job;
	json_t *doc;

	(void)state;
	storefix_open(&f);
	job = storefix_job(&f, 3, "local");
	assert_int_equal(store_summary_put(f.s, job, 2, &in), 0);
	assert_int_equal(store_summary_put(f.s, job, 1, &none), 0);
	/* Rewritten, not added: one row per commit. */
	in.n = 5;
	assert_int_equal(store_summary_put(f.s, job, 2, &in), 0);
	/* A row outside the job's commits is not read into the array. */
	assert_int_equal(store_summary_put(f.s, job, 7, &in), 0);
	memset(out, 0xff, sizeof(out));
	assert_int_equal(store_summaries(out, 3, f.s, job), 0);
	assert_int_equal(out[0].n, 0);
	assert_int_equal(out[0].failures, 0);
	assert_int_equal(out[1].n, 0);
	assert_int_equal(out[1].failures, 3);
	assert_true(out[1].hmean == 0);   /* NaN is stored as NULL, read as 0 */
	assert_int_equal(out[2].n, 5);
	assert_int_equal(out[2].failures, 1);
	assert_true(out[2].hmean == 10.25 && out[2].amean == 10.5 && out[2].cv == 0.02);
	/* The report's view of a commit joins its summary. */
	assert_int_equal(store_job_commit_summary_doc(&doc, f.s, job, 2), 0);
	assert_int_equal(json_integer_value(json_object_get(doc, "n")), 5);
	assert_true(json_real_value(json_object_get(doc, "hmean")) == 10.25);
	json_decref(doc);
	assert_int_equal(store_job_commit_summary_doc(&doc, f.s, job, 0), 0);
	assert_true(json_is_null(json_object_get(doc, "hmean")));
	json_decref(doc);
	storefix_close(&f);
}

static void expect_close(double a, double b)
{
	assert_true(fabs(a - b) <= 1e-12 * fabs(b));
}

/* The stored summary of commit idx against stats_summary() of all its samples: a full rebuild. */
static void expect_rebuilt(struct storefix *f, long long job, int idx)
{
	struct summary got[3], want;
	double *v;
	size_t n;

	assert_int_equal(store_summaries(got, 3, f->s, job), 0);
	assert_int_equal(store_commit_values(&v, &n, f->s, job, idx), 0);
	stats_summary(&want, v, n);
	free(v);
	assert_int_equal(got[idx].n, want.n);
	assert_int_equal(got[idx].failures, want.failures);
	expect_close(got[idx].hmean, want.hmean);
	expect_close(got[idx].amean, want.amean);
	expect_close(got[idx].cv, want.cv);
}

/* What coord_intake does with an upload: its samples in, the commit's running sums added to. */
static int upload(struct storefix *f, long long job, int idx, long long task, int from, int nr, double base)
{
	struct stats_acc a;
	int rc;

	assert_int_equal(store_begin(f->s), 0);
	assert_int_equal(store_summary_acc(&a, f->s, job, idx), 0);
	for (int i = from, rc2; i < from + nr; i++) {
		struct sample x = { .task = task, .attempt = 1, .run = i, .job = job, .idx = idx,
				    .value = i % 9 == 4 ? 0 : base + (i * 37 % 11), .unit = "ops/s", .created = 500 };

		if ((rc2 = store_sample_add(f->s, &x))) {
			store_rollback(f->s);
			return rc2;
		}
		stats_acc_add(&a, x.value);
	}
	rc = store_summary_acc_put(f->s, job, idx, &a);
	assert_int_equal(rc, 0);
	assert_int_equal(store_commit(f->s), 0);
	return 0;
}

static void test_summary_added_to(void **state)
{
	struct storefix f;
	struct summary sum[3];
	long long job, t1, t2, t3, rb;

	(void)state;
	storefix_open(&f);
	job = storefix_job(&f, 3, "local");
	assert_int_equal(store_task_add(&t1, f.s, job, 2, 10, 100, 0, 0), 0);
	assert_int_equal(store_task_add(&t2, f.s, job, 2, 10, 100, 0, 0), 0);
	assert_int_equal(store_task_add(&t3, f.s, job, 1, 10, 100, 0, 0), 0);
	/* Uploads in any order, to two commits: each summary is its samples' at every point. */
	assert_int_equal(upload(&f, job, 2, t2, 0, 10, 1000), 0);
	expect_rebuilt(&f, job, 2);
	assert_int_equal(upload(&f, job, 1, t3, 0, 7, 50), 0);
	assert_int_equal(upload(&f, job, 2, t1, 0, 25, 900), 0);
	expect_rebuilt(&f, job, 2);
	expect_rebuilt(&f, job, 1);
	/* A retried upload is refused whole: the summary does not count its runs twice. */
	rb = store_rollbacks(f.s);
	assert_int_equal(upload(&f, job, 2, t1, 20, 10, 900), ERR_EXISTS);
	assert_true(store_rollbacks(f.s) > rb);
	expect_rebuilt(&f, job, 2);
	assert_int_equal(store_summaries(sum, 3, f.s, job), 0);
	assert_int_equal(sum[2].n + sum[2].failures, 35);
	/* A summary from before schema 8 (no sums) is made again from the samples at its next upload. */
	sum[2].hmean = 1;
	assert_int_equal(store_summary_put(f.s, job, 2, &sum[2]), 0);
	assert_int_equal(upload(&f, job, 2, t1, 25, 5, 800), 0);
	expect_rebuilt(&f, job, 2);
	storefix_close(&f);
}

/* The samples since an id: what the coordinator's kept engines read at a step. */
static void test_samples_after(void **state)
{
	struct storefix f;
	struct sample *x;
	size_t nr;
	long long job, other, t1, t2, mid;

	(void)state;
	storefix_open(&f);
	job = storefix_job(&f, 3, "local");
	other = storefix_job(&f, 3, "local");
	assert_int_equal(store_task_add(&t1, f.s, job, 2, 10, 100, 0, 0), 0);
	assert_int_equal(store_task_add(&t2, f.s, other, 1, 10, 100, 0, 0), 0);
	add(&f, t1, 1, 0, job, 2, 10, NULL);
	add(&f, t2, 1, 0, other, 1, 20, NULL);
	add(&f, t1, 1, 1, job, 2, 11, NULL);
	assert_int_equal(store_job_samples(&x, &nr, f.s, job), 0);
	assert_int_equal(nr, 2);
	mid = x[0].id;
	free(x);
	add(&f, t2, 1, 1, other, 1, 21, NULL);
	add(&f, t1, 1, 2, job, 2, 12, NULL);
	assert_int_equal(store_job_samples_after(&x, &nr, f.s, job, mid), 0);
	assert_int_equal(nr, 2);
	assert_true(x[0].value == 11 && x[1].value == 12 && x[0].id < x[1].id && x[0].id > mid);
	assert_true(x[1].task == t1 && x[1].job == job);
	free(x);
	assert_int_equal(store_job_samples_after(&x, &nr, f.s, job, 1000000), 0);
	assert_int_equal(nr, 0);
	free(x);
	storefix_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_summaries),
		cmocka_unit_test(test_summary_added_to),
		cmocka_unit_test(test_samples_after),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
