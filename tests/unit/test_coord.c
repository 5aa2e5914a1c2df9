/*
 * test_coord: the coordinator itself (bisectd/daemon/coord*.c) with a
 * real store, a real mirror of a git history and the real parking lot
 * (http_wait.c); only the connection's liveness (http.c) and the
 * dashboard's wake (events.c) are stubbed. What it checks is the claim's
 * hand-off: a task queued while claims wait is claimed in its step for
 * the longest parked claim that fits and fired once that step commits;
 * when the claim's agent has gone before the reply went out, the task
 * goes back to the queue and to the next parked claim at once; when the
 * step rolls back, the claim made for it is gone and the parked claim is
 * woken empty; a claim whose reply was sent, or whose task has moved on
 * since, is left alone; a profile task handed so is told its role.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "coord.h"
#include "coord_internal.h"
#include "err.h"
#include "events.h"
#include "gitsh.h"
#include "http_wait.h"
#include "log.h"
#include "store_internal.h"
#include "util.h"

/* --- the stub ------------------------------------------------------------ */

/* A parked claim's connection is the struct below; gone when its flag says so. */
struct parked {
	struct http_waiter w;        /* first: the fire callback's pointer is the parked */
	struct coord_claimer who;
	int fired, gone;
};

int http_conn_alive(void *conn)
{
	return !((struct parked *)conn)->gone;
}

/* --- the fixture --------------------------------------------------------- */

struct fx {
	char *dir;
	struct conf_bisectd conf;
	struct store *st;
	struct coord *s;
};

