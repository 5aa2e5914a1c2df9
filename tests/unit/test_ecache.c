/*
 * test_ecache: the coordinator's kept engines (coord_ecache.c) against a
 * real store: at every step the engine it gives decides what an engine
 * rebuilt from every sample decides, bit for bit, also after a rollback
 * took back samples it had read, and after it was forgotten (a restart).
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bisect.h"
#include "coord_internal.h"
#include "err.h"
#include "queryfix.h"
#include "rng.h"
#include "storefix.h"

#define N 13

static void opts_of(struct bisect_opts *o)
{
	struct bisect_opts d = BISECT_OPTS_INIT;

	*o = d;
	o->runs_max = 5;
	o->end_runs = 5;
	o->end_runs_max = 30;
}

/* What engine_load() did before the cache: a new engine and every sample of the job. */
static struct bisect *rebuilt(struct storefix *f, struct jobctx *c, const struct bisect_opts *o)
{
	struct sample *x;
	struct bisect *b;
	size_t nr;

	assert_int_equal(bisect_new(&b, c->n, c->parents, c->nr_parents, o), 0);
	assert_int_equal(store_job_samples(&x, &nr, f->s, c->id), 0);
	for (size_t i = 0; i < nr; i++)
		bisect_add_run(b, x[i].idx, x[i].value, (long)x[i].task, (int)x[i].agent,
			       x[i].confirm == BISECT_Q_CONFIRM || x[i].confirm == BISECT_Q_EARLY ?
			       x[i].confirm : BISECT_Q_SEARCH);
	free(x);
	return b;
}

/* Steps both; checks they decide alike; returns the queries. */
static int same_step(struct bisect *x, struct bisect *y, struct bisect_query *q)
{
	struct bisect_query qy[BISECT_MAX_QUERIES(2)];
	struct bisect_result rx, ry;
	int nx, ny;

	memset(q, 0, sizeof(qy));
	memset(qy, 0, sizeof(qy));
	nx = bisect_next(q, x, 2, NULL);
	ny = bisect_next(qy, y, 2, NULL);
	assert_int_equal(nx, ny);
	assert_same_queries(q, qy, nx);
	bisect_result(&rx, x);
	bisect_result(&ry, y);
	assert_int_equal(rx.state, ry.state);
	assert_int_equal(rx.verdict, ry.verdict);
	assert_true(rx.runs == ry.runs && rx.confidence == ry.confidence);
	assert_string_equal(rx.why, ry.why);
	for (int i = 0; i < N; i++)
		assert_true(bisect_posterior(x, i) == bisect_posterior(y, i));
	return nx;
}

struct lab {
	struct storefix f;
	struct coord s;
	struct jobctx c;
	struct job_commit *commits;
	long long agent[2];
	struct rng rng;
};

static void lab_open(struct lab *l)
{
	struct agent a;

	memset(l, 0, sizeof(*l));
	storefix_open(&l->f);
	l->s.st = l->f.s;
	l->c.id = storefix_job(&l->f, N, "local");
	assert_int_equal(store_job_commits(&l->commits, &l->c.n, l->f.s, l->c.id), 0);
	l->c.parents = xcalloc((size_t)l->c.n, sizeof(int *));
	l->c.nr_parents = xcalloc((size_t)l->c.n, sizeof(int));
	for (int i = 0; i < l->c.n; i++) {
		l->c.parents[i] = l->commits[i].parents;
		l->c.nr_parents[i] = l->commits[i].nr_parents;
	}
	for (int k = 0; k < 2; k++) {
		char name[8];

		snprintf(name, sizeof(name), "a%d", k);
		assert_int_equal(store_agent_put(l->f.s, name, "[]", 100), 0);
		assert_int_equal(store_agent_get(&a, l->f.s, name), 0);
		l->agent[k] = a.id;
		store_agent_release(&a);
	}
	rng_seed(&l->rng, 3);
}

static void lab_close(struct lab *l)
{
	coord_ecache_free(&l->s);
	free(l->c.parents);
	free(l->c.nr_parents);
	store_job_commits_free(l->commits, l->c.n);
	storefix_close(&l->f);
}

