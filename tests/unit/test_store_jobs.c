/*
 * test_store_jobs: the store's repos, jobs, their commits, decisions and
 * events (store_jobs.c), against a real SQLite file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "err.h"
#include "storefix.h"

static void test_job_round_trip(void **state)
{
	struct storefix f;
	struct job in = { .culprit = -1 }, out;
	long long id;

	(void)state;
	storefix_open(&f);
	in.repo_id = f.repo;
	in.workload = (char *)(uintptr_t)"iperf";
	in.pool = (char *)(uintptr_t)"lab";
	in.good = (char *)(uintptr_t)"g";
	in.bad = (char *)(uintptr_t)"b";
	in.good_ref = (char *)(uintptr_t)"v6.1";
	in.bad_ref = (char *)(uintptr_t)"v6.2";
	in.runs = 7;
	in.unit = (char *)(uintptr_t)"KBytes/s";
	in.higher = 0;
	in.created = 1234;
	strcpy(in.policy, "split");
	in.confidence = 0.95;
	in.alpha = 0.02;
	in.min_effect = 0.03;
	in.budget_runs = 40;
	in.budget_builds = 9;
	in.end_runs = 24;
	in.budget_seconds = 7200;
	in.append = (char *)(uintptr_t)"nosmt";
	in.config = (char *)(uintptr_t)"[\"CONFIG_MITIGATION_RETPOLINE=n\",\"CONFIG_HZ=250\"]";
	assert_int_equal(store_job_insert(&id, f.s, &in), 0);
	assert_true(id > 0);
	assert_int_equal(store_job_get(&out, f.s, id), 0);
	assert_int_equal(out.id, id);
	assert_int_equal(out.repo_id, f.repo);
	assert_string_equal(out.workload, "iperf");
	assert_string_equal(out.pool, "lab");
	assert_string_equal(out.good_ref, "v6.1");
	assert_string_equal(out.bad_ref, "v6.2");
	assert_int_equal(out.runs, 7);
	assert_string_equal(out.unit, "KBytes/s");
	assert_int_equal(out.higher, 0);
	assert_string_equal(out.state, "queued");
	assert_int_equal(out.created, 1234);
	assert_int_equal(out.finished, 0);
	assert_int_equal(out.culprit, -1);
	assert_null(out.error);
	assert_string_equal(out.policy, "split");
	assert_true(out.confidence == 0.95 && out.alpha == 0.02 && out.min_effect == 0.03);
	assert_int_equal(out.budget_runs, 40);
	assert_int_equal(out.budget_builds, 9);
	assert_int_equal(out.end_runs, 24);
	assert_int_equal(out.budget_seconds, 7200);
	assert_string_equal(out.append, "nosmt");
	assert_string_equal(out.config, "[\"CONFIG_MITIGATION_RETPOLINE=n\",\"CONFIG_HZ=250\"]");
	store_job_release(&out);
	/* The job's document has the config variant as an array. */
	{
		json_t *doc = NULL, *cfg;

		assert_int_equal(store_job_doc(&doc, f.s, id), 0);
		cfg = json_object_get(doc, "config");
		assert_true(json_is_array(cfg));
		assert_int_equal(json_array_size(cfg), 2);
		assert_string_equal(json_string_value(json_array_get(cfg, 1)), "CONFIG_HZ=250");
		json_decref(doc);
	}
	assert_int_equal(store_job_get(&out, f.s, id + 1), ERR_NOTFOUND);
	assert_non_null(strstr(err_msg(), "does not exist"));
	storefix_close(&f);
}

static void test_job_states(void **state)
{
	struct storefix f;
	long long id, *ids;
	struct job j;
	json_t *doc;
	size_t n;

	(void)state;
	storefix_open(&f);
	id = storefix_job(&f, 4, "local");
	/* Running from queued only. */
	assert_int_equal(store_job_set_running(f.s, id), 0);
	assert_int_equal(store_job_get(&j, f.s, id), 0);
	assert_string_equal(j.state, "running");
	store_job_release(&j);
	assert_int_equal(store_job_finish(f.s, id, "done", 2000, 2, "{\"verdict\": \"culprit\"}", NULL), 0);
	assert_int_equal(store_job_set_running(f.s, id), 0);
	assert_int_equal(store_job_get(&j, f.s, id), 0);
	assert_string_equal(j.state, "done");
	assert_int_equal(j.finished, 2000);
	assert_int_equal(j.culprit, 2);
	store_job_release(&j);
	assert_int_equal(store_job_doc(&doc, f.s, id), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "report"), "verdict")), "culprit");
	assert_string_equal(json_string_value(json_object_get(doc, "repo")), "demo");
	json_decref(doc);
	/* No culprit: NULL, with the error kept. */
	assert_int_equal(store_job_finish(f.s, id, "failed", 2001, -1, NULL, "it broke"), 0);
	assert_int_equal(store_job_get(&j, f.s, id), 0);
	assert_int_equal(j.culprit, -1);
	assert_string_equal(j.error, "it broke");
	store_job_release(&j);
	/* A state the schema does not know is refused. */
	assert_int_equal(store_job_finish(f.s, id, "unsure", 2002, -1, NULL, NULL), ERR_EXISTS);
	/* The newest first, at most max. */
	storefix_job(&f, 2, "local");
	storefix_job(&f, 2, "local");
	assert_int_equal(store_job_ids(&ids, &n, f.s, 2), 0);
	assert_int_equal(n, 2);
	assert_true(ids[0] == id + 2 && ids[1] == id + 1);
	free(ids);
	storefix_close(&f);
}