static int setup(void **state)
{
	char tmpl[] = "/tmp/test_coord.XXXXXX";
	struct fx *f = xcalloc(1, sizeof(*f));
	struct register_request r[] = { { "a1", { "lab" }, 1 }, { "a2", { "lab" }, 1 }, { "a3", { "lab" }, 1 },
					 { "o1", { "elsewhere" }, 1 } };
	char *text, *db;
	json_t *reply = NULL;

	assert_non_null(mkdtemp(tmpl));
	f->dir = xstrdup(tmpl);
	gitsh0(f->dir, "mkrepo_init repo && mkrepo_commit repo a.txt one first && mkrepo_tag repo v1 && "
		       "for i in 2 3 4 5; do mkrepo_commit repo a.txt $i \"change $i\" || exit 1; done");
	text = xasprintf("listen: 127.0.0.1:1\n"
			 "database: %s/db\n"
			 "mirrors: %s/mirrors\n"
			 "lease_seconds: 30\n"
			 "repos:\n  demo:\n    url: %s/repo\n"
			 "workloads:\n  bench:\n    type: command\n    boot: none\n    build: [make, -s]\n"
			 "    command: [./bench]\n    pattern: 'throughput: ([0-9.]+)'\n    unit: ops/s\n"
			 "  prof:\n    type: command\n    boot: none\n    build: [make, -s]\n"
			 "    command: [./bench]\n    pattern: 'throughput: ([0-9.]+)'\n    profile: true\n"
			 "pools:\n  local:\n    labels: [lab]\n  other:\n    labels: [elsewhere]\n",
			 f->dir, f->dir, f->dir);
	assert_int_equal(conf_bisectd_parse(&f->conf, "test.yaml", text, strlen(text)), 0);
	free(text);
	db = xasprintf("%s/db", f->dir);
	assert_int_equal(store_open(&f->st, db), 0);
	free(db);
	assert_int_equal(coord_new(&f->s, &f->conf, f->st), 0);
	assert_int_equal(coord_sync_conf(f->s), 0);
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		assert_int_equal(coord_agent_register(&reply, f->s, &r[i]), 0);
		json_decref(reply);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	coord_free(f->s);
	store_close(f->st);
	conf_bisectd_release(&f->conf);
	remove_tree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static void on_fire(struct http_waiter *w)
{
	((struct parked *)(void *)w)->fired++;
}

/* As api.c's claim: one try that finds nothing, then parked on the claim queue. */
static void park(struct fx *f, struct parked *p, const char *name)
{
	struct http_waitq *q = coord_claim_queue(f->s);
	unsigned long seen = http_waitq_gen(q);
	json_t *reply = NULL;

	memset(p, 0, sizeof(*p));
	p->who.conn = p;
	assert_int_equal(coord_agent_claim(&reply, f->s, name, &p->who), 0);
	assert_null(reply);
	p->w.fire = on_fire;
	http_park(&p->w, &(struct http_wait){ q, seen, now_ms() + 60000, &p->who });
	assert_int_equal(p->fired, 0);
}

/* Takes a parked claim off the queue (a claim that was never fired is still there). */
static void unpark(struct fx *f, struct parked *p)
{
	if (!p->fired) {
		http_wake(coord_claim_queue(f->s));
		assert_int_equal(p->fired, 1);
	}
	json_decref(p->who.handed);
	p->who.handed = NULL;
	strv_free(p->who.labels);
	p->who.labels = NULL;
}

/* A job of pool local over v1..main of workload w: its two ends are queued in the same transaction. */
static long long job_of(struct fx *f, const char *w)
{
	struct job_request req = { .repo = "demo", .good = "v1", .bad = "main", .workload = w,
				   .policy = "bisectd", .confidence = 0.99, .alpha = 0.05, .min_effect = 0.02 };
	json_t *reply = NULL;
	long long id;

	assert_int_equal(coord_job_create(&reply, f->s, &req), 0);
	id = json_integer_value(json_object_get(reply, "id"));
	assert_true(id > 0);
	json_decref(reply);
	return id;
}

static long long job(struct fx *f)
{
	return job_of(f, "bench");
}

/* An agent's claim that does not wait: the task it got. */
static long long claim_now(struct fx *f, const char *name)
{
	json_t *reply = NULL;
	long long id;

	assert_int_equal(coord_agent_claim(&reply, f->s, name, NULL), 0);
	id = reply ? json_integer_value(json_object_get(reply, "task")) : 0;
	json_decref(reply);
	return id;
}

static long long agent_id(struct fx *f, const char *name)
{
	struct agent a = { 0 };
	long long id;

	assert_int_equal(store_agent_get(&a, f->st, name), 0);
	id = a.id;
	store_agent_release(&a);
	return id;
}

/* The job's tasks in id order: their ids into ids[0..n), which must be all of them. */
static void tasks_of(struct fx *f, long long jid, long long *ids, size_t n)
{
	size_t k = 0;

	for (long long id = 1; id < 1000 && k < n; id++) {
		struct task t = { 0 };

		if (store_task_get(&t, f->st, id) == 0 && t.job == jid)
			ids[k++] = id;
		store_task_release(&t);
	}
	assert_int_equal(k, n);
}

/* Checks the task's state and agent (and attempt, unless -1); returns its attempt. */
static long long task_is(struct fx *f, long long id, const char *state, long long agent, long long attempt)
{
	struct task t = { 0 };
	long long a;

	assert_int_equal(store_task_get(&t, f->st, id), 0);
	assert_string_equal(t.state, state);
	assert_int_equal(t.agent, agent);
	if (attempt >= 0)
		assert_int_equal(t.attempt, attempt);
	a = t.attempt;
	store_task_release(&t);
	return a;
}

/* How many rows of doc (which it frees) have text as their key: all of it (whole), or within it. */
static int rows_with(json_t *doc, const char *key, const char *text, int whole)
{
	json_t *e;
	size_t i;
	int n = 0;

	json_array_foreach(doc, i, e) {
		const char *v = json_string_value(json_object_get(e, key));

		n += v && (whole ? !strcmp(v, text) : strstr(v, text) != NULL);
	}
	json_decref(doc);
	return n;
}

/* How many of the job's events are of this kind. */
static int events(struct fx *f, long long jid, const char *kind)
{
	json_t *doc = NULL;

	assert_int_equal(store_job_events_doc(&doc, f->st, jid), 0);
	return rows_with(doc, "kind", kind, 1);
}

static long long handed_task(const struct parked *p)
{
	return p->who.handed ? json_integer_value(json_object_get(p->who.handed, "task")) : 0;
}

/* --- the tests ------------------------------------------------------------ */

/*
 * Two parked claims of pool local and one of pool other: the job's two
 * ends go one to each local claim, the oldest first, each fired once the
 * job's transaction committed; the other pool's claim is not touched. The
 * reply a claim then takes is the task it was handed.
 */
static void test_handed_in_the_step(void **state)
{
	struct fx *f = *state;
	struct parked p1, p2, po;
	long long ids[2], jid;
	json_t *reply = NULL;

	park(f, &po, "o1");
	park(f, &p1, "a1");
	park(f, &p2, "a2");
	jid = job(f);
	tasks_of(f, jid, ids, 2);
	assert_int_equal(p1.fired, 1);
	assert_int_equal(p2.fired, 1);
	assert_int_equal(po.fired, 0);
	assert_int_equal(handed_task(&p1), ids[0]);
	assert_int_equal(handed_task(&p2), ids[1]);
	task_is(f, ids[0], "claimed", agent_id(f, "a1"), p1.who.handed_attempt);
	task_is(f, ids[1], "claimed", agent_id(f, "a2"), p2.who.handed_attempt);
	/* The woken poll's try answers with what it was handed, and takes nothing else. */
	assert_int_equal(coord_agent_claim(&reply, f->s, "a1", &p1.who), 0);
	assert_non_null(reply);
	assert_int_equal(json_integer_value(json_object_get(reply, "task")), ids[0]);
	assert_null(p1.who.handed);
	json_decref(reply);
	/* Sent: the claim's end finds nothing to give back. */
	coord_claim_gone(f->s, &p1.who);
	task_is(f, ids[0], "claimed", agent_id(f, "a1"), -1);
	assert_int_equal(events(f, jid, "requeue"), 0);
	unpark(f, &p1);
	unpark(f, &p2);
	unpark(f, &po);
}

/*
 * The agent of the claim a task was handed to has gone before its reply
 * went out: the task is queued again at once, with an event that says
 * why, and handed to the next parked claim that fits (fired when that
 * commits), not left to wait out a lease.
 */
static void test_gone_goes_to_the_next(void **state)
{
	struct fx *f = *state;
	struct parked p1, p2;
	long long ids[2], jid, a0;

	park(f, &p1, "a1");
	jid = job(f);
	tasks_of(f, jid, ids, 2);
	assert_int_equal(handed_task(&p1), ids[0]);
	a0 = p1.who.handed_attempt;
	/* Nobody parked for the other end: queued, until a3 asks. */
	task_is(f, ids[1], "queued", 0, -1);
	assert_int_equal(claim_now(f, "a3"), ids[1]);

	park(f, &p2, "a2");
	p1.gone = 1;
	coord_claim_gone(f->s, &p1.who);
	assert_null(p1.who.handed);
	assert_int_equal(events(f, jid, "requeue"), 1);
	assert_int_equal(p2.fired, 1);
	assert_int_equal(handed_task(&p2), ids[0]);
	assert_true(p2.who.handed_attempt > a0);
	task_is(f, ids[0], "claimed", agent_id(f, "a2"), p2.who.handed_attempt);
	/* Gone twice (the poll's try and its release both say so): once is all it does. */
	coord_claim_gone(f->s, &p1.who);
	assert_int_equal(events(f, jid, "requeue"), 1);
	task_is(f, ids[0], "claimed", agent_id(f, "a2"), p2.who.handed_attempt);

	/* No claim parked: queued, and the next agent to ask takes it. */
	p2.gone = 1;
	coord_claim_gone(f->s, &p2.who);
	assert_int_equal(events(f, jid, "requeue"), 2);
	task_is(f, ids[0], "queued", 0, -1);
	assert_int_equal(claim_now(f, "a1"), ids[0]);
	unpark(f, &p1);
	unpark(f, &p2);
}

/* A parked claim whose agent has gone is handed nothing: the live one behind it is. */
static void test_dead_claim_passed_over(void **state)
{
	struct fx *f = *state;
	struct parked p1, p2;
	long long ids[2], jid;

	park(f, &p1, "a1");
	park(f, &p2, "a2");
	p1.gone = 1;
	jid = job(f);
	tasks_of(f, jid, ids, 2);
	assert_null(p1.who.handed);
	assert_int_equal(p1.fired, 0);
	assert_int_equal(handed_task(&p2), ids[0]);
	task_is(f, ids[1], "queued", 0, -1);
	assert_int_equal(events(f, jid, "requeue"), 0);
	unpark(f, &p1);
	unpark(f, &p2);
}

/*
 * The step that queued and handed a task rolls back: the task and the
 * claim made for it are gone with it, so the parked claim is woken with
 * nothing handed, and its try (woken empty) finds nothing to claim.
 */
static void test_rolled_back(void **state)
{
	struct fx *f = *state;
	struct parked p1;
	long long ids[2], jid, id = 0;
	struct task t = { 0 };
	json_t *reply = NULL;

	jid = job(f);
	tasks_of(f, jid, ids, 2);
	assert_int_equal(claim_now(f, "a2"), ids[0]);
	assert_int_equal(claim_now(f, "a3"), ids[1]);
	park(f, &p1, "a1");

	pthread_mutex_lock(&f->s->lock);
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_task_add(&id, f->st, jid, 2, 5, (long long)now_unix(), 0, 0), 0);
	assert_int_equal(coord_hand_task(f->s, "local", id), 0);
	/* Claimed in the transaction, not yet fired. */
	assert_int_equal(handed_task(&p1), id);
	assert_int_equal(p1.fired, 0);
	store_rollback(f->st);
	pthread_mutex_unlock(&f->s->lock);

	assert_int_equal(p1.fired, 1);
	assert_null(p1.who.handed);
	assert_int_equal(store_task_get(&t, f->st, id), ERR_NOTFOUND);
	store_task_release(&t);
	assert_int_equal(coord_agent_claim(&reply, f->s, "a1", &p1.who), 0);
	assert_null(reply);
	assert_int_equal(events(f, jid, "claim"), 2);
	unpark(f, &p1);
}