/* An agent's task of the queries' runs, its samples stored: 12% down from commit 6 on. */
static void measure(struct lab *l, const struct bisect_query *q, int nq)
{
	for (int i = 0; i < nq; i++) {
		long long t;
		int k = (int)rng_below(&l->rng, 2);  /* both agents at both ends, or their levels hide the change */

		assert_int_equal(store_task_add(&t, l->f.s, l->c.id, q[i].commit, q[i].runs, 100, q[i].confirm, 0), 0);
		assert_int_equal(store_task_claim(l->f.s, t, 1, l->agent[k], 1000, 100), 0);
		for (int j = 0; j < q[i].runs; j++) {
			double mu = q[i].commit >= 6 ? 880 : 1000;
			struct sample x = { .task = t, .attempt = 1, .run = j, .job = l->c.id, .idx = q[i].commit,
					    .value = mu * (1 + 0.03 * rng_normal(&l->rng)) * (k ? 1.02 : 1),
					    .unit = "ops/s", .created = 200 };

			assert_int_equal(store_sample_add(l->f.s, &x), 0);
		}
	}
}

static void test_kept_engine_decides_as_a_rebuild(void **state)
{
	struct bisect_query q[BISECT_MAX_QUERIES(2)];
	struct bisect_opts o;
	struct bisect *x, *y;
	struct lab l;
	long long hits, rebuilds;
	int nq, steps = 0;

	(void)state;
	lab_open(&l);
	opts_of(&o);
	do {
		x = rebuilt(&l.f, &l.c, &o);
		assert_int_equal(coord_ecache_engine(&y, &l.s, &l.c, &o), 0);
		nq = same_step(x, y, q);
		if (getenv("TEST_ECACHE_DEBUG")) {
			struct bisect_result r;

			bisect_result(&r, x);
			print_message("step %d: %d queries, state %d: %s\n", steps, nq, r.state, r.why);
		}
		bisect_free(x);
		bisect_free(y);
		measure(&l, q, nq);
		/* Now and then a transaction with samples the cache reads, then rolled back. */
		if (steps % 4 == 1) {
			assert_int_equal(store_begin(l.f.s), 0);
			measure(&l, q, nq);
			assert_int_equal(coord_ecache_engine(&y, &l.s, &l.c, &o), 0);
			bisect_free(y);
			store_rollback(l.f.s);
		}
		/* And a restart: the engine forgotten, made again from the store. */
		if (steps % 7 == 3)
			coord_ecache_drop(&l.s, l.c.id);
	} while (nq > 0 && ++steps < 200);
	assert_true(steps > 5);
	coord_ecache_stats(&l.s, &hits, &rebuilds);
	assert_true(hits > steps / 2);        /* the cache served most steps */
	assert_true(rebuilds >= 1 + steps / 4); /* ... and was made again after each rollback and drop */
	lab_close(&l);
}

/* Other options (a job's engine is made with what the job says): made again, not reused. */
static void test_other_opts_rebuild(void **state)
{
	struct bisect_query q[BISECT_MAX_QUERIES(2)];
	struct bisect_opts o;
	struct bisect *x, *y;
	struct lab l;
	long long hits, rebuilds;

	(void)state;
	lab_open(&l);
	opts_of(&o);
	assert_int_equal(coord_ecache_engine(&y, &l.s, &l.c, &o), 0);
	bisect_free(y);
	o.higher_is_better = 0;
	x = rebuilt(&l.f, &l.c, &o);
	assert_int_equal(coord_ecache_engine(&y, &l.s, &l.c, &o), 0);
	same_step(x, y, q);
	bisect_free(x);
	bisect_free(y);
	coord_ecache_stats(&l.s, &hits, &rebuilds);
	assert_int_equal(rebuilds, 2);
	assert_int_equal(hits, 0);
	lab_close(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept_engine_decides_as_a_rebuild),
		cmocka_unit_test(test_other_opts_rebuild),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
