/*
 * test_store_tasks: tasks and their leases (store_tasks.c) against a real
 * SQLite file: queueing, the counts a step reads, claims with chains,
 * heartbeats, retries, expiry and costs; which agents count for a step,
 * their retirement, and the jobs left with nothing to do.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "conf.h"
#include "err.h"
#include "storefix.h"

static long long agent(struct storefix *f, const char *name, long long seen)
{
	struct agent a;
	long long id;

	assert_int_equal(store_agent_put(f->s, name, "[\"x\"]", seen), 0);
	assert_int_equal(store_agent_get(&a, f->s, name), 0);
	id = a.id;
	store_agent_release(&a);
	return id;
}

static void test_queue_and_counts(void **state)
{
	struct storefix f;
	long long job, t1, t2, t3, busy;
	int out[4];
	struct task t;

	(void)state;
	storefix_open(&f);
	job = storefix_job(&f, 4, "local");
	assert_int_equal(store_task_add(&t1, f.s, job, 0, 5, 100, 0, 0), 0);
	assert_int_equal(store_task_add(&t2, f.s, job, 3, 1, 100, 1, 0), 0);
	assert_int_equal(store_task_add(&t3, f.s, job, 3, 1, 100, 1, t2), 0);
	assert_true(t1 > 0 && t2 == t1 + 1 && t3 == t2 + 1);
	assert_int_equal(store_tasks_outstanding(out, 4, f.s, job), 0);
	assert_true(out[0] == 1 && out[1] == 0 && out[2] == 0 && out[3] == 2);
	/* A chain's links wait for each other on one agent: it counts once. */
	assert_int_equal(store_tasks_busy(&busy, f.s, job), 0);
	assert_int_equal(busy, 2);
	assert_int_equal(store_task_get(&t, f.s, t1), 0);
	assert_int_equal(t.job, job);
	assert_int_equal(t.idx, 0);
	assert_int_equal(t.runs, 5);
	assert_string_equal(t.state, "queued");
	assert_string_equal(t.job_state, "queued");
	assert_string_equal(t.unit, "ops/s");
	store_task_release(&t);
	assert_int_equal(store_task_get(&t, f.s, t3 + 1), ERR_NOTFOUND);
	/* Ending the job cancels what is queued. */
	assert_int_equal(store_tasks_cancel_queued(f.s, job, 200), 0);
	assert_int_equal(store_tasks_outstanding(out, 4, f.s, job), 0);
	assert_true(out[0] == 0 && out[3] == 0);
	/* A task of a commit the job does not have breaks its key. */
	assert_int_equal(store_task_add(&t1, f.s, job, 9, 1, 100, 0, 0), ERR_EXISTS);
	storefix_close(&f);
}