/*
 * A claim whose reply never went out, but whose task has moved on since
 * (its lease ran out, it was queued again and another agent claimed it):
 * the claim's end leaves that other agent's claim as it is.
 */
static void test_gone_after_moved_on(void **state)
{
	struct fx *f = *state;
	struct parked p1;
	long long ids[2], jid, a2;

	park(f, &p1, "a1");
	jid = job(f);
	tasks_of(f, jid, ids, 2);
	assert_int_equal(handed_task(&p1), ids[0]);
	pthread_mutex_lock(&f->s->lock);
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_task_requeue(f->st, ids[0], "lease expired"), 0);
	assert_int_equal(store_commit(f->st), 0);
	pthread_mutex_unlock(&f->s->lock);
	assert_int_equal(claim_now(f, "a2"), ids[0]);
	a2 = task_is(f, ids[0], "claimed", agent_id(f, "a2"), -1);

	p1.gone = 1;
	coord_claim_gone(f->s, &p1.who);
	assert_null(p1.who.handed);
	task_is(f, ids[0], "claimed", agent_id(f, "a2"), a2);
	assert_int_equal(events(f, jid, "requeue"), 0);
	unpark(f, &p1);
}

/*
 * A culprit named with a claim parked: the parent's profile task is
 * handed to it in that step, and its reply says it is the parent's
 * profile, as a claim that takes it from the queue would be told. (It
 * was handed before the profile's row was written, so the reply had no
 * role: the agent measured without perf, and the profile failed as "the
 * agent sent no profile".) The culprit's, chained behind it, waits.
 */
