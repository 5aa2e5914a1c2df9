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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_summaries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