static void test_claims_and_chains(void **state)
{
	struct storefix f;
	long long job, a, b, t1, t2, t3;
	struct task *ts;
	int held = -1;
	size_t n;

	(void)state;
	storefix_open(&f);
	job = storefix_job(&f, 4, "local");
	a = agent(&f, "a", 1000);
	b = agent(&f, "b", 1000);
	assert_int_equal(store_task_add(&t1, f.s, job, 1, 1, 100, 1, 0), 0);
	assert_int_equal(store_task_add(&t2, f.s, job, 2, 1, 100, 1, t1), 0);
	assert_int_equal(store_task_add(&t3, f.s, job, 3, 5, 100, 0, 0), 0);
	/* The chain's second link waits for the first. */
	assert_int_equal(store_tasks_claimable(&ts, &n, f.s, a, 900, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ts[0].id, t1);
	assert_string_equal(ts[0].pool, "local");
	assert_string_equal(ts[0].workload, "bench");
	assert_string_equal(ts[0].repo, "demo");
	assert_string_equal(ts[0].url, "/srv/demo.git");
	assert_string_equal(ts[0].sha, "0000000000000000000000000000000000000001");
	assert_null(ts[0].append);
	assert_null(ts[0].config);
	assert_int_equal(ts[1].id, t3);
	store_tasks_free(ts, n);
	assert_int_equal(store_task_claim(f.s, t1, 1, a, 1060, 1000), 0);
	assert_int_equal(store_task_finish(f.s, t1, "done", 1010, 3.0, 2.0, NULL, "log"), 0);
	/* A task that is done is no one's to heartbeat, its agent's neither. */
	assert_int_equal(store_task_heartbeat(&held, f.s, t1, a, 1, 1090, NULL), 0);
	assert_int_equal(held, 0);
	/* Then it goes to the agent that ran the link before... */
	assert_int_equal(store_tasks_claimable(&ts, &n, f.s, b, 900, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ts[0].id, t3);
	store_tasks_free(ts, n);
	assert_int_equal(store_tasks_claimable(&ts, &n, f.s, a, 900, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ts[0].id, t2);
	store_tasks_free(ts, n);
	/* ... unless that one went quiet. */
	assert_int_equal(store_tasks_claimable(&ts, &n, f.s, b, 1001, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ts[0].id, t2);
	store_tasks_free(ts, n);
	/* Only the pools asked for. */
	assert_int_equal(store_tasks_claimable(&ts, &n, f.s, b, 1001, "[\"other\"]"), 0);
	assert_int_equal(n, 0);
	store_tasks_free(ts, n);
	assert_int_equal(store_tasks_claimable(&ts, &n, f.s, b, 1001, "[\"other\", \"local\"]"), 0);
	assert_int_equal(n, 2);
	store_tasks_free(ts, n);
	/* Nothing is claimable once the job has ended. */
	assert_int_equal(store_job_finish(f.s, job, "cancelled", 1020, -1, NULL, NULL), 0);
	assert_int_equal(store_tasks_claimable(&ts, &n, f.s, a, 900, NULL), 0);
	assert_int_equal(n, 0);
	store_tasks_free(ts, n);
	storefix_close(&f);
}

static void test_leases(void **state)
{
	struct storefix f;
	long long job, a, b, t1;
	struct task t, *ts;
	int held = -1;
	size_t n;
	json_t *doc;

	(void)state;
	storefix_open(&f);
	job = storefix_job(&f, 2, "local");
	a = agent(&f, "a", 1000);
	b = agent(&f, "b", 1000);
	assert_int_equal(store_task_add(&t1, f.s, job, 1, 5, 100, 0, 0), 0);
	assert_int_equal(store_task_claim(f.s, t1, 1, a, 1060, 1000), 0);
	assert_int_equal(store_task_get(&t, f.s, t1), 0);
	assert_string_equal(t.state, "claimed");
	assert_int_equal(t.attempt, 1);
	assert_int_equal(t.agent, a);
	store_task_release(&t);
	/* The holder extends its lease; another agent, or a stale attempt, does not hold it. */
	assert_int_equal(store_task_heartbeat(&held, f.s, t1, a, 1, 1090, "building"), 0);
	assert_int_equal(held, 1);
	assert_int_equal(store_task_heartbeat(&held, f.s, t1, b, 1, 1090, NULL), 0);
	assert_int_equal(held, 0);
	assert_int_equal(store_task_heartbeat(&held, f.s, t1, a, 2, 1090, NULL), 0);
	assert_int_equal(held, 0);
	/* No progress keeps the last. */
	assert_int_equal(store_task_heartbeat(&held, f.s, t1, a, 1, 1095, NULL), 0);
	assert_int_equal(store_job_running_doc(&doc, f.s, job), 0);
	assert_int_equal(json_array_size(doc), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(doc, 0), "progress")), "building");
	assert_string_equal(json_string_value(json_object_get(json_array_get(doc, 0), "agent")), "a");
	json_decref(doc);
	/* Expired once the lease is past. */
	assert_int_equal(store_tasks_expired(&ts, &n, f.s, 1095), 0);
	assert_int_equal(n, 0);
	store_tasks_free(ts, n);
	assert_int_equal(store_tasks_expired(&ts, &n, f.s, 1096), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ts[0].id, t1);
	assert_int_equal(ts[0].job, job);
	assert_int_equal(ts[0].idx, 1);
	assert_int_equal(ts[0].attempt, 1);
	assert_string_equal(ts[0].agent_name, "a");
	store_tasks_free(ts, n);
	/* Back to the queue with the reason, then failed for good. */
	assert_int_equal(store_task_requeue(f.s, t1, "lease expired"), 0);
	assert_int_equal(store_task_get(&t, f.s, t1), 0);
	assert_string_equal(t.state, "queued");
	assert_int_equal(t.agent, 0);
	store_task_release(&t);
	assert_int_equal(store_tasks_expired(&ts, &n, f.s, 5000), 0);
	assert_int_equal(n, 0);
	store_tasks_free(ts, n);
	assert_int_equal(store_task_fail(f.s, t1, 1200, "build failed"), 0);
	assert_int_equal(store_task_get(&t, f.s, t1), 0);
	assert_string_equal(t.state, "failed");
	store_task_release(&t);
	storefix_close(&f);
}

static void test_errors_and_costs(void **state)
{
	struct storefix f;
	struct task_costs c;
	long long job, t1, t2, t3;
	char *why;

	(void)state;
	storefix_open(&f);
	job = storefix_job(&f, 2, "local");
	assert_int_equal(store_task_costs(&c, f.s, job), 0);
	assert_true(c.build == 0 && c.run == 0 && c.per_build == 0);
	assert_int_equal(store_task_last_error(&why, f.s, job, 1), 0);
	assert_null(why);
	assert_int_equal(store_task_add(&t1, f.s, job, 1, 4, 100, 0, 0), 0);
	assert_int_equal(store_task_add(&t2, f.s, job, 1, 2, 100, 0, 0), 0);
	assert_int_equal(store_task_add(&t3, f.s, job, 1, 2, 100, 0, 0), 0);
	assert_int_equal(store_task_finish(f.s, t1, "done", 110, 60.0, 8.0, NULL, NULL), 0);
	assert_int_equal(store_task_finish(f.s, t2, "done", 120, 0.0, 4.0, NULL, NULL), 0);
	assert_int_equal(store_task_finish(f.s, t3, "skipped", 130, 0.0, 0.0, "no boot", NULL), 0);
	assert_int_equal(store_task_costs(&c, f.s, job), 0);
	assert_true(c.build == 30.0);      /* mean over the done tasks */
	assert_true(c.run == 2.0);         /* 12 s over 6 runs */
	assert_true(c.per_build == 60.0);  /* mean over those that built */
	assert_int_equal(store_task_requeue(f.s, t2, "first"), 0);
	assert_int_equal(store_task_last_error(&why, f.s, job, 1), 0);
	assert_string_equal(why, "no boot");   /* the newest task that gave one */
	free(why);
	storefix_close(&f);
}

static void test_agents_active_retire_idle(void **state)
{
	struct storefix f;
	long long job, a, b, g, t1, *ids = NULL;
	char **pools = NULL, **names = NULL;
	struct agent *ag = NULL, x;
	struct task *ts = NULL;
	size_t n = 0;

	(void)state;
	storefix_open(&f);
	job = storefix_job(&f, 4, "local");
	a = agent(&f, "a", 1000);
	b = agent(&f, "b", 1000);
	g = agent(&f, "ghost", 1000);
	/* A live job with nothing queued or claimed is idle. */
	assert_int_equal(store_jobs_idle(&ids, &pools, &n, f.s), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], job);
	assert_string_equal(pools[0], "local");
	assert_null(pools[1]);
	free(ids);
	strv_free(pools);
	assert_int_equal(store_task_add(&t1, f.s, job, 0, 5, 100, 0, 0), 0);
	assert_int_equal(store_jobs_idle(&ids, &pools, &n, f.s), 0);
	assert_int_equal(n, 0);
	assert_null(ids);
	assert_null(pools);

	/* Counted: who asked for work lately, not who only heartbeats. */
	assert_int_equal(store_agent_seen(f.s, a, 1100, 1), 0);
	assert_int_equal(store_agent_seen(f.s, g, 1100, 0), 0);
	assert_int_equal(store_agents_active(&ag, &n, f.s, 1050), 0);
	assert_int_equal(n, 1);
	assert_string_equal(ag[0].name, "a");
	assert_int_equal(ag[0].last_claim, 1100);
	assert_int_equal(ag[0].last_seen, 1100);
	store_agents_free(ag, n);
	/* ... or who holds a task. */
	assert_int_equal(store_task_claim(f.s, t1, 1, b, 1200, 1000), 0);
	assert_int_equal(store_agents_active(&ag, &n, f.s, 1050), 0);
	assert_int_equal(n, 2);
	store_agents_free(ag, n);

	/* b, not seen since 1000, is retired: its lease ends now, it counts no more. */
	assert_int_equal(store_agents_retire(&names, f.s, 1050, 1150), 0);
	assert_non_null(names);
	assert_string_equal(names[0], "b");
	assert_null(names[1]);
	strv_free(names);
	assert_int_equal(store_tasks_expired(&ts, &n, f.s, 1151), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ts[0].id, t1);
	store_tasks_free(ts, n);
	assert_int_equal(store_agents_active(&ag, &n, f.s, 1050), 0);
	assert_int_equal(n, 1);
	assert_string_equal(ag[0].name, "a");
	store_agents_free(ag, n);
	assert_int_equal(store_agent_get(&x, f.s, "b"), 0);
	assert_int_equal(x.retired, 1150);
	store_agent_release(&x);
	/* Once retired is enough; none left to retire. */
	assert_int_equal(store_agents_retire(&names, f.s, 1050, 1160), 0);
	assert_null(names);

	/* Its next call brings it back; so does registering again. */
	assert_int_equal(store_agent_seen(f.s, b, 1200, 0), 0);
	assert_int_equal(store_agent_get(&x, f.s, "b"), 0);
	assert_int_equal(x.retired, 0);
	assert_int_equal(x.last_claim, 0);
	store_agent_release(&x);
	assert_int_equal(store_agents_retire(&names, f.s, 2000, 2000), 0);
	assert_non_null(names);
	assert_non_null(names[2]);
	assert_null(names[3]);
	strv_free(names);
	assert_int_equal(store_agent_put(f.s, "ghost", "[\"x\"]", 2100), 0);
	assert_int_equal(store_agent_get(&x, f.s, "ghost"), 0);
	assert_int_equal(x.retired, 0);
	assert_int_equal(x.last_seen, 2100);
	store_agent_release(&x);
	storefix_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_and_counts),
		cmocka_unit_test(test_claims_and_chains),
		cmocka_unit_test(test_leases),
		cmocka_unit_test(test_errors_and_costs),
		cmocka_unit_test(test_agents_active_retire_idle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