static void test_profile_task_handed_with_its_role(void **state)
{
	struct fx *f = *state;
	struct parked p3;
	struct jobctx c;
	long long ids[4], jid;
	json_t *report = json_object();

	jid = job_of(f, "prof");
	assert_true(claim_now(f, "a1") > 0);
	assert_true(claim_now(f, "a2") > 0);
	park(f, &p3, "a3");
	pthread_mutex_lock(&f->s->lock);
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(jobctx_load(f->s, &c, jid), 0);
	assert_int_equal(coord_profile_hold(f->s, &c, 2, report), 1);
	jobctx_release(&c);
	assert_int_equal(store_commit(f->st), 0);
	pthread_mutex_unlock(&f->s->lock);
	json_decref(report);
	tasks_of(f, jid, ids, 4);
	assert_int_equal(p3.fired, 1);
	assert_int_equal(handed_task(&p3), ids[2]);
	assert_non_null(json_object_get(p3.who.handed, "profile"));
	assert_string_equal(json_string_value(json_object_get(p3.who.handed, "profile")), "parent");
	task_is(f, ids[2], "claimed", agent_id(f, "a3"), -1);
	task_is(f, ids[3], "queued", 0, -1);
	unpark(f, &p3);
}

/* The job's state, in buf. */
static const char *job_state(struct fx *f, long long jid, char *buf, size_t n)
{
	struct job j = { 0 };

	assert_int_equal(store_job_get(&j, f->st, jid), 0);
	snprintf(buf, n, "%s", j.state);
	store_job_release(&j);
	return buf;
}