static void test_commits(void **state)
{
	struct storefix f;
	struct job_commit *c;
	long long id, n;
	int nr, parents[2] = { 1, 2 };
	json_t *doc;

	(void)state;
	storefix_open(&f);
	id = storefix_job(&f, 3, "local");
	assert_int_equal(store_job_commit_add(f.s, id, 3, "3333", "merge", parents, 2), 0);
	assert_int_equal(store_job_commits(&c, &nr, f.s, id), 0);
	assert_int_equal(nr, 4);
	for (int i = 0; i < nr; i++) {
		assert_int_equal(c[i].idx, i);
		assert_string_equal(c[i].state, "untested");
	}
	assert_int_equal(c[0].nr_parents, 0);
	assert_int_equal(c[1].nr_parents, 0);
	assert_int_equal(c[2].nr_parents, 1);
	assert_int_equal(c[2].parents[0], 1);
	assert_int_equal(c[3].nr_parents, 2);
	assert_true(c[3].parents[0] == 1 && c[3].parents[1] == 2);
	store_job_commits_free(c, nr);
	/* queued only from untested; a decided commit stays decided. */
	assert_int_equal(store_job_commit_queued(f.s, id, 1), 0);
	assert_int_equal(store_job_commit_set_state(f.s, id, 2, "bad"), 0);
	assert_int_equal(store_job_commit_queued(f.s, id, 2), 0);
	assert_int_equal(store_job_commits(&c, &nr, f.s, id), 0);
	assert_string_equal(c[1].state, "queued");
	assert_string_equal(c[2].state, "bad");
	store_job_commits_free(c, nr);
	assert_int_equal(store_job_nr_commits(&n, f.s, id), 0);
	assert_int_equal(n, 4);
	assert_int_equal(store_job_commit_doc(&doc, f.s, id, 3), 0);
	assert_string_equal(json_string_value(json_object_get(doc, "subject")), "merge");
	json_decref(doc);
	/* The same idx twice breaks the key. */
	assert_int_equal(store_job_commit_add(f.s, id, 3, "x", "x", NULL, 0), ERR_EXISTS);
	storefix_close(&f);
}

static void test_decisions_events_budgets(void **state)
{
	struct storefix f;
	long long id;
	int yes = -1;
	json_t *doc;

	(void)state;
	storefix_open(&f);
	id = storefix_job(&f, 3, "local");
	assert_int_equal(store_job_reproduced(&yes, f.s, id), 0);
	assert_int_equal(yes, 0);
	assert_int_equal(store_decision_add(f.s, id, 10, "ends", "[]", "[]", "measuring the ends", NULL), 0);
	assert_int_equal(store_job_reproduced(&yes, f.s, id), 0);
	assert_int_equal(yes, 0);
	assert_int_equal(store_decision_add(f.s, id, 11, "search", "[{\"idx\": 1}]", "[]", "search", NULL), 0);
	assert_int_equal(store_job_reproduced(&yes, f.s, id), 0);
	assert_int_equal(yes, 1);
	assert_int_equal(store_job_decisions_doc(&doc, f.s, id), 0);
	assert_int_equal(json_array_size(doc), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(json_array_get(doc, 1),
							 "queries"), 0), "idx")), 1);
	json_decref(doc);
	/* The agents' levels of the last step that had them; none before. */
	assert_int_equal(store_job_levels_doc(&doc, f.s, id), 0);
	assert_null(doc);
	assert_int_equal(store_decision_add(f.s, id, 12, "search", "[]", "[]", "search",
					    "[{\"id\": 2, \"level_pct\": -12.5, \"reference\": false}]"), 0);
	assert_int_equal(store_decision_add(f.s, id, 13, "search", "[]", "[]", "search", NULL), 0);
	assert_int_equal(store_job_levels_doc(&doc, f.s, id), 0);
	assert_non_null(doc);
	assert_true(json_number_value(json_object_get(json_array_get(doc, 0), "level_pct")) == -12.5);
	json_decref(doc);
	assert_int_equal(store_event_add(f.s, id, 5, "created", "a job"), 0);
	assert_int_equal(store_event_add(f.s, 0, 6, "agent", "not a job's"), 0);
	assert_int_equal(store_job_events_doc(&doc, f.s, id), 0);
	assert_int_equal(json_array_size(doc), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(doc, 0), "message")), "a job");
	json_decref(doc);
	assert_int_equal(store_job_set_auto_budgets(f.s, id, 120, 0), 0);
	assert_int_equal(store_job_doc(&doc, f.s, id), 0);
	assert_int_equal(json_integer_value(json_object_get(doc, "budget_runs_auto")), 120);
	assert_true(json_is_null(json_object_get(doc, "budget_seconds_auto")));
	json_decref(doc);
	storefix_close(&f);
}

static void test_repos(void **state)
{
	struct storefix f;
	long long id, again;

	(void)state;
	storefix_open(&f);
	assert_int_equal(store_repo_put(f.s, "demo", "/elsewhere.git"), 0);
	assert_int_equal(store_repo_id(&again, f.s, "demo"), 0);
	assert_int_equal(again, f.repo);
	assert_int_equal(store_repo_id(&id, f.s, "nope"), ERR_NOTFOUND);
	storefix_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_round_trip),
		cmocka_unit_test(test_job_states),
		cmocka_unit_test(test_commits),
		cmocka_unit_test(test_decisions_events_budgets),
		cmocka_unit_test(test_repos),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
