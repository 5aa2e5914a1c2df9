/*
 * test_store_profiles: the SQL of profiles at the culprit
 * (store_profiles.h, schema 9): a held verdict, the two profile tasks
 * and their roles, an upload taken or failed, and a job without any.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "err.h"
#include "storefix.h"
#include "store_profiles.h"

static void test_hold_and_profiles(void **state)
{
	struct storefix f;
	struct profile *p = NULL, one;
	size_t n = 0;
	long long job, other, pt, ct, mt;
	char *rep = NULL;
	int culprit = -1;

	(void)state;
	storefix_open(&f);
	job = storefix_job(&f, 5, "local");
	other = storefix_job(&f, 3, "local");
	/* Nothing held, nothing recorded. */
	assert_int_equal(store_profile_held(&culprit, &rep, f.s, job), ERR_NOTFOUND);
	assert_null(rep);
	assert_int_equal(store_profiles_of_job(&p, &n, f.s, job), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_task_add(&mt, f.s, job, 3, 5, 1000, 0, 0), 0);
	assert_int_equal(store_profile_of_task(&one, f.s, mt), ERR_NOTFOUND);

	assert_int_equal(store_profile_hold(f.s, job, 3, "{\"verdict\": \"culprit\"}", 2000), 0);
	assert_int_equal(store_profile_hold(f.s, job, 3, "{}", 2001), ERR_EXISTS);
	assert_int_equal(store_profile_held(&culprit, &rep, f.s, job), 0);
	assert_int_equal(culprit, 3);
	assert_string_equal(rep, "{\"verdict\": \"culprit\"}");
	free(rep);
	assert_int_equal(store_profile_held(&culprit, &rep, f.s, other), ERR_NOTFOUND);
	{
		long long *ids = NULL, *since = NULL;
		size_t nh = 0;

		/* Held since 2000: found by a sweep at 2001, not at 2000; not once the job ended. */
		assert_int_equal(store_profile_holds_before(&ids, &since, &nh, f.s, 2000), 0);
		assert_int_equal(nh, 0);
		assert_int_equal(store_profile_holds_before(&ids, &since, &nh, f.s, 2001), 0);
		assert_int_equal(nh, 1);
		assert_int_equal(ids[0], job);
		assert_int_equal(since[0], 2000);
		free(ids);
		free(since);
		assert_int_equal(store_profile_hold(f.s, other, 1, "{}", 10), 0);
		assert_int_equal(store_job_finish(f.s, other, "cancelled", 20, -1, NULL, NULL), 0);
		assert_int_equal(store_profile_holds_before(&ids, &since, &nh, f.s, 3000), 0);
		assert_int_equal(nh, 1);
		free(ids);
		free(since);
	}

	/* The culprit's task is chained behind the parent's; the parent's comes first whatever the ids. */
	assert_int_equal(store_task_add(&pt, f.s, job, 2, 1, 2000, 0, 0), 0);
	assert_int_equal(store_task_add(&ct, f.s, job, 3, 1, 2000, 0, pt), 0);
	assert_int_equal(store_profile_add(f.s, job, "culprit", 3, ct), 0);
	assert_int_equal(store_profile_add(f.s, job, "parent", 2, pt), 0);
	assert_int_equal(store_profile_add(f.s, job, "parent", 2, pt), ERR_EXISTS);
	/* A role the schema does not know is refused. */
	assert_true(store_profile_add(f.s, job, "sibling", 2, pt) < 0);
	assert_int_equal(store_profiles_of_job(&p, &n, f.s, job), 0);
	assert_int_equal(n, 2);
	assert_string_equal(p[0].role, "parent");
	assert_int_equal(p[0].idx, 2);
	assert_int_equal(p[0].task, pt);
	assert_string_equal(p[0].state, "queued");
	assert_string_equal(p[0].task_state, "queued");
	assert_null(p[0].report);
	assert_string_equal(p[1].role, "culprit");
	store_profiles_free(p, n);

	/* The parent's report is in; the culprit's failed, with its reason. */
	assert_int_equal(store_profile_finish(f.s, pt, "ok", "lab1", NULL, "    1.00%  [k] x\n", 2100), 0);
	assert_int_equal(store_task_fail(f.s, ct, 2101, "perf not found"), 0);
	assert_int_equal(store_profile_finish(f.s, ct, "failed", "lab1", "perf not found", NULL, 2101), 0);
	assert_int_equal(store_profile_of_task(&one, f.s, pt), 0);
	assert_string_equal(one.state, "ok");
	assert_string_equal(one.agent, "lab1");
	assert_string_equal(one.report, "    1.00%  [k] x\n");
	assert_int_equal(one.finished, 2100);
	store_profile_release(&one);
	assert_int_equal(store_profile_of_task(&one, f.s, ct), 0);
	assert_string_equal(one.state, "failed");
	assert_string_equal(one.task_state, "failed");
	assert_string_equal(one.error, "perf not found");
	assert_null(one.report);
	store_profile_release(&one);
	/* Another job's profiles are its own. */
	assert_int_equal(store_profiles_of_job(&p, &n, f.s, other), 0);
	assert_int_equal(n, 0);
	storefix_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hold_and_profiles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