/*
 * Runs the job's tasks on agent a1 until it ends, or max tasks: the k-th
 * run at commit idx (0..4, the bad end last) reads value(idx, last, k).
 */
static void run_job(struct fx *f, long long jid, double (*value)(int idx, int last, long k), int max)
{
	char st[16];
	long k[5] = { 0 };

	for (int i = 0; i < max && (!strcmp(job_state(f, jid, st, sizeof(st)), "running") || !strcmp(st, "queued"));
	     i++) {
		struct result_request req = { .agent = "a1", .status = "ok", .build_s = 1, .run_s = 1 };
		json_t *reply = NULL, *done = NULL;
		struct task t = { 0 };
		long long id;

		assert_int_equal(coord_agent_claim(&reply, f->s, "a1", NULL), 0);
		assert_non_null(reply);
		id = json_integer_value(json_object_get(reply, "task"));
		req.attempt = json_integer_value(json_object_get(reply, "attempt"));
		req.nr_samples = (size_t)json_integer_value(json_object_get(reply, "runs"));
		json_decref(reply);
		assert_int_equal(store_task_get(&t, f->st, id), 0);
		req.samples = xcalloc(req.nr_samples, sizeof(*req.samples));
		for (size_t r = 0; r < req.nr_samples; r++)
			req.samples[r].value = value(t.idx, t.idx == 4, k[t.idx]++);
		store_task_release(&t);
		assert_int_equal(coord_task_result(&done, f->s, id, &req), 0);
		json_decref(done);
		result_request_release(&req);
	}
}

/* Ends about 1.2% apart in a spread of 6%: neither shown to differ at alpha 0.05 nor to be within 2%. */
static double ends_unclear(int idx, int last, long k)
{
	return (last ? 98.8 : idx == 0 ? 100.0 : 99.4) + (k % 2 ? 6.0 : -6.0);
}

/* How many of the job's decisions (the last 50) give a why with this text. */
static int decision_says(struct fx *f, long long jid, const char *text)
{
	json_t *doc = NULL;

	assert_int_equal(store_job_decisions_doc(&doc, f->st, jid), 0);
	return rows_with(doc, "why", text, 0);
}

/* The job's report's integer field key (of its member sub when sub is not NULL), def when none. */
static long long report_int(struct fx *f, long long jid, const char *sub, const char *key, long long def)
{
	json_t *doc = NULL, *o;
	long long v;

	assert_int_equal(store_job_doc(&doc, f->st, jid), 0);
	o = json_object_get(doc, "report");
	if (sub)
		o = json_object_get(o, sub);
	v = json_is_integer(json_object_get(o, key)) ? json_integer_value(json_object_get(o, key)) : def;
	json_decref(doc);
	return v;
}

/*
 * A job undecided at its ends (at their cap of 30 runs, neither shown
 * apart nor equal) is resumed with its ends measured on: its ends_max
 * becomes its ends' 30 runs and half the more runs, the event says so,
 * and the ends take runs beyond the old cap. Its report says it can be
 * resumed though no budget ran out. (It was refused before: "more runs
 * do not change that".) A job not undecided is refused.
 */
static void test_resume_measures_the_ends_on(void **state)
{
	struct fx *f = *state;
	json_t *reply = NULL, *doc = NULL;
	char st[16];
	long long jid;

	jid = job(f);
	assert_int_equal(coord_job_resume(&reply, f->s, jid, 0, 0), ERR_CONFLICT);
	assert_non_null(strstr(err_msg(), "is queued: only an undecided or cancelled job can be resumed"));
	run_job(f, jid, ends_unclear, 200);
	assert_string_equal(job_state(f, jid, st, sizeof(st)), "undecided");
	assert_int_equal(store_job_doc(&doc, f->st, jid), 0);
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(doc, "report"), "why")),
			       "neither a regression"));
	assert_true(json_is_false(json_object_get(json_object_get(doc, "report"), "budget_spent")));
	assert_true(json_is_true(json_object_get(json_object_get(doc, "report"), "resumable")));
	assert_false(json_is_integer(json_object_get(doc, "ends_max")));
	json_decref(doc);
	assert_int_equal(report_int(f, jid, "good", "n", 0), 30);
	assert_int_equal(report_int(f, jid, "bad", "n", 0), 30);
	/*
	 * -1.2% is 0.8% short of the 2% the ends must be shown within, at a
	 * sd of about 1.6%: the runs that would show it (no estimate before).
	 */
	assert_true(report_int(f, jid, NULL, "more_runs", -1) > 100 && report_int(f, jid, NULL, "more_runs", -1) < 100000);
	/* ... which the ends' steps said while they were measured, before their cap of 30 was reached. */
	assert_true(decision_says(f, jid, "more than the 30 an end may take: likely undecided at the ends") > 0);

	assert_int_equal(coord_job_resume(&reply, f->s, jid, 100, 0), 0);
	assert_non_null(reply);
	assert_string_equal(json_string_value(json_object_get(reply, "state")), "running");
	assert_int_equal(json_integer_value(json_object_get(reply, "ends_max")), 80);
	json_decref(reply);
	assert_int_equal(events(f, jid, "resumed"), 1);
	run_job(f, jid, ends_unclear, 400);
	/* Undecided again, its ends measured past 30 (to their new cap unless the budget ended first). */
	assert_string_equal(job_state(f, jid, st, sizeof(st)), "undecided");
	assert_true(report_int(f, jid, "good", "n", 0) > 30);
	assert_true(report_int(f, jid, "bad", "n", 0) > 30);
	assert_true(report_int(f, jid, "good", "n", 0) <= 80 && report_int(f, jid, "bad", "n", 0) <= 80);
}

/* The demo range's culprit, commit 3: 10% down, the runs of each commit +-0.5 in turn. */
static double clear_culprit(int idx, int last, long k)
{
	(void)last;
	return (idx <= 2 ? 100 : 90) + (k % 2 ? 0.5 : -0.5);
}

/*
 * A job given exactly the runs it takes (its run budget, the runs the
 * same job took without one) ends done at commit 3 on them: the engine
 * reads the pairs that spend the budget before the budget ends the job.
 * (Before 2026-12-07 it ended undecided there.) A job an older bisectd
 * left undecided so, here the same job set back to undecided in the
 * store, is decided by the first step of its resume on the runs it has:
 * done at commit 3, no run more, where the resume used to refuse it
 * ("would end done again at once").
 */
static void test_budget_of_exactly_the_runs(void **state)
{
	struct fx *f = *state;
	struct job_request req = { .repo = "demo", .good = "v1", .bad = "main", .workload = "bench",
				   .policy = "bisectd", .confidence = 0.99, .alpha = 0.05, .min_effect = 0.02 };
	json_t *reply = NULL;
	long long jid, runs;
	char st[16];

	jid = job(f);
	run_job(f, jid, clear_culprit, 400);
	assert_string_equal(job_state(f, jid, st, sizeof(st)), "done");
	runs = report_int(f, jid, NULL, "runs", 0);
	req.budget_runs = runs;
	assert_int_equal(coord_job_create(&reply, f->s, &req), 0);
	jid = json_integer_value(json_object_get(reply, "id"));
	json_decref(reply);
	run_job(f, jid, clear_culprit, 400);
	assert_string_equal(job_state(f, jid, st, sizeof(st)), "done");
	assert_int_equal(report_int(f, jid, "culprit", "idx", -1), 3);
	assert_int_equal(report_int(f, jid, NULL, "runs", 0), runs);

	assert_true(store_exec(f->st, "UPDATE jobs SET state = 'undecided' WHERE id = ?", "i", jid) == 1);
	assert_int_equal(coord_job_resume(&reply, f->s, jid, 1, 0), 0);
	assert_string_equal(json_string_value(json_object_get(reply, "state")), "done");
	json_decref(reply);
	assert_int_equal(report_int(f, jid, "culprit", "idx", -1), 3);
	assert_int_equal(report_int(f, jid, NULL, "runs", 0), runs);
	assert_int_equal(events(f, jid, "resumed"), 1);
}

/*
 * A cancelled job's claimed task is cancelled with it (its agent's next
 * heartbeat says cancel). The job runs on from the runs it has: resumed
 * with no more runs asked for, it keeps its budgets (a derived one stays
 * derived), the event says it was cancelled, and it ends done at commit
 * 3 with every run it had counted. Asked for more runs, its run budget is the runs it
 * has and those. A done job is refused.
 */
static void test_resume_after_cancel(void **state)
{
	struct fx *f = *state;
	json_t *reply = NULL, *doc = NULL;
	struct heartbeat_request hb = { 0 };
	long long jid, had, held, attempt;
	char st[16];

	jid = job(f);
	run_job(f, jid, clear_culprit, 5);
	assert_string_equal(job_state(f, jid, st, sizeof(st)), "running");
	held = claim_now(f, "a1");
	assert_true(held > 0);
	attempt = task_is(f, held, "claimed", agent_id(f, "a1"), -1);
	/* The job's commits say which is being measured. */
	assert_int_equal(store_job_commits_doc(&doc, f->st, jid), 0);
	assert_int_equal(rows_with(doc, "state", "running", 1), 1);
	assert_int_equal(coord_job_cancel(&reply, f->s, jid), 0);
	json_decref(reply);
	assert_string_equal(job_state(f, jid, st, sizeof(st)), "cancelled");
	/* Cancelled, none is queued or running any more (the store keeps 'queued'). */
	assert_int_equal(store_job_commits_doc(&doc, f->st, jid), 0);
	assert_int_equal(rows_with(doc, "state", "queued", 1), 0);
	assert_int_equal(store_job_commits_doc(&doc, f->st, jid), 0);
	assert_int_equal(rows_with(doc, "state", "running", 1), 0);
	assert_int_equal(store_job_commits_doc(&doc, f->st, jid), 0);
	assert_int_equal(rows_with(doc, "state", "measured", 1), 2);
	/* The task an agent runs is cancelled with the job: its next heartbeat says so. */
	task_is(f, held, "cancelled", agent_id(f, "a1"), attempt);
	hb.task = held;
	hb.attempt = attempt;
	assert_int_equal(coord_agent_heartbeat(&reply, f->s, "a1", &hb), 0);
	assert_true(json_is_true(json_object_get(reply, "cancel")));
	json_decref(reply);
	assert_int_equal(store_job_progress_doc(&doc, f->st, jid), 0);
	had = json_integer_value(json_object_get(doc, "samples"));
	json_decref(doc);
	assert_true(had > 0);

	assert_int_equal(coord_job_resume(&reply, f->s, jid, 0, 0), 0);
	assert_string_equal(json_string_value(json_object_get(reply, "state")), "running");
	json_decref(reply);
	assert_int_equal(store_job_doc(&doc, f->st, jid), 0);
	assert_int_equal(json_integer_value(json_object_get(doc, "budget_runs")), 0);
	json_decref(doc);
	assert_int_equal(store_job_events_doc(&doc, f->st, jid), 0);
	assert_int_equal(rows_with(doc, "message", "after its cancel, ", 0), 1);
	run_job(f, jid, clear_culprit, 400);
	assert_string_equal(job_state(f, jid, st, sizeof(st)), "done");
	assert_int_equal(report_int(f, jid, "culprit", "idx", -1), 3);
	assert_true(report_int(f, jid, NULL, "runs", 0) > had);
	assert_int_equal(coord_job_resume(&reply, f->s, jid, 0, 0), ERR_CONFLICT);
	assert_non_null(strstr(err_msg(), "is done: only an undecided or cancelled job can be resumed"));
	assert_non_null(strstr(err_msg(), "(bisectctl submit --like "));

	jid = job(f);
	run_job(f, jid, clear_culprit, 5);
	assert_int_equal(coord_job_cancel(&reply, f->s, jid), 0);
	json_decref(reply);
	assert_int_equal(store_job_progress_doc(&doc, f->st, jid), 0);
	had = json_integer_value(json_object_get(doc, "samples"));
	json_decref(doc);
	assert_int_equal(coord_job_resume(&reply, f->s, jid, 40, 0), 0);
	json_decref(reply);
	assert_int_equal(store_job_doc(&doc, f->st, jid), 0);
	assert_int_equal(json_integer_value(json_object_get(doc, "budget_runs")), had + 40);
	json_decref(doc);
}

/*
 * A job whose first step would end it undecided again at once is not
 * resumed: one created longer ago than the most wall time a job may have
 * (a year) is past any budget of seconds a resume can give. The answer
 * says so with the reason, and the job is as it was: undecided, its
 * report and budget kept, no event.
 */
static void test_resume_refused_when_it_would_end_again(void **state)
{
	struct fx *f = *state;
	json_t *reply = NULL, *before = NULL, *after = NULL;
	char st[16];
	long long jid;

	jid = job(f);
	run_job(f, jid, ends_unclear, 200);
	assert_string_equal(job_state(f, jid, st, sizeof(st)), "undecided");
	assert_true(store_exec(f->st, "UPDATE jobs SET created = created - 2 * 31536000 WHERE id = ?", "i", jid) == 1);
	assert_int_equal(store_job_doc(&before, f->st, jid), 0);

	assert_int_equal(coord_job_resume(&reply, f->s, jid, 500, 0), ERR_CONFLICT);
	assert_null(reply);
	assert_non_null(strstr(err_msg(), "would end undecided again at once: "));
	assert_non_null(strstr(err_msg(), "the wall-time budget is spent (31536000 s, "));
	assert_int_equal(store_job_doc(&after, f->st, jid), 0);
	assert_true(json_equal(before, after));
	assert_int_equal(events(f, jid, "resumed"), 0);
	json_decref(before);
	json_decref(after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_handed_in_the_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_goes_to_the_next, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_claim_passed_over, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rolled_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_after_moved_on, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile_task_handed_with_its_role, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_measures_the_ends_on, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_of_exactly_the_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_refused_when_it_would_end_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_after_cancel, setup, teardown),
	};
	int rc;

	log_init("test_coord", LOG_WARN);
	if (gitsh_init())
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	gitsh_release();
	return rc;
}
