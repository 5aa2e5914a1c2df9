/* test_bisect: the probabilistic engine on linear histories and merges, with noise. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "queryfix.h"
#include "rng.h"
#include "util.h"

struct dag {
	int n;
	int **par;
	int *npar;
};

static void dag_add(struct dag *d, int i, int p1, int p2)
{
	d->par[i] = xmalloc(2 * sizeof(int));
	d->npar[i] = 0;
	if (p1 >= 0)
		d->par[i][d->npar[i]++] = p1;
	if (p2 >= 0)
		d->par[i][d->npar[i]++] = p2;
}

static struct dag *dag_new(int n)
{
	struct dag *d = xcalloc(1, sizeof(*d));

	d->n = n;
	d->par = xcalloc((size_t)n, sizeof(int *));
	d->npar = xcalloc((size_t)n, sizeof(int));
	dag_add(d, 0, -1, -1);
	return d;
}

static struct dag *linear(int n)
{
	struct dag *d = dag_new(n);

	for (int i = 1; i < n; i++)
		dag_add(d, i, i - 1, -1);
	return d;
}

static void dag_free(struct dag *d)
{
	for (int i = 0; i < d->n; i++)
		free(d->par[i]);
	free(d->par);
	free(d->npar);
	free(d);
}

/* Is a an ancestor-or-self of b? */
static int is_anc(const struct dag *d, int a, int b)
{
	if (a == b)
		return 1;
	for (int k = 0; k < d->npar[b]; k++)
		if (is_anc(d, a, d->par[b][k]))
			return 1;
	return b != 0 && d->npar[b] == 0 && a == 0;
}

/*
 * Adds the runs of one bisect_next()'s queries the way the coordinator
 * takes them: a query without a chain is one task of its runs; the
 * queries of a chain go to one agent, one run a task, interleaved (A B A
 * B ...). With k agents, query i runs on agent i % k and chain ch on
 * agent (ch - 1) % k; with k = 0 query i on agent i and chain ch on agent
 * 100 + ch, each an agent of its own. value(ctx, commit, agent, kind)
 * gives each run; returns the runs.
 */
static long next_task;

typedef double (*run_value)(void *ctx, int commit, int agent, int kind);

static int feed_agents(struct bisect *b, const struct bisect_query *q, int nq, int k, run_value value, void *ctx)
{
	int runs = 0;

	for (int i = 0; i < nq; i++) {
		int agent = k ? i % k : i;

		if (q[i].chain)
			continue;
		for (int j = 0; j < q[i].runs; j++, runs++)
			bisect_add_run(b, q[i].commit, value(ctx, q[i].commit, agent, q[i].confirm), next_task, agent,
				       q[i].confirm);
		next_task++;
	}
	for (int ch = 1; ch <= nq; ch++)
		for (int j = 0;; j++) {
			int any = 0, agent = k ? (ch - 1) % k : 100 + ch;

			for (int i = 0; i < nq; i++)
				if (q[i].chain == ch && j < q[i].runs) {
					bisect_add_run(b, q[i].commit, value(ctx, q[i].commit, agent, q[i].confirm),
						       next_task++, agent, q[i].confirm);
					runs++;
					any = 1;
				}
			if (!any)
				break;
		}
	return runs;
}

/* feed_agents() with k = 0 for a value that depends on the commit alone, value(ctx, commit). */
struct by_commit {
	double (*value)(void *, int);
	void *ctx;
};

static double commit_value(void *ctx, int commit, int agent, int kind)
{
	struct by_commit *x = ctx;

	(void)agent;
	(void)kind;
	return x->value(x->ctx, commit);
}

static int feed(struct bisect *b, const struct bisect_query *q, int nq, double (*value)(void *, int), void *ctx)
{
	struct by_commit x = { value, ctx };

	return feed_agents(b, q, nq, 0, commit_value, &x);
}

/*
 * A job on d driven to its end with k agents, each run value(ctx, commit)
 * (feed()), the costs 1 and a budget of budget runs (0: derived). *out
 * keeps the engine for the result's borrowed sentence; free it.
 */
static struct bisect_result drive_job(struct bisect **out, const struct dag *d, int k, long budget,
				      double (*value)(void *, int), void *ctx)
{
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[BISECT_MAX_QUERIES(8)];
	struct bisect_result r;
	int nq;

	o.build_cost = o.run_cost = 1;
	o.budget_runs = budget;
	assert_int_equal(bisect_new(out, d->n, d->par, d->npar, &o), 0);
	while ((nq = bisect_next(q, *out, k, NULL)) > 0)
		feed(*out, q, nq, value, ctx);
	bisect_result(&r, *out);
	return r;
}

struct sim {
	double change, cv;     /* relative regression, noise */
	int culprit;           /* -1: no regression */
	int k;                 /* agents */
	int outlier_at;        /* a commit whose first run is 40% slow; -1 none */
	int skip[4];           /* commits that cannot be built, -1 terminated */
	uint64_t seed;
	long budget;           /* the job's budget of runs; 0: derived */
};

struct simctx {
	const struct dag *d;
	const struct sim *s;
	struct rng *rng;
	int slow_done;
};

static double sim_value(void *arg, int c)
{
	struct simctx *x = arg;
	double mu = x->s->culprit > 0 && is_anc(x->d, x->s->culprit, c) ? 1000 * (1 - x->s->change) : 1000;
	double v = mu * (1 + x->s->cv * rng_normal(x->rng));

	assert_true(c >= 0 && c < x->d->n);
	if (c == x->s->outlier_at && !x->slow_done) {
		v *= 0.6;
		x->slow_done = 1;
	}
	return v;
}

static struct bisect_result run_sim(struct bisect **out, const struct dag *d, const struct sim *s)
{
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[BISECT_MAX_QUERIES(8)];
	struct bisect_result r;
	struct bisect *b;
	struct rng rng;
	struct simctx x = { d, s, &rng, 0 };
	int rounds = 0, nq;

	o.build_cost = o.run_cost = 1;
	o.budget_runs = s->budget;
	rng_seed(&rng, s->seed);
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	for (int i = 0; i < 4 && s->skip[i] >= 0; i++)
		bisect_mark_skipped(b, s->skip[i]);
	while ((nq = bisect_next(q, b, s->k, NULL)) > 0) {
		assert_true(++rounds < 500);
		feed(b, q, nq, sim_value, &x);
	}
	bisect_result(&r, b);
	*out = b;
	return r;
}

/*
 * The defaults: 15% at a CV of 4%, one agent. These tests check the logic
 * on the DAG, where a wrong answer must mean a bug; how often the engine
 * is right at the noise's edge is the benchmark's business.
 */
static struct sim sim(int culprit, uint64_t seed)
{
	struct sim s = { .change = 0.15, .cv = 0.04, .culprit = culprit, .k = 1, .outlier_at = -1,
			 .skip = { -1, -1, -1, -1 }, .seed = seed };

	return s;
}

static void expect_culprit(const struct dag *d, struct sim s)
{
	struct bisect *b;
	struct bisect_result r = run_sim(&b, d, &s);

	assert_int_equal(r.state, BISECT_DONE);
	if (r.verdict != VERDICT_CULPRIT)
		fail_msg("culprit %d, seed %d: verdict %d, best %d at %.4f after %ld runs: %s", s.culprit, (int)s.seed,
			 r.verdict, r.culprit, r.confidence, r.runs, r.why);
	assert_int_equal(r.culprit, s.culprit);
	assert_true(r.confidence >= 0.99);
	bisect_free(b);
}

static void test_first_and_last_candidate(void **state)
{
	struct dag *d = linear(65);

	(void)state;
	for (uint64_t seed = 1; seed <= 5; seed++) {
		expect_culprit(d, sim(1, seed));
		expect_culprit(d, sim(64, seed));  /* the bad end itself */
	}
	dag_free(d);
}

/*
 * main: 0 - 1 - 2 - 3 ..... 10 (merge of 3 and 9) - 11 - 12
 * side:          \- 4 - 5 - 6 - 7 - 8 - 9 -/
 */
static struct dag *merged(void)
{
	struct dag *d = dag_new(13);

	dag_add(d, 1, 0, -1);
	dag_add(d, 2, 1, -1);
	dag_add(d, 3, 2, -1);
	dag_add(d, 4, 2, -1);
	for (int i = 5; i <= 9; i++)
		dag_add(d, i, i - 1, -1);
	dag_add(d, 10, 3, 9);
	dag_add(d, 11, 10, -1);
	dag_add(d, 12, 11, -1);
	return d;
}

static void test_culprit_inside_merged_branch(void **state)
{
	struct dag *d = merged();

	(void)state;
	for (uint64_t seed = 1; seed <= 5; seed++) {
		expect_culprit(d, sim(6, seed));
		expect_culprit(d, sim(3, seed));   /* on main, beside the branch */
		expect_culprit(d, sim(10, seed));  /* the merge itself */
	}
	dag_free(d);
}

/* merged() with the culprit at 6: what the confirmation's runs measure; the runs of 9 counted. */
struct mergectx {
	struct rng *rng;
	int runs_of_9;
};

static double merge_side_value(void *arg, int c)
{
	struct mergectx *x = arg;
	int bad = c >= 6;  /* 6's descendants: 7-9 on the branch, the merge and after */

	x->runs_of_9 += c == 9;
	return (bad ? 850 : 1000) * (1 + 0.04 * rng_normal(x->rng));
}

/*
 * A merge is the culprit only when it is worse than every parent, so its
 * confirmation pairs it against each. On merged(), the regression at 6
 * inside the branch, the branch's tip 9 first measured good (three runs
 * that a fluke, or an agent nothing else calibrates, made look good)
 * puts the posterior on the merge 10: its pairs against its first
 * parent 3 show the change. Against 3 alone the merge was named; paired
 * with 9 too, it is not (it is 9 that is bad), and the job goes on.
 */
static void test_merge_confirmed_against_each_parent(void **state)
{
	struct dag *d = merged();
	int found = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 5; seed++) {
		struct bisect_opts o = BISECT_OPTS_INIT;
		struct bisect_query q[BISECT_MAX_QUERIES(1)];
		struct bisect_result r;
		struct bisect *b;
		struct rng rng;
		struct mergectx x = { &rng, 0 };
		int nq, rounds = 0;

		rng_seed(&rng, seed);
		assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
		for (int i = 0; i < 10; i++) {
			bisect_add_sample(b, 0, 1000 * (1 + 0.04 * rng_normal(&rng)));
			bisect_add_sample(b, 12, 850 * (1 + 0.04 * rng_normal(&rng)));
		}
		bisect_assume_reproduced(b);
		for (int i = 0; i < 3; i++) {
			bisect_add_sample(b, 3, 1000 * (1 + 0.04 * rng_normal(&rng)));
			bisect_add_sample(b, 9, 1000 * (1 + 0.04 * rng_normal(&rng)));
			bisect_add_sample(b, 11, 850 * (1 + 0.04 * rng_normal(&rng)));
		}
		while ((nq = bisect_next(q, b, 1, NULL)) > 0 && ++rounds < 400)
			feed(b, q, nq, merge_side_value, &x);
		bisect_result(&r, b);
		if (r.verdict == VERDICT_CULPRIT && r.culprit == 10)
			fail_msg("seed %d: the merge named at %.4f, %d runs of 9 after the start: %s", (int)seed,
				 r.confidence, x.runs_of_9, r.why);
		assert_true(x.runs_of_9 > 0);
		assert_true(r.verdict != VERDICT_CULPRIT || r.culprit == 6);
		found += r.verdict == VERDICT_CULPRIT;
		bisect_free(b);
	}
	print_message("6 found in %d of 5, the rest undecided\n", found);
	dag_free(d);
}

static void test_skipped_neighbours_give_a_range(void **state)
{
	struct dag *d = linear(33);
	struct bisect *b;
	struct bisect_result r;
	struct sim s = sim(20, 1);
	int has[33] = { 0 };

	(void)state;
	/* 19 cannot be built: 19 and 20 cannot be told apart. */
	s.skip[0] = 19;
	r = run_sim(&b, d, &s);
	assert_int_equal(r.verdict, VERDICT_RANGE);
	for (int i = 0; i < r.nr_set; i++)
		has[r.set[i]] = 1;
	assert_true(has[19] && has[20]);
	assert_true(r.nr_set <= 3);
	assert_true(r.set_mass >= 0.99);
	bisect_free(b);
	dag_free(d);
}

/*
 * Ends that do not differ: not-reproduced only where the runs show them
 * equal within min_effect (1%) at the job's confidence; at a CV of 4%,
 * 30 runs an end cannot, and the job is undecided, never a bisection of
 * noise. An improvement is not a regression: it is shown less than 1%
 * worse at once.
 */
static void test_ends_that_do_not_differ(void **state)
{
	struct dag *d = linear(33);
	struct bisect *b;
	struct bisect_result r;
	struct sim s = sim(-1, 1);

	(void)state;
	s.cv = 0.002;
	r = run_sim(&b, d, &s);
	assert_int_equal(r.verdict, VERDICT_NOT_REPRODUCED);
	assert_true(r.runs <= 60);  /* the ends only, 30 runs each at most */
	bisect_free(b);
	s.cv = 0.04;
	r = run_sim(&b, d, &s);
	if (r.verdict != VERDICT_UNDECIDED)
		fail_msg("verdict %d: %s", r.verdict, r.why);
	assert_true(r.runs <= 60);
	assert_true(r.effect_lo < 0 && r.effect_hi > -0.01);
	bisect_free(b);
	s = sim(10, 1);
	s.change = -0.10;
	r = run_sim(&b, d, &s);
	assert_int_equal(r.verdict, VERDICT_NOT_REPRODUCED);
	/* The claim is one-sided, and the sentence says which way the ends lie. */
	if (!strstr(r.why, "better than the good end; a regression of 1.0% or more is ruled out"))
		fail_msg("%s", r.why);
	bisect_free(b);
	dag_free(d);
}

static void test_outlier_run_does_not_flip(void **state)
{
	struct dag *d = linear(65);

	(void)state;
	/* The culprit's parent gets one run 40% slow (a bimodal machine). */
	for (uint64_t seed = 1; seed <= 5; seed++) {
		struct sim s = sim(30, seed);

		s.outlier_at = 29;
		s.change = 0.30;
		s.cv = 0.01;
		expect_culprit(d, s);
	}
	dag_free(d);
}

/*
 * On linear(65) with the culprit at 40, good commits at 1000 and bad ones
 * at bad (CV 4%): 10 runs at each end, then (after slow_end, one slow run
 * at the bad end, when not 0) 10 at each commit from 36 to 44, enough for
 * the posterior to hold 40: what follows is the confirmation.
 */
static void runs_around_40(struct bisect *b, struct rng *rng, double bad, double slow_end)
{
	for (int i = 0; i < 10; i++) {
		bisect_add_sample(b, 0, 1000 * (1 + 0.04 * rng_normal(rng)));
		bisect_add_sample(b, 64, bad * (1 + 0.04 * rng_normal(rng)));
	}
	if (slow_end > 0)
		bisect_add_sample(b, 64, slow_end);
	bisect_assume_reproduced(b);
	for (int i = 0; i < 10; i++)
		for (int c = 36; c <= 44; c++)
			bisect_add_sample(b, c, (c >= 40 ? bad : 1000) * (1 + 0.04 * rng_normal(rng)));
}

/* The confirmation's runs of test_slow_run_in_the_confirmation: the parent's first one slow. */
struct slowctx {
	int parent_runs;
	int others;
};

static double slow_parent_value(void *arg, int c)
{
	struct slowctx *x = arg;

	if (c == 39)
		return x->parent_runs++ ? 1000 : 780;
	x->others++;
	return c >= 40 ? 930 : 1000;
}

/*
 * A bimodal machine's slow run in the confirmation: the parent's first
 * interleaved run is 22% slow, 4.4 sigmas below the bad group at 7% / 4%.
 * Far from both groups by a fixed 5 sigmas it would count, and make the
 * pairs' mean and spread say "no change" for rounds. On a machine that
 * has shown slow runs (one at the bad end, 35% slow) it is more likely
 * one of them than a run of either group: its pair is set aside, and the
 * first look of the paired test (about 9 pairs here) confirms; counted,
 * it fails that look and the second takes twice as many.
 */
static void test_slow_run_in_the_confirmation(void **state)
{
	struct dag *d = linear(65);

	(void)state;
	for (uint64_t seed = 1; seed <= 5; seed++) {
		struct bisect_opts o = BISECT_OPTS_INIT;
		struct bisect_query q[BISECT_MAX_QUERIES(1)];
		struct bisect_result r;
		struct bisect *b;
		struct rng rng;
		struct slowctx x = { 0, 0 };
		int nq;

		rng_seed(&rng, seed);
		assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
		runs_around_40(b, &rng, 930, 600);
		while ((nq = bisect_next(q, b, 1, NULL)) > 0) {
			assert_true(q[0].confirm);
			feed(b, q, nq, slow_parent_value, &x);
		}
		bisect_result(&r, b);
		if (r.verdict != VERDICT_CULPRIT)
			fail_msg("seed %d: verdict %d: %s", (int)seed, r.verdict, r.why);
		assert_int_equal(r.culprit, 40);
		if (x.parent_runs > 12)
			fail_msg("seed %d: %d runs of the parent", (int)seed, x.parent_runs);
		bisect_free(b);
	}
	dag_free(d);
}

/* The confirmation's runs of test_slow_parent_run_at_a_large_effect: 12% at 4%, the parent's third run 26% slow. */
struct bigctx {
	struct rng *rng;
	int parent_runs;
};

static double big_effect_value(void *arg, int c)
{
	struct bigctx *x = arg;

	if (c == 39 && ++x->parent_runs == 3)
		return 740;
	return (c >= 40 ? 880 : 1000) * (1 + 0.04 * rng_normal(x->rng));
}

/*
 * At 12% / 4% a fixed test needs 4 pairs, and the last look was at twice
 * that: one run of the parent 26% slow on a machine that had shown none
 * (bisect_slow_cut() then lies 5 sigmas below the worse group, and keeps it)
 * made 8 pairs say "no change" at p 0.02-0.04, and a true culprit at
 * 1.0000 end undecided (bimodal noise at N = 16384: 2 of 100 jobs). The
 * last look is now at 12 pairs at least. That still left 26 of 400 jobs
 * undecided (70 of 100 with the last look at 8), where the other pairs
 * showed the change weakly: the slow run lies 6.5 sigmas below its own
 * commit's other runs, and its pair outweighed them. Such a run is set
 * aside now too (own_cuts() in bisect_confirm.c, where the runs do not
 * show two modes), and 2 of 400 are undecided. The test counts over 400
 * seeds: at most 5 undecided, never
 * another commit. (With 8 seeds and none allowed it passed or failed by
 * the order the confirmation's coin drew.)
 */
#define SLOW_PARENT_SEEDS 400
#define SLOW_PARENT_UNDECIDED_MOST 5

static void test_slow_parent_run_at_a_large_effect(void **state)
{
	struct dag *d = linear(65);
	int undecided = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= SLOW_PARENT_SEEDS; seed++) {
		struct bisect_opts o = BISECT_OPTS_INIT;
		struct bisect_query q[BISECT_MAX_QUERIES(1)];
		struct bisect_result r;
		struct bisect *b;
		struct rng rng;
		struct bigctx x = { &rng, 0 };
		int nq;

		rng_seed(&rng, seed);
		assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
		runs_around_40(b, &rng, 880, 0);
		while ((nq = bisect_next(q, b, 1, NULL)) > 0)
			feed(b, q, nq, big_effect_value, &x);
		bisect_result(&r, b);
		undecided += r.verdict == VERDICT_UNDECIDED;
		if (r.verdict != VERDICT_UNDECIDED && (r.verdict != VERDICT_CULPRIT || r.culprit != 40))
			fail_msg("seed %d: verdict %d, culprit %d after %d runs of the parent: %s", (int)seed, r.verdict,
				 r.culprit, x.parent_runs, r.why);
		bisect_free(b);
	}
	print_message("one slow run of the parent: %d undecided of %d\n", undecided, SLOW_PARENT_SEEDS);
	assert_in_range(undecided, 0, SLOW_PARENT_UNDECIDED_MOST);
	dag_free(d);
}

/*
 * At a large effect (15% at 4%: about 4 sigmas) one good-looking run of
 * the culprit, 930 against a parent at 1000 (less than half the effect
 * apart), once failed the confirmation for all five rounds however clear
 * the runs after it (it compared each side's best run). The paired test
 * takes it as one pair among the others.
 */
static void test_one_good_looking_run_of_the_culprit(void **state)
{
	struct dag *d = linear(65);
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[4];
	struct bisect_result r;
	struct bisect *b;
	struct rng rng;
	int nq, culprit_runs = 0, parent_runs = 0;

	(void)state;
	rng_seed(&rng, 7);
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	runs_around_40(b, &rng, 850, 0);
	while ((nq = bisect_next(q, b, 1, NULL)) > 0) {
		for (int i = 0; i < nq; i++) {
			assert_int_equal(q[i].confirm, BISECT_Q_CONFIRM);
			for (int j = 0; j < q[i].runs; j++) {
				if (q[i].commit == 39)
					bisect_add_confirm_sample(b, 39, 1005 - 3 * parent_runs++);
				else
					bisect_add_confirm_sample(b, 40, culprit_runs++ ? 850 + culprit_runs : 930);
			}
		}
	}
	bisect_result(&r, b);
	if (r.verdict != VERDICT_CULPRIT)
		fail_msg("verdict %d after %d + %d confirmation runs: %s", r.verdict, parent_runs, culprit_runs, r.why);
	assert_int_equal(r.culprit, 40);
	assert_true(culprit_runs <= 6);
	bisect_free(b);
	dag_free(d);
}

static void test_k_way_queries(void **state)
{
	struct dag *d = linear(1025);
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[BISECT_MAX_QUERIES(3)];
	struct bisect *b;
	int nq;

	(void)state;
	o.runs_max = 1;
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	nq = bisect_next(q, b, 3, NULL);
	/*
	 * The two ends first, in two chains (each agent measures both, so its
	 * level can be told from the change); the third agent measures the
	 * prior's median meanwhile.
	 */
	assert_int_equal(nq, 5);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(q[i].commit, i % 2 ? 1024 : 0);
		assert_int_equal(q[i].chain, 1 + i / 2);
	}
	assert_int_equal(q[4].chain, 0);
	assert_true(abs(q[4].commit - 512) <= 1);
	for (int r = 0; r < 5; r++) {
		bisect_add_sample(b, 0, 1000 + r);
		bisect_add_sample(b, 1024, 700 + r);
	}
	nq = bisect_next(q, b, 3, NULL);
	assert_int_equal(nq, 3);
	/* Three distinct commits near the quartiles of a uniform posterior. */
	assert_true(q[0].commit != q[1].commit && q[1].commit != q[2].commit && q[0].commit != q[2].commit);
	assert_true(fabs(q[0].mass - 0.25) < 0.02);
	assert_true(fabs(q[1].mass - 0.50) < 0.02);
	assert_true(fabs(q[2].mass - 0.75) < 0.02);
	bisect_free(b);
	dag_free(d);
}

/* Commits from culprit on measure 930 against 1000, at a CV of 4% (a linear history). */
struct ctx74 {
	int culprit;
	struct rng *rng;
};

static double value_7_4(void *arg, int c)
{
	struct ctx74 *x = arg;

	return (c >= x->culprit ? 930 : 1000) * (1 + 0.04 * rng_normal(x->rng));
}

static void test_four_agents_take_fewer_rounds(void **state)
{
	struct dag *d = linear(1025);
	struct bisect *b;
	struct bisect_result r;
	long rounds[2] = { 0, 0 };

	(void)state;
	for (int k = 0; k < 2; k++)
		for (uint64_t seed = 1; seed <= 4; seed++) {
			struct sim s = sim(100 + 200 * (int)seed, seed);
			struct bisect_opts o = BISECT_OPTS_INIT;
			struct bisect_query q[BISECT_MAX_QUERIES(4)];
			struct rng rng;
			struct ctx74 x = { s.culprit, &rng };
			int nq;

			s.k = k ? 4 : 1;
			rng_seed(&rng, seed);
			o.build_cost = o.run_cost = 1;
			assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
			while ((nq = bisect_next(q, b, s.k, NULL)) > 0) {
				rounds[k]++;
				feed(b, q, nq, value_7_4, &x);
			}
			bisect_result(&r, b);
			assert_int_equal(r.culprit, s.culprit);
			bisect_free(b);
		}
	print_message("rounds: %ld with 1 agent, %ld with 4\n", rounds[0], rounds[1]);
	/* The confirmation's pairs run on one agent whatever k is: they take a share of the rounds. */
	assert_true(rounds[1] * 3 <= rounds[0] * 2);
	dag_free(d);
}

/*
 * With 4 agents the likely culprit and its parent are measured early, as a
 * pair, while the others search. Those runs are not the confirmation: a
 * confirmation is asked for only once the posterior holds the confidence,
 * so that it is evidence the posterior did not have. (Counted as one, an
 * early pair confirmed a good neighbour of the culprit at once in 1% of
 * the benchmark's trials at N = 16384, 7% / 4%.)
 */
static void test_early_pair_is_not_the_confirmation(void **state)
{
	struct dag *d = linear(1025);
	int early = 0, confirms = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct bisect_opts o = BISECT_OPTS_INIT;
		struct bisect_query q[BISECT_MAX_QUERIES(4)];
		struct bisect_result r;
		struct bisect *b;
		struct rng rng;
		int culprit = 37 + 160 * (int)seed, nq;
		struct ctx74 x = { culprit, &rng };

		rng_seed(&rng, seed);
		o.build_cost = o.run_cost = 1;
		assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
		while ((nq = bisect_next(q, b, 4, NULL)) > 0) {
			bisect_result(&r, b);
			for (int i = 0; i < nq; i++) {
				if (q[i].confirm == BISECT_Q_EARLY) {
					early++;
					/* The pair is the best commit and its parent, while searching. */
					assert_true(q[i].commit == r.culprit || q[i].commit == r.culprit - 1);
					assert_true(r.state == BISECT_SEARCH && r.confidence >= 0.5);
				}
				if (q[i].confirm == BISECT_Q_CONFIRM) {
					confirms++;
					assert_true(r.state == BISECT_CONFIRM);
					assert_true(r.confidence >= 0.9);  /* CONFIRM_START */
				}
			}
			feed(b, q, nq, value_7_4, &x);
		}
		bisect_result(&r, b);
		assert_int_equal(r.verdict, VERDICT_CULPRIT);
		assert_int_equal(r.culprit, culprit);
		bisect_free(b);
	}
	print_message("early pair queries %d, confirmation queries %d\n", early, confirms);
	assert_true(early > 0);
	assert_true(confirms >= 2 * 6);
	dag_free(d);
}

/*
 * With four agents the ends still get fresh runs while the others search:
 * on a drifting lab their first runs alone could not tell drift from
 * regression, and the posterior never settled. Between two runs at an end
 * pass at most REFRESH_RUNS (25) runs and a round's worth more.
 */
static void test_ends_refreshed_with_four_agents(void **state)
{
	struct dag *d = linear(1025);

	(void)state;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		struct bisect_opts o = BISECT_OPTS_INIT;
		struct bisect_query q[BISECT_MAX_QUERIES(4)];
		struct bisect_result r;
		struct bisect *b;
		struct rng rng;
		long runs = 0, last_end = 0, widest = 0;
		int culprit = 100 + 300 * (int)seed, nq, refreshed = 0;
		struct ctx74 x = { culprit, &rng };

		rng_seed(&rng, seed);
		o.build_cost = o.run_cost = 1;
		assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
		while ((nq = bisect_next(q, b, 4, NULL)) > 0) {
			for (int i = 0; i < nq; i++)
				if (q[i].commit == 0 || q[i].commit == d->n - 1) {
					widest = runs - last_end > widest ? runs - last_end : widest;
					last_end = runs;
					refreshed += runs > 40;
				}
			runs += feed(b, q, nq, value_7_4, &x);
		}
		bisect_result(&r, b);
		assert_int_equal(r.culprit, culprit);
		if (!refreshed || widest > 25 + 4 * 8)
			fail_msg("seed %d: %ld runs, ends measured again %d times, at most %ld runs apart", (int)seed,
				 runs, refreshed, widest);
		bisect_free(b);
	}
	dag_free(d);
}

/* Two commits that measure the same: 39 and 40 both from N(965, 4%), the rest as runs_around_40() has them. */
static double equal_pair_value(void *arg, int c)
{
	struct rng *rng = arg;

	return (c == 39 || c == 40 ? 965 : c > 40 ? 930 : 1000) * (1 + 0.04 * rng_normal(rng));
}

/*
 * The confirmation is a test, not a direction check: with the posterior
 * holding 40 and its parent 39 measuring exactly like it, the
 * interleaved pairs must not name 40. (Below 3 sigmas the old check
 * passed when the parent's mean of at most four runs was above the
 * culprit's, which two equal commits do half the time.) The paired test
 * errs at CONFIRM_ALPHA (0.02), and here names 40 in 1-2 jobs of 100
 * (4 of 300 seeds with one coin for the pairs' order, 5 with another):
 * so at most 5 of 100, where a direction check names dozens (62 with
 * the test's boundaries at p 0.5). (With 20 seeds and none allowed, the
 * test passed or failed by the coin.)
 */
#define EQUAL_PAIR_SEEDS 100
#define EQUAL_PAIR_NAMED_MOST 5

static void test_confirmation_rejects_equal_commits(void **state)
{
	struct dag *d = linear(65);
	int named = 0, undecided = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= EQUAL_PAIR_SEEDS; seed++) {
		struct bisect_opts o = BISECT_OPTS_INIT;
		struct bisect_query q[BISECT_MAX_QUERIES(1)];
		struct bisect_result r;
		struct bisect *b;
		struct rng rng;
		int nq, rounds = 0;

		rng_seed(&rng, seed);
		assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
		runs_around_40(b, &rng, 930, 0);
		while ((nq = bisect_next(q, b, 1, NULL)) > 0 && ++rounds < 400)
			feed(b, q, nq, equal_pair_value, &rng);
		bisect_result(&r, b);
		named += r.verdict == VERDICT_CULPRIT && r.culprit == 40;
		undecided += r.verdict == VERDICT_UNDECIDED;
		bisect_free(b);
	}
	print_message("40 named %d times in %d, undecided %d\n", named, EQUAL_PAIR_SEEDS, undecided);
	assert_in_range(named, 0, EQUAL_PAIR_NAMED_MOST);
	dag_free(d);
}

/*
 * With two agents the confirmation's pairs come in two chains, one an
 * agent, so that four pairs take one round (no look on their own:
 * test_two_chains_round_is_no_look); with one agent, one chain. Each chain is a round of two pairs, one run a link,
 * each commit first once: 39 40 40 39 or 40 39 39 40, whichever its coin
 * says.
 */
static void test_confirmation_in_two_chains(void **state)
{
	struct dag *d = linear(65);

	(void)state;
	for (int k = 1; k <= 2; k++) {
		struct bisect_opts o = BISECT_OPTS_INIT;
		struct bisect_query q[BISECT_MAX_QUERIES(2)];
		struct bisect *b;
		struct rng rng;
		int nq, links[3] = { 0, 0, 0 }, order[3][4];

		rng_seed(&rng, 7);
		assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
		runs_around_40(b, &rng, 930, 0);
		nq = bisect_next(q, b, k, NULL);
		for (int i = 0; i < nq; i++) {
			assert_int_equal(q[i].confirm, BISECT_Q_CONFIRM);
			assert_true(q[i].chain >= 1 && q[i].chain <= 2);
			assert_true(q[i].commit == 39 || q[i].commit == 40);
			assert_int_equal(q[i].runs, 1);
			assert_true(links[q[i].chain] < 4);
			order[q[i].chain][links[q[i].chain]++] = q[i].commit;
		}
		assert_int_equal(links[1], 4);
		assert_int_equal(links[2], k == 2 ? 4 : 0);
		for (int ch = 1; ch <= (k == 2 ? 2 : 1); ch++) {
			assert_int_not_equal(order[ch][0], order[ch][1]);
			assert_int_equal(order[ch][1], order[ch][2]);
			assert_int_equal(order[ch][0], order[ch][3]);
		}
		bisect_free(b);
	}
	dag_free(d);
}

/* A 30% change at 40, at 1%. */
static double step_at_40_value(void *arg, int c)
{
	struct rng *rng = arg;

	return (c >= 40 ? 700 : 1000) * (1 + 0.01 * rng_normal(rng));
}

/*
 * Four pairs of two chains' one round are one stretch of the lab's time
 * and no look (first_look()), however plain the change: with two agents
 * the round after them is one chain's, and the commit is named on six
 * pairs. With one agent the four pairs are two rounds, and are a look.
 */
static void test_two_chains_round_is_no_look(void **state)
{
	struct dag *d = linear(65);

	(void)state;
	for (int k = 1; k <= 2; k++) {
		struct bisect_opts o = BISECT_OPTS_INIT;
		struct bisect_query q[BISECT_MAX_QUERIES(2)];
		struct bisect_result r;
		struct bisect *b;
		struct rng rng;
		int nq, rounds = 0, chains[3];

		rng_seed(&rng, 11);
		assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
		runs_around_40(b, &rng, 700, 0);
		while ((nq = bisect_next(q, b, k, NULL)) > 0) {
			chains[1] = chains[2] = 0;
			for (int i = 0; i < nq; i++) {
				assert_int_equal(q[i].confirm, BISECT_Q_CONFIRM);
				chains[q[i].chain]++;
			}
			/* two chains first, then one; one agent, one chain a round */
			assert_int_equal(chains[1], 4);
			assert_int_equal(chains[2], k == 2 && rounds == 0 ? 4 : 0);
			feed(b, q, nq, step_at_40_value, &rng);
			assert_true(++rounds <= 2);
		}
		bisect_result(&r, b);
		print_message("%d agents: %s\n", k, r.why);
		assert_int_equal(r.verdict, VERDICT_CULPRIT);
		assert_int_equal(r.culprit, 40);
		assert_int_equal(rounds, 2);
		assert_non_null(strstr(r.why, k == 2 ? "6 interleaved pairs" : "4 interleaved pairs"));
		bisect_free(b);
	}
	dag_free(d);
}

/*
 * A lab with a rhythm: the level of the n-th run overall (every agent's,
 * in the order they come) follows a fixed pattern, low in some runs and
 * high in the rest, as the kernel lab's guest did under a kernel build
 * beside it (kbuild-guest.trace: every few runs, a run 35-40% down). The
 * low runs of a good commit look like the culprit's, and a confirmation
 * in a fixed order can line its pairs up with the rhythm: with the order
 * A B A B, then B A B A (the engine before 2026-12-06), one of these 27
 * jobs named a good commit at 1.0000 on 12 pairs (p = 0.0002), the lab
 * high every second run. In rounds of A B B A or B A A B, drawn afresh,
 * the engine names the culprit or says undecided, never another commit.
 */
struct rhythmctx {
	int culprit, period, phase;
	double low, change;
	long n;
	struct rng *rng;
};

static double rhythm_value(void *arg, int c)
{
	struct rhythmctx *x = arg;
	int at = (int)((x->n++ + x->phase) % x->period);

	return (c >= x->culprit ? 1000 * (1 - x->change) : 1000) * (at == 0 ? 1 : x->low) *
	       (1 + 0.02 * rng_normal(x->rng));
}

static void test_lab_with_a_rhythm_never_names_a_good_commit(void **state)
{
	struct dag *d = linear(65);
	int named = 0, wrong = 0;

	(void)state;
	for (int period = 2; period <= 4; period++)
		for (int phase = 0; phase < period; phase++)
			for (uint64_t seed = 1; seed <= 3; seed++) {
				struct bisect *b;
				struct rng rng;
				struct rhythmctx x = { 20 + 9 * (int)seed, period, phase, 0.62, 0.40, 0, &rng };
				struct bisect_result r;

				rng_seed(&rng, seed);
				r = drive_job(&b, d, 1, 400, rhythm_value, &x);
				named += r.verdict == VERDICT_CULPRIT;
				if ((r.verdict == VERDICT_CULPRIT && r.culprit != x.culprit) || r.verdict == VERDICT_RANGE) {
					print_message("period %d phase %d seed %d: named %d (culprit %d) at %.4f: %s\n",
						      period, phase, (int)seed, r.culprit, x.culprit, r.confidence, r.why);
					wrong++;
				}
				bisect_free(b);
			}
	print_message("a lab with a rhythm: %d named, %d wrong, of 27 jobs\n", named, wrong);
	assert_int_equal(wrong, 0);
	dag_free(d);
}

/*
 * A job replayed from the benchmark, on the kernel lab's guest beside a
 * kernel build (kbuild-guest.trace, N = 64, the culprit 10, 40%, four
 * agents, the confirmation's coin drawn with --coin-seed 2): the runs the
 * engine asked for, in the order they came ({ commit, agent, task, kind,
 * value }, kind 1 BISECT_Q_CONFIRM). The lab's runs fall in three modes, and commit 9, good, ran
 * in the low one in half its runs on agent 1, the pairs' order lining up
 * with the lab's rhythm there three rounds in a row. Its 12 pairs
 * against its good parent 8 passed the paired t test at p = 0.0052, and
 * the engine named commit 9 at 0.9958. Commit 9 has two runs or more at
 * each group's level (bisect_levels_mixed()), so the pairs face the
 * sign-flip test too, and the job ends undecided.
 */
static const double modes_job[][5] = {
	{ 23, 2, 0, 0, 400.18 }, { 45, 3, 1, 0, 624.28 }, { 0, 0, 2, 0, 1306.98 }, { 0, 1, 3, 0, 1312.20 },
	{ 64, 0, 4, 0, 778.17 }, { 64, 1, 5, 0, 609.99 }, { 0, 0, 6, 0, 942.00 }, { 0, 1, 7, 0, 1029.68 },
	{ 64, 0, 8, 0, 594.11 }, { 64, 1, 9, 0, 580.06 }, { 0, 0, 10, 0, 977.02 }, { 0, 1, 11, 0, 1053.73 },
	{ 64, 0, 12, 0, 573.29 }, { 64, 1, 13, 0, 601.16 }, { 16, 0, 14, 0, 765.63 }, { 26, 1, 15, 0, 800.45 },
	{ 38, 2, 16, 0, 550.99 }, { 51, 3, 17, 0, 601.99 }, { 4, 0, 18, 0, 938.82 }, { 8, 1, 19, 0, 999.66 },
	{ 15, 2, 20, 0, 582.76 }, { 41, 3, 21, 0, 787.32 }, { 10, 0, 22, 0, 596.38 }, { 15, 1, 23, 0, 572.42 },
	{ 42, 2, 24, 0, 553.23 }, { 54, 3, 25, 0, 609.99 }, { 8, 0, 26, 0, 1222.54 }, { 9, 1, 27, 0, 660.95 },
	{ 10, 2, 28, 0, 543.35 }, { 11, 3, 29, 0, 617.81 }, { 7, 2, 30, 0, 971.88 }, { 9, 0, 31, 1, 911.63 },
	{ 8, 1, 32, 1, 952.35 }, { 8, 0, 33, 1, 1280.57 }, { 9, 1, 34, 1, 637.42 }, { 8, 0, 35, 1, 1050.86 },
	{ 9, 1, 36, 1, 637.76 }, { 9, 0, 37, 1, 1290.33 }, { 8, 1, 38, 1, 966.14 }, { 9, 0, 39, 1, 597.87 },
	{ 8, 1, 40, 1, 1007.74 }, { 8, 0, 41, 1, 1114.10 }, { 9, 1, 42, 1, 1014.87 }, { 8, 0, 43, 1, 1187.59 },
	{ 9, 1, 44, 1, 690.22 }, { 9, 0, 45, 1, 894.28 }, { 8, 1, 46, 1, 989.42 }, { 9, 0, 47, 1, 1001.80 },
	{ 8, 1, 48, 1, 670.84 }, { 8, 0, 49, 1, 1078.59 }, { 9, 1, 50, 1, 644.03 }, { 8, 0, 51, 1, 986.52 },
	{ 9, 1, 52, 1, 626.16 }, { 9, 0, 53, 1, 1217.43 }, { 8, 1, 54, 1, 1000.34 },
};

/*
 * Replays a job's recorded runs ({ commit, agent, task, kind, value }) on
 * linear(65) with k agents, as the benchmark ran it (build cost 1, run
 * cost 10, a budget of 300 runs), and asks for the next step: whatever
 * it is, no commit but the culprit is named, and no range.
 */
static void replay_recorded_job(const double (*runs)[5], size_t nr, int k, int culprit)
{
	struct dag *d = linear(65);
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[BISECT_MAX_QUERIES(4)];
	struct bisect_result r;
	struct bisect *b;
	int got;

	o.build_cost = 1;
	o.run_cost = 10;
	o.budget_runs = 300;
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	for (size_t i = 0; i < nr; i++)
		bisect_add_run(b, (int)runs[i][0], runs[i][4], (long)runs[i][2], (int)runs[i][1], (int)runs[i][3]);
	got = bisect_next(q, b, k, NULL);
	bisect_result(&r, b);
	print_message("%d queries: %s\n", got, r.why);
	assert_false(r.verdict == VERDICT_CULPRIT && r.culprit != culprit);
	assert_false(r.verdict == VERDICT_RANGE);
	bisect_free(b);
	dag_free(d);
}

static void test_recorded_modes_job(void **state)
{
	(void)state;
	replay_recorded_job(modes_job, sizeof(modes_job) / sizeof(modes_job[0]), 4, 10);
}

/*
 * Another job of the same lab (kbuild-guest.trace, N = 64, 40%, one
 * agent, --coin-seed 8; the culprit 48, and 39 and 63 replay the same
 * window): commit 32, good, ran in the low mode in six of its seven runs
 * (five of its six in the confirmation, the lab's dips lining up with the
 * middle of its rounds), and its parent 31 once. That run of the parent
 * lay 6 of the model's sds below 31's other confirmation runs, so
 * own_cuts() set its pair aside as a lone slow run, and the five pairs
 * left passed at p = 0.0000: commit 32 named at 1.0000. But 32's one
 * high run lies as far above its own others: the two commits' runs
 * overlap in modes, and no run is set aside. With all six pairs no look
 * passes, and the confirmation goes on.
 */
static const double overlap_job[][5] = {
	{ 0, 0, 0, 0, 1078.59 }, { 64, 0, 1, 0, 591.91 }, { 0, 0, 2, 0, 1217.43 }, { 64, 0, 3, 0, 617.08 },
	{ 0, 0, 4, 0, 989.72 }, { 64, 0, 5, 0, 619.48 }, { 0, 0, 6, 0, 1044.38 }, { 64, 0, 7, 0, 669.93 },
	{ 0, 0, 8, 0, 942.44 }, { 64, 0, 9, 0, 568.89 }, { 32, 0, 10, 0, 666.97 }, { 16, 0, 11, 0, 918.31 },
	{ 24, 0, 12, 0, 971.26 }, { 28, 0, 13, 0, 922.04 }, { 30, 0, 14, 0, 905.59 }, { 31, 0, 15, 0, 971.88 },
	{ 31, 0, 16, 1, 925.29 }, { 32, 0, 17, 1, 598.64 }, { 32, 0, 18, 1, 710.15 }, { 31, 0, 19, 1, 617.61 },
	{ 31, 0, 20, 1, 987.28 }, { 32, 0, 21, 1, 613.24 }, { 32, 0, 22, 1, 661.44 }, { 31, 0, 23, 1, 941.68 },
	{ 32, 0, 24, 1, 643.99 }, { 31, 0, 25, 1, 1046.41 }, { 31, 0, 26, 1, 974.89 }, { 32, 0, 27, 1, 1008.60 },
};

static void test_recorded_overlap_job(void **state)
{
	(void)state;
	replay_recorded_job(overlap_job, sizeof(overlap_job) / sizeof(overlap_job[0]), 1, 48);
}

/*
 * A third job of that lab (kbuild-guest.trace, N = 64, 40%, four agents,
 * --coin-seed 3; the culprit 31). The confirmation's first round came in
 * two chains: on agent 0, 29 30 30 29, commit 30 (good) low in the
 * middle (592, 652 against 993, 964); on agent 1, 30 29 29 30, its parent
 * high in the middle (1302, 1343 against 1001, 930). Four pairs in one
 * stretch of the lab's time passed the first look at p = 0.0024, and
 * commit 30 was named at 0.9943. Now two chains' first round is no look
 * (first_look()): the job asks for a round more, on one chain.
 */
static const double round_job[][5] = {
	{ 23, 2, 0, 0, 992.80 }, { 45, 3, 1, 0, 382.65 }, { 0, 0, 2, 0, 643.99 }, { 0, 1, 3, 0, 952.48 },
	{ 64, 0, 4, 0, 627.85 }, { 64, 1, 5, 0, 701.88 }, { 0, 0, 6, 0, 974.89 }, { 0, 1, 7, 0, 1206.39 },
	{ 64, 0, 8, 0, 605.16 }, { 64, 1, 9, 0, 553.14 }, { 0, 0, 10, 0, 964.32 }, { 0, 1, 11, 0, 903.61 },
	{ 64, 0, 12, 0, 585.76 }, { 64, 1, 13, 0, 590.35 }, { 13, 0, 14, 0, 957.03 }, { 26, 1, 15, 0, 1281.92 },
	{ 38, 2, 16, 0, 355.04 }, { 51, 3, 17, 0, 579.68 }, { 28, 0, 18, 0, 991.94 }, { 29, 1, 19, 0, 1262.71 },
	{ 31, 2, 20, 0, 391.27 }, { 33, 3, 21, 0, 604.65 }, { 30, 0, 22, 0, 530.85 }, { 29, 1, 23, 0, 1288.70 },
	{ 31, 2, 24, 0, 578.50 }, { 32, 3, 25, 0, 608.92 }, { 28, 2, 26, 0, 646.68 }, { 31, 3, 27, 0, 414.13 },
	{ 29, 0, 28, 1, 992.80 }, { 30, 1, 29, 1, 1000.50 }, { 30, 0, 30, 1, 591.73 }, { 29, 1, 31, 1, 1302.08 },
	{ 30, 0, 32, 1, 652.12 }, { 29, 1, 33, 1, 1342.68 }, { 29, 0, 34, 1, 964.17 }, { 30, 1, 35, 1, 929.69 },
};

static void test_recorded_round_job(void **state)
{
	(void)state;
	replay_recorded_job(round_job, sizeof(round_job) / sizeof(round_job[0]), 4, 31);
}

/* A two-state lab: slow periods 25% down, entered with 3% a run, left with 8%, for every agent at once. */
struct burstctx {
	int culprit, slow;
	double change;
	struct rng *rng;
	double cv;          /* of a run within a burst or out of it; 0: 3% */
};

static double burst_value(void *arg, int c)
{
	struct burstctx *x = arg;

	if (!x->slow && rng_uniform(x->rng) < 0.03)
		x->slow = 1;
	else if (x->slow && rng_uniform(x->rng) < 0.08)
		x->slow = 0;
	return (c >= x->culprit ? 1000 * (1 - x->change) : 1000) * (1 + (x->cv > 0 ? x->cv : 0.03) * rng_normal(x->rng)) *
	       (x->slow ? 0.75 : 1);
}

/*
 * On a lab with bursts of slow periods the engine finds a culprit the
 * bursts hardly hide (30%), and where they swamp it (3%, with a budget
 * of 300 runs) it ends undecided with its numbers, never with a culprit.
 * (The old engine named wrong commits at 0.99+ on such labs: 44 of 85
 * answers at 7% / 4% with 20% bursts.) At 30% a good commit's run in a
 * burst (25% down) lies 1.7 sigmas from the bad commits' level, and a
 * burst can flip the posterior between neighbours: of 300 such jobs 295
 * name the culprit and 5 end undecided (299 and 1 with agents' levels
 * and groups' centres taken as medians), so one of the four may end
 * undecided. At 3% most end undecided: of 300 jobs (seeds 1-300, the
 * culprit at 27, 34, 41, 48 in turn) 212 end undecided, 87 name the
 * culprit and one names its child at 0.9943 (seed 56; 211, 88 and the
 * same one before the ends were measured where their runs kept doubt
 * the change). Of these four three name it, and one ends undecided with
 * its numbers. None may name another commit.
 */
static void test_bursty_lab_right_or_undecided(void **state)
{
	struct dag *d = linear(65);
	int found = 0, undecided = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++)
		for (int big = 0; big < 2; big++) {
			struct bisect *b;
			struct rng rng;
			struct burstctx x = { 20 + 7 * (int)seed, 0, big ? 0.30 : 0.03, &rng, 0 };
			struct bisect_result r;

			rng_seed(&rng, seed);
			r = drive_job(&b, d, 2, 300, burst_value, &x);
			if (big && ((r.verdict == VERDICT_CULPRIT && r.culprit != x.culprit) ||
				    (r.verdict != VERDICT_CULPRIT && r.verdict != VERDICT_UNDECIDED)))
				fail_msg("30%%, seed %d: verdict %d, %d for %d: %s", (int)seed, r.verdict, r.culprit,
					 x.culprit, r.why);
			found += big && r.verdict == VERDICT_CULPRIT;
			if (!big && r.verdict == VERDICT_CULPRIT && r.culprit != x.culprit)
				fail_msg("3%%, seed %d: named %d (culprit %d) at %.4f: %s", (int)seed, r.culprit,
					 x.culprit, r.confidence, r.why);
			if (!big && r.verdict != VERDICT_CULPRIT) {
				undecided++;
				assert_true(r.verdict == VERDICT_UNDECIDED);
				assert_true(r.runs <= 300 + 2 * 8);
				assert_true(r.task_cv > 0 || r.run_cv > 0);
				assert_true(r.budget_runs == 300);
			}
			bisect_free(b);
		}
	if (found < 3 || undecided < 1)
		fail_msg("30%%: %d of 4 jobs named the culprit; 3%%: %d of 4 undecided", found, undecided);
	dag_free(d);
}

/*
 * Bursts of load that last longer than a run: the ends' chains pair a good
 * run with the bad run next to it, so two equal ends are shown equal on a
 * lab whose every burst shifts a task by 25%. (The task-level model alone
 * spent both ends' 30 runs and ended undecided: a burst is a task's level
 * to it.)
 */
static void test_bursts_cancel_in_the_ends_pairs(void **state)
{
	struct dag *d = linear(65);

	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct bisect *b;
		struct rng rng;
		struct burstctx x = { 1000, 0, 0, &rng, 0.005 };
		struct bisect_result r;

		rng_seed(&rng, seed);
		r = drive_job(&b, d, 1, 0, burst_value, &x);
		if (r.verdict != VERDICT_NOT_REPRODUCED)
			fail_msg("seed %d: verdict %d after %d runs: %s", (int)seed, r.verdict, r.runs, r.why);
		bisect_free(b);
	}
	dag_free(d);
}

/*
 * A job given exactly the runs it takes ends as the same job with a
 * budget to spare: the runs that spend the budget are read before the
 * budget ends the job. At the ends, ends shown equal are not a regression;
 * in the confirmation, the pairs that pass name the culprit. (Before, the
 * budget was checked first and both ended undecided on the runs that
 * decided them.)
 */
static void test_budget_spent_on_the_deciding_runs(void **state)
{
	struct dag *d = linear(64);
	int culprits = 0, equal = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 8; seed++)
		for (int none = 0; none < 2; none++) {
			struct sim s = sim(none ? -1 : 37, seed);
			struct bisect *b;
			struct bisect_result r0, r1;

			s.change = 0.07;
			s.cv = none ? 0.004 : 0.04;  /* ends shown within min_effect (1%) in the ends' runs */
			r0 = run_sim(&b, d, &s);
			bisect_free(b);
			if (r0.verdict != (none ? VERDICT_NOT_REPRODUCED : VERDICT_CULPRIT))
				continue;
			s.budget = r0.runs;
			r1 = run_sim(&b, d, &s);
			if (r1.verdict != r0.verdict || r1.culprit != r0.culprit || r1.runs != r0.runs)
				fail_msg("seed %d, %s: %ld runs to verdict %d at %d; with a budget of as many, verdict %d "
					 "at %d after %ld: %s", (int)seed, none ? "no change" : "7%", r0.runs, r0.verdict,
					 r0.culprit, r1.verdict, r1.culprit, r1.runs, r1.why);
			culprits += !none;
			equal += none;
			bisect_free(b);
		}
	print_message("%d culprits and %d equal ends, each on exactly its budget\n", culprits, equal);
	assert_true(culprits >= 6 && equal >= 6);
	dag_free(d);
}

/*
 * With no budget given the engine derives one from the range and the
 * noise, and when it is spent says undecided with what it would take.
 */
static void test_derived_budget_ends_undecided(void **state)
{
	struct dag *d = linear(1025);
	struct sim s = sim(400, 3);
	struct bisect *b;
	struct bisect_result r;

	(void)state;
	s.change = 0.02;
	s.cv = 0.13;
	r = run_sim(&b, d, &s);
	assert_int_equal(r.verdict, VERDICT_UNDECIDED);
	assert_true(r.budget_runs >= 60 && r.budget_runs <= 5000);
	assert_true(r.runs <= r.budget_runs + 2 * 10);
	assert_true(isfinite(r.effect_lo) && r.effect_lo <= r.effect_hi);
	bisect_free(b);
	dag_free(d);
}

/* test_agent_at_two_levels_at_the_ends once the hog is gone: the culprit at 20, 0.5% noise. */
struct lab2ctx {
	struct rng *rng;
};

static double lab2_value(void *arg, int c)
{
	struct lab2ctx *x = arg;

	return (c >= 20 ? 30.9e6 : 36.3e6) * (1 + 0.005 * rng_normal(x->rng));
}

/*
 * The ends as the local lab measured them with a CPU hog halving agent 1
 * for a while: each agent runs good, bad, good, bad, the bad end 15%
 * slower on both, agent 1 at half speed for its first runs. Each end then
 * had runs at two levels, and the rule that set aside runs far from their
 * end's median kept one agent's runs at each end: the regression came
 * out as a 70% improvement, "shown" not to be one (not-reproduced).
 */
/* A run of the levels test: agent 1 reads 15% lower on every commit; the culprit 20 is 20% worse. */
struct levels_ctx {
	struct rng *rng;
	int lower;  /* a lower-is-better metric: worse is higher */
};

static double levels_value(void *ctx, int commit, int agent, int kind)
{
	struct levels_ctx *x = ctx;
	double worse = x->lower ? 1.25 : 0.8;

	(void)kind;
	return 1000 * (commit >= 20 ? worse : 1) * (agent == 1 ? 0.85 : 1) * (1 + 0.01 * rng_normal(x->rng));
}

/*
 * The agents' levels the report's table takes out (bisect_agent_level()):
 * agent 1's runs read 15% lower than agent 0's on every commit, as the
 * metric's own change whichever way is better; the reference is the agent
 * with the most runs, at 0; with one agent there is no reference.
 */
static void test_agent_levels_for_the_report(void **state)
{
	struct dag *d = linear(41);

	(void)state;
	for (int lower = 0; lower <= 1; lower++)
		for (int k = 1; k <= 2; k++) {
			struct bisect_opts o = BISECT_OPTS_INIT;
			struct bisect_query q[BISECT_MAX_QUERIES(2)];
			struct rng rng;
			struct levels_ctx x = { &rng, lower };
			struct bisect *b;
			long long ref;
			int nq, rounds = 0;
			double l0, l1;

			rng_seed(&rng, 5 + lower);
			o.higher_is_better = !lower;
			assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
			while ((nq = bisect_next(q, b, k, NULL)) > 0 && ++rounds < 400)
				feed_agents(b, q, nq, k, levels_value, &x);
			ref = bisect_reference_agent(b);
			l0 = bisect_agent_level(b, 0);
			l1 = bisect_agent_level(b, 1);
			if (k == 1) {
				assert_int_equal(ref, -1);
				assert_true(l0 == 0 && l1 == 0);
			} else {
				if ((ref != 0 && ref != 1) || bisect_agent_level(b, ref) != 0 ||
				    !(fabs((1 + l1) / (1 + l0) - 0.85) <= 0.01) || bisect_agent_level(b, 7) != 0)
					fail_msg("lower %d: reference %lld, levels %+.4f %+.4f", lower, ref, l0, l1);
			}
			bisect_free(b);
		}
	dag_free(d);
}

/*
 * Two regressions in the range (10% at 10, 10% more at 30), and agent 1,
 * 15% lower, ran the ends twice each and the middle commits 20 and 25,
 * which agent 0 never ran, twelve times each. Those runs are neither
 * group's level, so its level against the groups' centres came out at
 * 0.944 of agent 0's; against agent 0's runs of the same commits (the
 * ends) it is 0.848. (From the groups' centres the report's rows read
 * lab2 / lab1 0.933 in one make check, a parent and a bad end 3-8% off
 * their code's level.)
 */
static void test_agent_level_from_shared_commits(void **state)
{
	static const int plan[][3] = {  /* commit, agent, runs */
		{ 0, 0, 7 }, { 40, 0, 7 }, { 0, 1, 2 }, { 40, 1, 2 }, { 35, 0, 8 }, { 5, 0, 8 },
		{ 20, 1, 12 }, { 25, 1, 12 },
	};
	struct dag *d = linear(41);
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[BISECT_MAX_QUERIES(2)];
	struct bisect *b;
	struct rng rng;
	long task = 0;
	double ratio;

	(void)state;
	rng_seed(&rng, 3);
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	for (size_t i = 0; i < sizeof(plan) / sizeof(plan[0]); i++, task++)
		for (int r = 0; r < plan[i][2]; r++) {
			int c = plan[i][0];
			double code = c < 10 ? 1 : c < 30 ? 0.9 : 0.81;

			bisect_add_run(b, c, 1000 * code * (plan[i][1] ? 0.85 : 1) * (1 + 0.005 * rng_normal(&rng)), task,
				       plan[i][1], BISECT_Q_SEARCH);
		}
	bisect_next(q, b, 2, NULL);
	ratio = (1 + bisect_agent_level(b, 1)) / (1 + bisect_agent_level(b, 0));
	if (bisect_reference_agent(b) != 0 || !(fabs(ratio - 0.85) <= 0.01))
		fail_msg("reference %lld, agent 1 / agent 0 %.4f", bisect_reference_agent(b), ratio);
	bisect_free(b);
	dag_free(d);
}

/*
 * Where two agents ran no commit in common, and not one side of the split
 * either (agent 0 the good end, agent 1 the bad end, as a job's first
 * tasks may go), their levels and the change cannot be told apart: the
 * level is not known (NAN), not 0, which a running job's table showed as
 * "+0.00%" while agent 1's runs read 15% low. Once agent 0 runs the bad
 * end too, it is read from that commit; and where agent 1 ran no end but
 * a commit on each side of the split, from the offsets against the
 * groups' centres.
 */
static void add_level_runs(struct bisect *b, struct rng *rng, long *task, int c, int agent, int k)
{
	for (int r = 0; r < k; r++)
		bisect_add_run(b, c, 1000 * (c < 20 ? 1 : 0.8) * (agent ? 0.85 : 1) * (1 + 0.01 * rng_normal(rng)), *task,
			       agent, BISECT_Q_SEARCH);
	(*task)++;
}

static double level_ratio(const struct bisect *b)
{
	return (1 + bisect_agent_level(b, 1)) / (1 + bisect_agent_level(b, 0));
}

static void test_agent_level_not_known(void **state)
{
	struct dag *d = linear(41);
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[BISECT_MAX_QUERIES(2)];
	struct bisect *b, *b2;
	struct rng rng;
	long task = 0;
	double apart, shared, offsets;

	(void)state;
	rng_seed(&rng, 11);
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	assert_int_equal(bisect_new(&b2, d->n, d->par, d->npar, &o), 0);
	add_level_runs(b, &rng, &task, 0, 0, 8);
	add_level_runs(b, &rng, &task, 40, 1, 8);
	bisect_next(q, b, 2, NULL);
	apart = bisect_agent_level(b, 1) + bisect_agent_level(b, 0);
	add_level_runs(b, &rng, &task, 40, 0, 8);
	bisect_next(q, b, 2, NULL);
	shared = level_ratio(b);
	for (int t = 0; t < 4; t++) {
		add_level_runs(b2, &rng, &task, 0, 0, 3);
		add_level_runs(b2, &rng, &task, 40, 0, 3);
	}
	add_level_runs(b2, &rng, &task, 10, 1, 6);
	add_level_runs(b2, &rng, &task, 30, 1, 6);
	bisect_next(q, b2, 2, NULL);
	offsets = level_ratio(b2);
	if (!isnan(apart) || !(fabs(shared - 0.85) <= 0.02) || !(fabs(offsets - 0.85) <= 0.02))
		fail_msg("agent 1 / agent 0: apart %.4f (NAN), from the bad end %.4f, from the groups %.4f (both 0.85)",
			 apart, shared, offsets);
	bisect_free(b);
	bisect_free(b2);
	dag_free(d);
}

/*
 * Commits no run tells apart hold one posterior: bisect_alike() counts
 * them, so that a list of the most probable (five of a stretch of thirty)
 * says that any of the rest is as likely. On a line of 40 candidates with
 * the culprit at 20, runs at the ends and at commit 10 leave two
 * stretches, 1-10 and 11-40; one more at 30 splits the second.
 */
static void test_alike(void **state)
{
	struct dag *d = linear(41);
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[BISECT_MAX_QUERIES(1)];
	struct bisect *b;
	struct rng rng;
	long task = 0;
	int got[4];

	(void)state;
	rng_seed(&rng, 5);
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	for (int t = 0; t < 3; t++) {
		add_level_runs(b, &rng, &task, 0, 0, 4);
		add_level_runs(b, &rng, &task, 40, 0, 4);
	}
	add_level_runs(b, &rng, &task, 10, 0, 3);
	bisect_next(q, b, 1, NULL);
	got[0] = bisect_alike(b, 3);
	got[1] = bisect_alike(b, 25);
	add_level_runs(b, &rng, &task, 30, 0, 3);
	bisect_next(q, b, 1, NULL);
	got[2] = bisect_alike(b, 25);
	got[3] = bisect_alike(b, 35);
	if (got[0] != 10 || got[1] != 30 || got[2] != 20 || got[3] != 10)
		fail_msg("alike: %d %d (10 30), then %d %d (20 10); p %.6f %.6f %.6f", got[0], got[1], got[2], got[3],
			 bisect_posterior(b, 3), bisect_posterior(b, 25), bisect_posterior(b, 35));
	bisect_free(b);
	dag_free(d);
}

/*
 * Before the ends are compared, the engine's why says how far the ends
 * are from it, not "the ends differ by +0.00% (P(not worse)=1.0000)",
 * which it said of ends it had not compared (a running job's page and
 * report show it); once compared, their difference.
 */
static void test_ends_why_before_they_are_compared(void **state)
{
	struct dag *d = linear(17);
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[BISECT_MAX_QUERIES(1)];
	struct bisect_result r;
	struct bisect *b;
	long task = 0;

	(void)state;
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	bisect_add_run(b, 0, 1000, task++, 0, BISECT_Q_SEARCH);
	bisect_add_run(b, d->n - 1, 800, task++, 0, BISECT_Q_SEARCH);
	bisect_next(q, b, 1, NULL);
	bisect_result(&r, b);
	if (!strstr(r.why, "measuring both ends: 1 and 1 runs so far"))
		fail_msg("why: %s", r.why);
	for (int t = 0; t < 4; t++)
		for (int e = 0; e < 2; e++)
			for (int k = 0; k < 3; k++)
				bisect_add_run(b, e ? d->n - 1 : 0, (e ? 800 : 1000) * (1 + 0.01 * (k - 1)), task + e, 0,
					       BISECT_Q_SEARCH);
	task += 2;
	bisect_next(q, b, 1, NULL);
	bisect_result(&r, b);
	if (strstr(r.why, "measuring both ends") || strstr(r.why, "+0.00%"))
		fail_msg("why, the ends measured: %s", r.why);
	bisect_free(b);
	dag_free(d);
}

static void test_agent_at_two_levels_at_the_ends(void **state)
{
	struct dag *d = linear(37);
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[BISECT_MAX_QUERIES(2)];
	struct bisect_result r;
	struct bisect *b;
	struct rng rng;
	long task = 0;

	(void)state;
	rng_seed(&rng, 9);
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	/* Job creation's plain tasks: agent 1 at the good end (hogged), agent 2 at the bad end. */
	for (int j = 0; j < 5; j++)
		bisect_add_run(b, 0, 18.4e6 * (1 + 0.005 * rng_normal(&rng)), task, 1, BISECT_Q_SEARCH);
	task++;
	for (int j = 0; j < 5; j++)
		bisect_add_run(b, 36, 30.7e6 * (1 + 0.005 * rng_normal(&rng)), task, 2, BISECT_Q_SEARCH);
	task++;
	/* Then the chains, A B A B on each agent; agent 1's hog goes away after its eighth run. */
	for (int j = 0; j < 12; j++)
		for (int agent = 1; agent <= 2; agent++) {
			int c = j % 2 ? 36 : 0;
			double level = agent == 1 && j < 8 ? 0.5 : 1;

			bisect_add_run(b, c, level * (c ? 30.9e6 : 36.3e6) * (1 + 0.005 * rng_normal(&rng)), task++, agent,
				       BISECT_Q_SEARCH);
		}
	{
		/*
		 * The job goes on with the hog gone, the culprit at 20. (Since the
		 * chains' pairs are found agent by agent the ends are decided here
		 * on them, and the search's model, whose agents' levels the
		 * hogged runs skew, put the effect at +70% at first: the answer is
		 * what is asserted, never not-reproduced nor another commit.)
		 */
		struct lab2ctx x = { &rng };
		int nq, rounds = 0;

		while ((nq = bisect_next(q, b, 2, NULL)) > 0 && ++rounds < 400)
			feed(b, q, nq, lab2_value, &x);
	}
	bisect_result(&r, b);
	if (r.verdict == VERDICT_NOT_REPRODUCED || (r.verdict == VERDICT_CULPRIT && r.culprit != 20) ||
	    (r.verdict != VERDICT_CULPRIT && r.verdict != VERDICT_UNDECIDED))
		fail_msg("verdict %d, culprit %d, effect %+.4f: %s", r.verdict, r.culprit, r.effect, r.why);
	print_message("verdict %d, culprit %d at %.4f, effect %+.4f, %ld runs\n", r.verdict, r.culprit, r.confidence,
		      r.effect, r.runs);
	bisect_free(b);
	dag_free(d);
}

/*
 * The ends' chains on two agents as the coordinator takes their runs:
 * interleaved as the agents send them (A good, B good, A bad, B bad, ...).
 * The lab's level moves from one moment to the next by about 15%, so
 * the task-level model cannot see a 5% regression in 20 runs an end,
 * but each agent's neighbouring good and bad runs share a moment and
 * their pairs show it. (Paired across agents as if one stream, each run
 * of the other agent broke the pair: no pair was found, and the job
 * ended undecided at the ends after 30 runs an end.)
 */
static void test_ends_pairs_of_two_interleaved_agents(void **state)
{
	struct dag *d = linear(37);

	(void)state;
	for (uint64_t seed = 1; seed <= 5; seed++) {
		struct bisect_opts o = BISECT_OPTS_INIT;
		struct bisect_query q[BISECT_MAX_QUERIES(2)];
		struct bisect_result r;
		struct bisect *b;
		struct rng rng;
		long task = 0;

		rng_seed(&rng, seed);
		assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
		for (int m = 0; m < 20; m++) {
			double level = exp(0.15 * rng_normal(&rng));

			for (int e = 0; e < 2; e++)
				for (int agent = 1; agent <= 2; agent++) {
					int c = m % 2 == e ? 0 : 36;

					bisect_add_run(b, c, level * (c ? 950 : 1000) * (1 + 0.01 * rng_normal(&rng)),
						       task++, agent, BISECT_Q_SEARCH);
				}
		}
		bisect_next(q, b, 2, NULL);
		bisect_result(&r, b);
		if (r.state != BISECT_SEARCH || r.effect >= 0)
			fail_msg("seed %d: state %d, effect %+.4f: %s", (int)seed, r.state, r.effect, r.why);
		bisect_free(b);
	}
	dag_free(d);
}

/*
 * On one agent, runs that follow runs at the same commit join their unit
 * and share its level, so once the lab is seen to move between units,
 * more runs there are worth little: the search measures elsewhere and
 * comes back. (It used to re-measure one commit in one-run queries, 23 in
 * a row here, while the unit's mean could not tell the groups apart.)
 */
static void test_search_does_not_pile_runs_into_one_unit(void **state)
{
	struct dag *d = linear(1025);
	int worst = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct bisect_opts o = BISECT_OPTS_INIT;
		struct bisect_query q[BISECT_MAX_QUERIES(1)];
		struct bisect_result r;
		struct bisect *b;
		struct rng rng;
		struct sim s = sim(100 + 150 * (int)seed, seed);
		struct simctx x = { d, &s, &rng, 0 };
		int nq, last = -1, streak = 0;

		s.change = 0.07;
		rng_seed(&rng, seed);
		o.build_cost = 30;
		o.run_cost = 10;
		assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
		while ((nq = bisect_next(q, b, 1, NULL)) > 0) {
			if (nq == 1 && q[0].confirm == BISECT_Q_SEARCH && !q[0].chain && q[0].commit > 0 &&
			    q[0].commit < d->n - 1) {
				streak = q[0].commit == last ? streak + 1 : 0;
				last = q[0].commit;
				worst = streak > worst ? streak : worst;
			} else {
				last = -1;
			}
			feed(b, q, nq, sim_value, &x);
		}
		bisect_result(&r, b);
		assert_true(r.verdict != VERDICT_CULPRIT || r.culprit == s.culprit);
		bisect_free(b);
	}
	if (worst > 3)
		fail_msg("the search extended one commit's unit with %d queries in a row", worst);
	dag_free(d);
}

/*
 * The local lab under bench-lab's load injector: two agents (34 and 32
 * Mops/s, so 6% apart), a run 0.2 s of a clock, and one CPU hog switched
 * on a random agent's core for 1-8 s, then off for 1-8 s; a hogged run
 * goes at half speed. parent_odd: every run the confirmation asks of the
 * culprit's parent reports three times its speed, and no hog runs.
 * level0 < 1: no switching hog, and agent 0's core shared with one for
 * good, its runs at that share of its speed.
 * The agents are the engine's slots 0 and 1: query i of a round on agent
 * i % 2, chain ch on agent (ch - 1) % 2.
 */
#ifndef HOG_SEEDS
#define HOG_SEEDS 100
#endif

struct hogctx {
	struct rng *rng;
	int culprit, core, parent_odd;
	double change, clock, until, level0;
	double intermittent; /* > 0, no hog: the culprit's change shows in this share of its runs, at random */
	const char *says;    /* hog_job(): a why to look for in the job's steps (NULL: none) ... */
	int said;            /* ... and the steps that gave it */
};

static double hog_value(void *ctx, int c, int agent, int kind)
{
	struct hogctx *h = ctx;
	double v = (c >= h->culprit ? 1 - h->change : 1) * (agent ? 32e6 : 34e6) * (1 + 0.01 * rng_normal(h->rng));
	int hogged;

	if (h->intermittent)
		return (c >= h->culprit && rng_uniform(h->rng) < h->intermittent ? 1 - h->change : 1) * (agent ? 32e6 : 34e6) *
		       (1 + 0.01 * rng_normal(h->rng));
	if (h->level0 < 1)
		return agent ? v : v * h->level0;
	h->clock += 0.2;
	while (h->clock >= h->until) {
		h->core = h->core >= 0 ? -1 : (int)(rng_next(h->rng) % 2);
		h->until += 1 + 7 * rng_uniform(h->rng);
	}
	hogged = h->core == agent;
	if (h->parent_odd)
		return kind == BISECT_Q_CONFIRM && c == h->culprit - 1 ? 3 * v : v;
	return hogged ? v * (0.5 + 0.02 * rng_normal(h->rng)) : v;
}

/* b's result, kept past freeing b and d: its why copied into why[256], its set left out. */
static struct bisect_result result_freeing(struct bisect *b, struct dag *d, char *why)
{
	struct bisect_result r;

	bisect_result(&r, b);
	snprintf(why, 256, "%s", r.why);
	r.why = why;
	r.set = NULL;
	bisect_free(b);
	dag_free(d);
	return r;
}

/*
 * A job on 36 commits, the culprit at 19 (5%), under the hog; at most
 * `rounds` rounds. Its why into why[256]; *confirming: the most rounds
 * in a row it asked for the confirmation's pairs of one commit.
 * HOG_TRACE=S prints each decision of seed S's job.
 */
static struct bisect_result hog_job(struct hogctx *h, uint64_t seed, int rounds, int *used, int *confirming,
				    char *why)
{
	struct dag *d = linear(37);
	struct bisect_opts o;
	struct bisect_query q[BISECT_MAX_QUERIES(2)];
	struct bisect_result r;
	struct bisect *b;
	struct rng rng;
	int nq;

	h->rng = &rng;
	rng_seed(&rng, seed);
	/* As bisectd runs a bench-lab job: 5 runs a task, --min-effect 3. */
	bisect_job_opts(&o, 0.99, 0.01, 0.03, 0, 0, 1, 5);
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	bisect_set_costs(b, 0.5, 0.2);
	*used = *confirming = 0;
	for (int streak = 0, top = -1; *used < rounds && (nq = bisect_next(q, b, 2, NULL)) > 0;) {
		int pairs = 0;

		bisect_result(&r, b);
		for (int i = 0; i < nq; i++)
			pairs |= q[i].confirm == BISECT_Q_CONFIRM;
		streak = !pairs ? 0 : r.culprit == top ? streak + 1 : 1;
		if (getenv("HOG_TRACE") && atoi(getenv("HOG_TRACE")) == (int)seed)
			print_message("%ld runs: %s\n", r.runs, r.why);
		h->said += h->says && strstr(r.why, h->says);
		top = pairs ? r.culprit : -1;
		*confirming = streak > *confirming ? streak : *confirming;
		feed_agents(b, q, nq, 2, hog_value, h);
		++*used;
	}
	return result_freeing(b, d, why);
}

/*
 * With the hog switched between the agents' cores a third to a half of an
 * agent's runs in a stretch go at half speed. Each agent's level and each
 * group's centre were medians: where an agent's runs were near half slow
 * its level fell between the two speeds, sigma grew to the gap, no run was
 * set aside, and the posterior sat on commits whose runs happened to be
 * slow (the local lab's 5% case took 267 to 770 runs, one job ran out of
 * time). They are now the median of the runs above a fence set from the
 * upper quantiles, which a slow mode below does not move: 99 of these 100
 * jobs name the culprit in 52 runs on average, where 94 did in 78 (97 in
 * 71 with the groups' means fixed alone). No job may name another commit.
 */
static void test_hog_switched_between_the_agents(void **state)
{
	int right = 0;
	long runs = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= HOG_SEEDS; seed++) {
		struct hogctx h = { NULL, 19, -1, 0, 0.05, 0, 0, 1, 0, NULL, 0 };
		int rounds, confirming;
		char why[256];
		struct bisect_result r = hog_job(&h, seed, 1000, &rounds, &confirming, why);

		if (r.verdict == VERDICT_CULPRIT && r.culprit != 19)
			fail_msg("seed %d: named %d at %.4f after %ld runs: %s", (int)seed, r.culprit, r.confidence,
				 r.runs, r.why);
		if (getenv("HOG_VERBOSE"))
			print_message("seed %d: verdict %d, %ld runs: %s\n", (int)seed, r.verdict, r.runs, r.why);
		right += r.verdict == VERDICT_CULPRIT;
		runs += r.runs;
	}
	print_message("%d of %d named the culprit, %.1f runs a job\n", right, HOG_SEEDS, (double)runs / HOG_SEEDS);
	if (right < HOG_SEEDS * 97 / 100 || runs > 62 * HOG_SEEDS)
		fail_msg("%d of %d jobs named the culprit, the rest undecided; %.1f runs a job", right, HOG_SEEDS,
			 (double)runs / HOG_SEEDS);
}

/* A hog test job with no change (see hog_job()); its why into why[256]. */
static struct bisect_result hog_no_change_job(uint64_t seed, char *why)
{
	struct hogctx h = { NULL, 19, -1, 0, 0, 0, 0, 1, 0, NULL, 0 };
	int rounds, confirming;

	return hog_job(&h, seed, 1000, &rounds, &confirming, why);
}

/*
 * The hog test with no change, bench-lab's none case (where 1 to 3 jobs
 * in 24 ended undecided at the ends at 11bb028): no job may name a
 * commit, and at most 2% end other than not-reproduced (1,000 seeds:
 * 975 not-reproduced at 11bb028, 989 now). Seed 94 was the one of these
 * 100 left undecided: after 30 runs an end its pairs kept showed the
 * ends within 3% at p = 0.0001, but every pair only at 0.0072, one hogged
 * pair unanswered; the ends are now measured on while that is near
 * (ends_cap()), and it ends not-reproduced.
 */
static void test_hog_no_change_not_reproduced(void **state)
{
	/*
	 * Seeds 323 and 348 (of 1,000): an agent hogged for most of its runs
	 * has the slow level as its own, so its clean runs lie far above its
	 * ends' centres, and a pair of a clean good run and a hogged bad one
	 * is a worse pair that no slow run of the good end answers. A bad-end
	 * run as far above its centre answers it as well (end_far()): both
	 * were undecided after 30 runs an end without it.
	 */
	static const uint64_t must[] = { 94, 323, 348 };
	int nr = 0, und = 0;
	long runs = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= HOG_SEEDS; seed++) {
		char why[256];
		struct bisect_result r = hog_no_change_job(seed, why);

		if (r.verdict == VERDICT_CULPRIT || r.verdict == VERDICT_RANGE)
			fail_msg("seed %d: named %d at %.4f after %ld runs: %s", (int)seed, r.culprit, r.confidence,
				 r.runs, r.why);
		if (getenv("HOG_VERBOSE") && r.verdict != VERDICT_NOT_REPRODUCED)
			print_message("seed %d: verdict %d, %ld runs: %s\n", (int)seed, r.verdict, r.runs, r.why);
		nr += r.verdict == VERDICT_NOT_REPRODUCED;
		und += r.verdict == VERDICT_UNDECIDED;
		runs += r.runs;
	}
	print_message("%d of %d not reproduced, %d undecided, %.1f runs a job\n", nr, HOG_SEEDS, und,
		      (double)runs / HOG_SEEDS);
	if (nr < HOG_SEEDS * 98 / 100)
		fail_msg("%d of %d jobs not reproduced", nr, HOG_SEEDS);
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++) {
		char why[256];
		struct bisect_result r = hog_no_change_job(must[i], why);

		if (r.verdict != VERDICT_NOT_REPRODUCED)
			fail_msg("seed %d: verdict %d after %ld runs: %s", (int)must[i], r.verdict, r.runs, r.why);
	}
	/* Seed 323's ends, measured on past 30 runs while every pair nearly shows them equal, say what more would take. */
	{
		struct hogctx h = { NULL, 19, -1, 0, 0, 0, 0, 1, 0,
				    "nearly do: more runs at both, up to 60 an end; about ", 0 };
		int rounds, confirming;
		char why[256];

		hog_job(&h, 323, 1000, &rounds, &confirming, why);
		assert_true(h.said > 0);
	}
}

/*
 * linear(9), the culprit 5 (5% worse), two agents (agent 1 6% slower):
 * 10 runs at each end and 4 at each commit on each agent, one a task,
 * but the parent 4, measured on agent 0 alone in 16 runs, stretches of
 * four hogged (half speed) and not in turn. With hogged, also 4 runs at
 * half speed on agent 0 at each commit but 4 (set aside, as load).
 */
static struct bisect *half_hogged_job(struct dag *d, int hogged)
{
	struct bisect_query q[BISECT_MAX_QUERIES(2)];
	struct bisect_opts o;
	struct bisect *b;
	struct rng rng;
	long task = 0;

	rng_seed(&rng, 7);
	bisect_job_opts(&o, 0.99, 0.01, 0.03, 0, 0, 1, 5);
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	for (int c = 0; c < d->n; c++)
		for (int a = 0; a < 2; a++)
			for (int i = 0; i < (c == 0 || c == 8 ? 10 : c == 4 ? 0 : 4); i++)
				bisect_add_run(b, c, (c >= 5 ? 0.95 : 1) * (a ? 32e6 : 34e6) * (1 + 0.01 * rng_normal(&rng)),
					       task++, a, BISECT_Q_SEARCH);
	for (int i = 0; i < 16; i++)
		bisect_add_run(b, 4, (i / 4 % 2 ? 1 : 0.5) * 34e6 * (1 + 0.01 * rng_normal(&rng)), task++, 0,
			       BISECT_Q_SEARCH);
	for (int c = 0; hogged && c < d->n; c++)
		for (int i = 0; i < (c == 4 ? 0 : 4); i++)
			bisect_add_run(b, c, (c >= 5 ? 0.95 : 1) * 0.5 * 34e6 * (1 + 0.01 * rng_normal(&rng)), task++, 0,
				       BISECT_Q_SEARCH);
	bisect_assume_reproduced(b);
	bisect_next(q, b, 2, NULL);
	return b;
}

/*
 * A commit measured on one agent while a hog came and went on its core:
 * half its runs at half speed, in stretches. Each run was also set aside
 * when it lay far from its own commit's median, and with the runs in two
 * modes that median fell between them: every run of the commit was set
 * aside, the slow ones and the clean ones, and the commit counted as not
 * measured. In a job of the hog test (seed 19) the posterior sat at
 * 0.5000 between the culprit and its parent for 92 runs while the
 * parent's clean runs came in, and the job ran out of budget undecided.
 * The commit's own centre is now bisect_upper_centre(): the clean runs count.
 */
static void test_commit_half_hogged_still_counts(void **state)
{
	struct dag *d = linear(9);
	struct bisect_result r;
	struct bisect *b = half_hogged_job(d, 0);

	(void)state;
	bisect_result(&r, b);
	print_message("parent %.4f, culprit %.4f, runs set aside %d: %s\n", bisect_posterior(b, 4),
		      bisect_posterior(b, 5), r.outliers, r.why);
	/* The 8 clean runs kept, the 8 slow ones set aside: the parent is good. */
	assert_true(bisect_posterior(b, 5) > 0.99);
	assert_true(r.outliers <= 8 + 2);
	bisect_free(b);
	dag_free(d);
}

/*
 * The derived budget is made from the bits per run of the runs kept; runs
 * set aside carry none, so the same job with a hog's 32 slow runs more
 * (40 of its 136 runs set aside) gets a budget whose search part is
 * larger by the share kept: 129 and 142 runs (the confirmation's and the
 * ends' parts, about 77 runs, stay). Before, both were 125. The estimate
 * of the runs that would decide the job (read with an undecided answer)
 * is made the same way: 16 and 18, where both were 16.
 */
static void test_budget_counts_runs_set_aside(void **state)
{
	struct dag *d = linear(9);
	struct bisect_result r0, r1;
	struct bisect *b0 = half_hogged_job(d, 0), *b1 = half_hogged_job(d, 1);

	(void)state;
	bisect_result(&r0, b0);
	bisect_result(&r1, b1);
	print_message("budget %ld with %d runs set aside of %ld, %ld with %d of %ld; more runs %ld and %ld\n",
		      r0.budget_runs, r0.outliers, r0.runs, r1.budget_runs, r1.outliers, r1.runs, r0.more_runs,
		      r1.more_runs);
	assert_true(r1.outliers >= 8 + 30);
	assert_true(r1.budget_runs >= r0.budget_runs + 10);
	assert_true(r1.more_runs > r0.more_runs);
	bisect_free(b0);
	bisect_free(b1);
	dag_free(d);
}

/*
 * The ends of linear(9) on two agents, interleaved (good, bad, good, bad
 * on each), `runs` runs each at CV 1%, the same level; with slow_bad, the
 * bad end's fourth run 15% slow (an intermittent regression shows in
 * some runs only). The verdict after one step.
 */
static struct bisect_result ends_asking(uint64_t seed, int slow_bad, int runs, int equal_runs, int *nq, char *why)
{
	struct dag *d = linear(9);
	struct bisect_query q[BISECT_MAX_QUERIES(2)];
	struct bisect_opts o;
	struct bisect *b;
	struct rng rng;
	long task = 0;

	rng_seed(&rng, seed);
	bisect_job_opts(&o, 0.99, 0.01, 0.03, 0, 0, 1, 5);
	o.equal_runs = equal_runs;
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	for (int i = 0; i < runs; i++)
		for (int e = 0; e < 2; e++) {
			int a = i % 2, slow = e && slow_bad && i == 3;

			bisect_add_run(b, e ? 8 : 0, (slow ? 0.85 : 1) * (a ? 32e6 : 34e6) * (1 + 0.01 * rng_normal(&rng)),
				       task++, a, BISECT_Q_SEARCH);
		}
	*nq = bisect_next(q, b, 2, NULL);
	for (int i = 0; i < *nq; i++)
		assert_true(q[i].commit == 0 || q[i].commit == 8);
	return result_freeing(b, d, why);
}

/* The ends of a history of 8 measured `runs` times each, one run of the bad end 15% slow with slow_bad. */
static struct bisect_result ends_with_slow_runs(uint64_t seed, int slow_bad, int runs, char *why)
{
	int nq;

	return ends_asking(seed, slow_bad, runs, 0, &nq, why);
}

/* For seeds 1-20, ends_with_slow_runs(seed, slow_bad, runs) ends "not a regression" exactly when want. */
static void ends_verdicts(int slow_bad, int runs, int want, const char *what)
{
	char why[256];

	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct bisect_result r = ends_with_slow_runs(seed, slow_bad, runs, why);

		if ((r.verdict == VERDICT_NOT_REPRODUCED) != want)
			fail_msg("seed %d: %s: %s", (int)seed, what, why);
	}
}

/*
 * The ends' outlier rules set aside a run far from its end's median: a
 * bimodal machine's slow run. Where the bad end's one slow run is the
 * regression itself (a culprit 15% slower in half its runs), the ends
 * were then "shown" equal (test_intermittent_regression_jobs: 10 of 50
 * jobs). "Not worse" must now hold with every run of the ends in on the
 * task model, and on the pairs with a pair beyond the rule read as it is
 * unless the lab answers it: a pair as far beyond on the better side, or
 * a slow run of the good end. Read at the rule's fence, seed 2's slow
 * pair (17% beyond) was answered by nothing but a pair 4.5% the other
 * way, and the ends were shown equal on eight runs each. Two equal ends
 * still are.
 */
static void test_intermittent_regression_not_ruled_out(void **state)
{
	(void)state;
	ends_verdicts(1, 8, 0, "one slow run of eight at the bad end");
	ends_verdicts(0, 8, 1, "two equal ends");
}

/*
 * "Not a regression" says what it cannot rule out: a change in fewer than
 * 1 - 0.005^(1/n) of the runs misses all n runs of the bad end more often
 * than the claim's one-sided error (a culprit slow in one run of six
 * ended not-reproduced in 41 of 400 hog-driver jobs on 12 runs of the bad
 * end). 48% on 8 runs, 20% on 24; none said when the job names nothing
 * of the kind.
 */
static void test_not_reproduced_says_what_it_cannot_rule_out(void **state)
{
	static const struct {
		int runs;
		const char *says;
	} cell[] = { { 8, "unless it shows in under 48% of the runs" }, { 24, "unless it shows in under 20% of the runs" } };
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cell) / sizeof(cell[0]); i++) {
		struct bisect_result r = ends_with_slow_runs(1, 0, cell[i].runs, why);

		assert_int_equal(r.verdict, VERDICT_NOT_REPRODUCED);
		assert_true(fabs(r.rare_share - (1 - pow(0.005, 1.0 / cell[i].runs))) < 1e-12);
		if (!strstr(why, cell[i].says))
			fail_msg("%d runs an end: %s", cell[i].runs, why);
	}
	assert_true(ends_with_slow_runs(1, 1, 8, why).rare_share == 0);
}

/*
 * A job may ask for more runs of the ends before "not a regression"
 * (submit --end-runs 24): two equal ends shown equal on 8 runs each are
 * measured on, not answered, and on 24 the answer rules out a change in
 * 20% of the runs, not 48%. Where the ends differ the search starts as
 * before, on 8 runs.
 */
static void test_end_runs_asked_before_not_reproduced(void **state)
{
	char why[256];
	int nq;

	(void)state;
	for (uint64_t seed = 1; seed <= 5; seed++) {
		struct bisect_result r = ends_asking(seed, 0, 8, 24, &nq, why);

		if (r.verdict != VERDICT_NONE || r.state != BISECT_ENDS || nq < 2)
			fail_msg("seed %d, 8 runs an end of 24 asked: verdict %d, %d queries: %s", (int)seed, r.verdict,
				 nq, why);
		r = ends_asking(seed, 0, 24, 24, &nq, why);
		assert_int_equal(r.verdict, VERDICT_NOT_REPRODUCED);
		assert_true(fabs(r.rare_share - (1 - pow(0.005, 1.0 / 24))) < 1e-12);
		assert_non_null(strstr(why, "unless it shows in under 20% of the runs"));
	}
}

/*
 * A regression that shows in half its runs is missed by all of six 1 time
 * in 64: "not a regression" at 0.99 now needs eight runs of the bad end
 * (2^-8 under the one-sided 0.005). Two equal ends are not shown equal on
 * six runs each, and are on eight (above).
 */
static void test_ends_shown_equal_only_on_enough_runs(void **state)
{
	(void)state;
	ends_verdicts(0, 6, 0, "two equal ends, six runs each");
}

/*
 * Jobs on the hog driver's history with no hog and an intermittent
 * culprit, 15% slower in half its runs (and its descendants'): 10 of 50
 * ended "not a regression" at 0.99 on their first 12 or 24 runs, where
 * the bad end's one slow run was set aside, and 17 named the culprit.
 * With every run of the ends in on the task model, 3 did (two on 12 runs,
 * the bad end's six all fast or one slow pair read at the rule's fence;
 * one on 48, four slow pairs read at it) and 22 named the culprit. With
 * eight runs of the bad end and unanswered pairs read as they are, none
 * does (none in 200 seeds, where 11 did) and 23 name the culprit; none
 * may name another commit. The rest end undecided or are cut at 300
 * rounds.
 */
static void test_intermittent_regression_jobs(void **state)
{
	int notrep = 0, named = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 50; seed++) {
		struct hogctx h = { NULL, 19, -1, 0, 0.15, 0, 0, 1, 0.5, NULL, 0 };
		int rounds, confirming;
		char why[256];
		struct bisect_result r = hog_job(&h, seed, 300, &rounds, &confirming, why);

		if (r.verdict == VERDICT_CULPRIT && r.culprit != 19)
			fail_msg("seed %d: named %d at %.4f after %ld runs: %s", (int)seed, r.culprit, r.confidence,
				 r.runs, r.why);
		notrep += r.verdict == VERDICT_NOT_REPRODUCED;
		if (r.verdict == VERDICT_NOT_REPRODUCED)
			print_message("seed %d, %ld runs: %s\n", (int)seed, r.runs, r.why);
		named += r.verdict == VERDICT_CULPRIT;
	}
	print_message("%d of 50 named the culprit, %d not a regression\n", named, notrep);
	assert_true(notrep <= 1);
}

/*
 * The same jobs, the culprit 15% or 30% slower in a third, half or 70%
 * of its runs. Every commit after it then measures at both levels, and
 * one measured fast five times (or slow) by chance is a "good" (or
 * "bad") commit to a model of two levels, at 1.0000: named after 4 to 12
 * interleaved pairs against a parent as intermittent as itself, all or
 * most of them one way. The pairs are now also judged by a sign-flip
 * test, which assumes nothing of their spread, at a quarter of the t
 * test's boundaries, once a commit likely bad has measured at both
 * levels (bisect_levels_mixed()) or the bad end's runs spread beyond the good
 * end's (bisect_bad_end_noisier()). With -DINTERMITTENT_SEEDS=2000 (12,000
 * jobs), 40 named another commit at 1.0000 before and 1,566 the culprit;
 * now 1 and 1,249. A culprit so confirmed claims the job's confidence,
 * not the posterior (capped), and every claim is checked for it. These seeds' jobs may name no other commit; two did
 * before (15% and 30% in 70% of the runs, seeds 92 and 30). At 2000 seeds
 * (2026-12-06) 4 jobs named another commit; with the confirmation's cut
 * of a run far below its own commit's others made on each side alone,
 * 14, and the same 4 since it is made only where the two sides hold one
 * such run between them and the runs do not show two modes (own_cuts()).
 */
#ifndef INTERMITTENT_SEEDS
#define INTERMITTENT_SEEDS 100
#endif
static void test_intermittent_culprit_not_misnamed(void **state)
{
	static const double change[] = { 0.15, 0.30 }, share[] = { 0.33, 0.5, 0.7 };
	int named = 0, wrong = 0, capped = 0;

	(void)state;
	for (int i = 0; i < 6; i++)
		for (uint64_t seed = 1; seed <= INTERMITTENT_SEEDS; seed++) {
			struct hogctx h = { NULL, 19, -1, 0, change[i % 2], 0, 0, 1, share[i / 2], NULL, 0 };
			int rounds, confirming;
			char why[256];
			struct bisect_result r = hog_job(&h, seed, 300, &rounds, &confirming, why);

			if (r.verdict == VERDICT_CULPRIT && r.culprit != 19) {
				print_message("%.0f%% in %.0f%% of the runs, seed %d: named %d at %.4f after %ld runs: %s\n",
					      100 * change[i % 2], 100 * share[i / 2], (int)seed, r.culprit, r.confidence,
					      r.runs, r.why);
				wrong++;
			}
			if (getenv("HOG_VERBOSE"))
				print_message("%.0f%% in %.0f%%, seed %d: verdict %d, %ld runs: %s\n", 100 * change[i % 2],
					      100 * share[i / 2], (int)seed, r.verdict, r.runs, r.why);
			named += r.verdict == VERDICT_CULPRIT && r.culprit == 19;
			/* Confirmed with the sign-flip test in force: the claim is capped at the job's confidence. */
			if (r.verdict == VERDICT_CULPRIT && strstr(why, "two modes")) {
				assert_true(r.confidence < r.posterior);
				assert_true(r.confidence <= 0.99);
				capped++;
			} else {
				assert_true(r.confidence == r.posterior);
			}
		}
	print_message("of %d jobs %d named the culprit, %d another commit; %d claims capped\n", 6 * INTERMITTENT_SEEDS,
		      named, wrong, capped);
	assert_int_equal(wrong, 0);
	assert_true(capped > 0);
}

/* A job with an intermittent culprit: where it is, the runs' noise, and how slow its slow half is. */
struct intermittent {
	int culprit;
	double cv, slow;
	struct rng *rng;
};

/* A run: noise at cv, and from the culprit on `slow` times as fast in half the runs. */
static double intermittent_value(void *arg, int c, int agent, int kind)
{
	struct intermittent *x = arg;
	double v = 1000 * (1 + x->cv * rng_normal(x->rng));

	(void)agent;
	(void)kind;
	return c >= x->culprit && rng_uniform(x->rng) < 0.5 ? x->slow * v : v;
}

/* x's job on a linear history of 64 with k agents, seeded, for at most `rounds` rounds; its why into why[256]. */
static struct bisect_result intermittent_job(struct intermittent *x, uint64_t seed, int k, int rounds, char *why)
{
	struct dag *d = linear(64);
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[BISECT_MAX_QUERIES(2)];
	struct bisect *b;
	struct rng rng;
	int nq;

	x->rng = &rng;
	rng_seed(&rng, seed);
	o.build_cost = o.run_cost = 1;
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	while ((nq = bisect_next(q, b, k, NULL)) > 0 && --rounds > 0)
		feed_agents(b, q, nq, k, intermittent_value, x);
	return result_freeing(b, d, why);
}

/*
 * Where the change's two modes overlap (24% at a CV of 4%) the groups are
 * no 6 sigmas apart and no commit measures at both levels by that rule,
 * but the bad end's runs lie four times as far from their mean as the
 * good end's: bisect_bad_end_noisier() puts the sign-flip test in force then.
 * On a linear history of 64, one agent, the culprit at 20 + seed % 40,
 * 2,000 seeds named another commit 29 times (1 agent) and 32 (2 agents)
 * before the flip test, 25 and 27 with bisect_levels_mixed() alone, 18 and 18
 * with Brown and Forsythe's test (of 1,624 and 1,638 named), 14 and 10
 * with Levene's (of 1,570 and 1,574). Seed 259 named a commit after the
 * culprit at 0.9994 on 6 pairs with bisect_levels_mixed() alone; seeds 232 and
 * 967 named one with Brown and Forsythe's test (54 at 0.9988, 32 at
 * 1.0000).
 * Levene's test at NOISIER_P sees few bad ends of five or ten runs so:
 * seeds 270 and 456 (1 agent), 324 and 444 (2 agents) named a commit
 * 9-38 after the culprit at 1.0000, on 8-14 pairs that passed the t test
 * alone. The bad end's runs split in two modes with one at the good
 * level (bisect_bad_end_two_modes()) put the sign-flip test in force, and on
 * fewer runs than tell it from one level's, measure the ends on first.
 */
static void test_intermittent_overlapping_modes(void **state)
{
	static const struct {
		uint64_t seed;
		int k;
	} jobs[] = { { 259, 1 }, { 232, 1 }, { 967, 1 }, { 270, 1 }, { 456, 1 }, { 324, 2 }, { 444, 2 } };

	(void)state;
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		struct intermittent x = { 20 + (int)(jobs[i].seed % 40), 0.04, 0.76, NULL };
		char why[256];
		struct bisect_result r = intermittent_job(&x, jobs[i].seed, jobs[i].k, 400, why);

		if (r.verdict == VERDICT_CULPRIT && r.culprit != x.culprit)
			fail_msg("seed %d, %d agents: named %d at %.4f, the culprit %d: %s", (int)jobs[i].seed, jobs[i].k,
				 r.culprit, r.confidence, x.culprit, why);
	}
}

/*
 * A culprit 30% slower in half its runs, at a CV of 1%: every slow run
 * lies far below both groups and is set aside, so what is left of a bad
 * commit looks like a good one. The search, blind to the change, ran to
 * the derived budget's cap, 5,000 runs, in six of these eight jobs; then
 * it measured the ends until their runs kept showed no change and ended
 * undecided, "the change is in the slow runs set aside, which bisectd
 * does not bisect on" (48-316 runs a job). The ends' shares of slow runs
 * (bisect_rate_mode()) now set the job to bisect on the share of slow runs, and
 * its confirmation is a sign test of the pairs' slow runs: each of the
 * eight jobs names the culprit, saying the change is in the slow runs,
 * with the two groups' shares in the result (56-60% and 0-1% here).
 */
static void test_change_in_slow_runs_found_by_their_share(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++)
		for (int k = 1; k <= 2; k++) {
			struct intermittent x = { 20, 0.01, 0.7, NULL };
			char why[256];
			struct bisect_result r = intermittent_job(&x, seed, k, 2000, why);

			if (r.verdict != VERDICT_CULPRIT || r.culprit != 20 || r.runs > 400 || !strstr(why, "slow runs") ||
			    !(r.slow_bad > 0.3 && r.slow_good < 0.1))
				fail_msg("seed %d, %d agents: verdict %d (%d at %.4f, slow %.2f / %.2f) after %ld runs: %s",
					 (int)seed, k, r.verdict, r.culprit, r.confidence, r.slow_good, r.slow_bad, r.runs, why);
			print_message("seed %d, %d agents: %ld runs: %s\n", (int)seed, k, r.runs, why);
		}
}

/*
 * t0024's job: a linear history of 24, two agents, the options bisectd
 * gives a job of min_effect 3% (confidence 0.99), runs from value(ctx),
 * at most 3,000 rounds; its why into why[256].
 */
static struct bisect_result t0024_job(run_value value, void *ctx, char *why)
{
	struct dag *d = linear(24);
	struct bisect_opts o;
	struct bisect_query q[BISECT_MAX_QUERIES(2)];
	struct bisect *b;
	int nq, rounds = 3000;

	bisect_job_opts(&o, 0.99, 0.01, 0.03, 0, 0, 1, 5);
	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
	while ((nq = bisect_next(q, b, 2, NULL)) > 0 && --rounds > 0)
		feed_agents(b, q, nq, 2, value, ctx);
	return result_freeing(b, d, why);
}

/*
 * t0024's job in the simulator: a linear history of 24, the culprit the
 * 15th, 1000 ops/s at a CV of 2% and from the culprit on half the runs
 * 40% slower, two agents, min_effect 3%. The mode held until the bad
 * end's fast runs measured 1.6-2.6% above the good end's, by chance, at
 * p < 0.01 (a steady change, bisect_rate_mode()); the job left the mode, and
 * on 60 runs an end bisect_change_set_aside() ended it undecided: "the bad end
 * has 32 of 60 runs slow, the good end 0 of 60 ... their shares do not
 * tell it from the lab's". Of 4,000 seeds, these five did (t0024 once
 * in `make check`, where the report then had no shares). A steady
 * change is now a shift shown beyond half of min_effect: each names
 * the culprit (3,938 of 4,000 named, none another commit; 3,931 before).
 */
static void test_small_steady_shift_keeps_the_slow_runs_mode(void **state)
{
	static const uint64_t seeds[] = { 153, 1349, 1687, 2021, 2611 };

	(void)state;
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		struct rng rng;
		struct intermittent x = { 14, 0.02, 0.6, &rng };
		struct bisect_result r;
		char why[256];

		rng_seed(&rng, seeds[i]);
		r = t0024_job(intermittent_value, &x, why);
		if (r.verdict != VERDICT_CULPRIT || r.culprit != 14 || !(r.slow_bad > 0.25 && r.slow_good < 0.1))
			fail_msg("seed %d: verdict %d (%d at %.4f, slow %.2f / %.2f) after %ld runs: %s", (int)seeds[i],
				 r.verdict, r.culprit, r.confidence, r.slow_good, r.slow_bad, r.runs, why);
	}
}

/*
 * Beside the slow half, the culprit's other runs 2.5% faster at a CV of
 * 1% (min_effect 3%): a steady change shown beyond half of min_effect,
 * so the job keeps the model of two levels, and on the runs it keeps the
 * ends are shown equal within min_effect. Such a job ends undecided, "the
 * change is in the slow runs, and their shares do not tell it from the
 * lab's" (16 of these 40 seeds; the rest name the culprit on the share),
 * and its result now carries the ends' shares of slow runs, which the
 * report prints (there were none: t0024's report in `make check`). None
 * may name another commit.
 */
struct steady_up {
	struct rng *rng;
};

static double steady_up_value(void *arg, int c, int agent, int kind)
{
	struct steady_up *x = arg;
	double v = 1000 * (1 + 0.01 * rng_normal(x->rng));

	(void)agent;
	(void)kind;
	if (c < 14)
		return v;
	return rng_uniform(x->rng) < 0.5 ? 0.6 * v : 1.025 * v;
}

static void test_change_set_aside_reports_the_ends_shares(void **state)
{
	int aside = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct rng rng;
		struct steady_up x = { &rng };
		struct bisect_result r;
		char why[256];

		rng_seed(&rng, seed);
		r = t0024_job(steady_up_value, &x, why);
		if (r.verdict == VERDICT_CULPRIT && r.culprit != 14)
			fail_msg("seed %d: named %d at %.4f: %s", (int)seed, r.culprit, r.confidence, why);
		if (!strstr(why, "do not tell it from the lab's"))
			continue;
		aside++;
		if (r.verdict != VERDICT_UNDECIDED || !(r.slow_bad > 0.3 && r.slow_bad < 0.7 && r.slow_good < 0.05))
			fail_msg("seed %d: verdict %d, slow runs %.2f of the bad end and %.2f of the good: %s", (int)seed,
				 r.verdict, r.slow_bad, r.slow_good, why);
	}
	print_message("%d of 40 ended undecided on the slow runs set aside\n", aside);
	assert_true(aside >= 1);
}

/*
 * A steady 7% change where the bad commits are noisier than the good (a
 * CV of 4% against 1%), and every fifth good commit too: the bad end's
 * runs spread past the good end's far fence, some of them, but in one
 * wide mode, not two. Read as a change in the slow runs (bisect_rate_mode()
 * without its gap rule), a good commit noisier than its parent passed
 * the sign test (the percommit model in bench-bisect named a good commit
 * at 0.9977 so); the gap between the modes and the culprit's slow runs
 * in the slow band now keep such a job on the model of two levels. None
 * may name another commit or read the change as in the slow runs.
 */
struct noisier {
	int culprit;
	struct rng *rng;
};

static double noisier_value(void *arg, int c, int agent, int kind)
{
	struct noisier *x = arg;
	double cv = c >= x->culprit || c % 5 == 3 ? 0.04 : 0.01;

	(void)agent;
	(void)kind;
	return (c >= x->culprit ? 930 : 1000) * (1 + cv * rng_normal(x->rng));
}

static void test_noisier_commits_are_not_a_change_in_slow_runs(void **state)
{
	int named = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct dag *d = linear(64);
		struct bisect_opts o = BISECT_OPTS_INIT;
		struct bisect_query q[BISECT_MAX_QUERIES(2)];
		struct noisier x = { 20 + (int)(seed % 30), NULL };
		struct bisect *b;
		struct bisect_result r;
		struct rng rng;
		char why[256];
		int nq, rounds = 400, k = 1 + (int)(seed % 2);

		x.rng = &rng;
		rng_seed(&rng, seed);
		o.build_cost = o.run_cost = 1;
		assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, &o), 0);
		while ((nq = bisect_next(q, b, k, NULL)) > 0 && --rounds > 0)
			feed_agents(b, q, nq, k, noisier_value, &x);
		r = result_freeing(b, d, why);
		if ((r.verdict == VERDICT_CULPRIT && r.culprit != x.culprit) || strstr(why, "slow runs") || r.slow_bad > 0)
			fail_msg("seed %d: verdict %d, %d at %.4f (the culprit %d), %ld runs: %s", (int)seed, r.verdict,
				 r.culprit, r.confidence, x.culprit, r.runs, why);
		named += r.verdict == VERDICT_CULPRIT;
	}
	print_message("%d of 40 named the culprit\n", named);
	assert_true(named >= 30);
}

/*
 * Every run the confirmation asks of the culprit's parent reports three
 * times its speed (a workload that misreads its output): each pair then
 * has one run far above both groups and is left out, and so is that run
 * from the posterior, where the search's runs keep the culprit at the
 * top. The confirmation counted only the pairs it kept, so it asked for
 * more for ever; the pairs left out now count against a bound of their
 * own, four times its last look (here 48 pairs, 12 rounds of two chains
 * of two), and the job ends undecided there, never with a culprit.
 * (Without the bound it confirmed for 39 rounds, until sigma had grown
 * enough to keep five misread pairs, and named the commit on them.)
 */
#define CONFIRM_ROUNDS_MOST 13
static void test_confirmation_ends_when_its_pairs_are_left_out(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct hogctx h = { NULL, 19, -1, 1, 0.05, 0, 0, 1, 0, NULL, 0 };
		int rounds, confirming;
		char why[256];
		struct bisect_result r = hog_job(&h, seed, 400, &rounds, &confirming, why);

		if (confirming > CONFIRM_ROUNDS_MOST || r.verdict == VERDICT_CULPRIT)
			fail_msg("seed %d: %d rounds in a row confirming, verdict %d, culprit %d, %ld runs: %s", (int)seed,
				 confirming, r.verdict, r.culprit, r.runs, r.why);
		print_message("seed %d: %d rounds in a row confirming: %s\n", (int)seed, confirming, r.why);
	}
}

/*
 * Agent 0's core shared with a hog for good: its runs at 55% of agent
 * 1's, a 30% culprit. The confirmation's pairs are judged by their runs
 * with each agent's level out (ax()) against the groups' means; the
 * means kept the levels in, so they lay between the agents' levels, and
 * every pair of this job was left out as lying far from both groups:
 * the confirmation asked for pairs for 388 rounds and kept none.
 */
static void test_pairs_judged_with_the_agents_levels_out(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct hogctx h = { NULL, 19, -1, 0, 0.30, 0, 0, 0.55, 0, NULL, 0 };
		int rounds, confirming;
		char why[256];
		struct bisect_result r = hog_job(&h, seed, 400, &rounds, &confirming, why);

		if (r.verdict != VERDICT_CULPRIT || r.culprit != 19 || confirming > 4)
			fail_msg("seed %d: verdict %d, culprit %d, %d rounds in a row confirming: %s", (int)seed, r.verdict,
				 r.culprit, confirming, r.why);
	}
}

/* One run as the coordinator's store keeps it. */
struct logged {
	int commit, agent, kind;
	long task;
	double value;
};

/* Steps x and y alike and checks they decide the same; their queries into q, how many returned. */
static int expect_same_step(struct bisect *x, struct bisect *y, int k, struct bisect_query *q)
{
	struct bisect_query qy[BISECT_MAX_QUERIES(4)];
	struct bisect_result rx, ry;
	int nx, ny;

	memset(q, 0, sizeof(qy));
	memset(qy, 0, sizeof(qy));
	nx = bisect_next(q, x, k, NULL);
	ny = bisect_next(qy, y, k, NULL);
	assert_int_equal(nx, ny);
	assert_same_queries(q, qy, nx);
	bisect_result(&rx, x);
	bisect_result(&ry, y);
	assert_int_equal(rx.state, ry.state);
	assert_int_equal(rx.verdict, ry.verdict);
	assert_int_equal(rx.culprit, ry.culprit);
	assert_int_equal(rx.nr_set, ry.nr_set);
	assert_memory_equal(rx.set, ry.set, (size_t)rx.nr_set * sizeof(int));
	assert_true(rx.confidence == ry.confidence && rx.effect == ry.effect && rx.task_cv == ry.task_cv);
	assert_true(rx.runs == ry.runs && rx.budget_runs == ry.budget_runs && rx.more_runs == ry.more_runs);
	assert_string_equal(rx.why, ry.why);
	for (int i = 0; i < 13; i++)
		assert_true(bisect_posterior(x, i) == bisect_posterior(y, i));
	return nx;
}

static struct bisect *rebuilt(const struct dag *d, const struct bisect_opts *o, const struct logged *log, int n,
			      int reproduced)
{
	struct bisect *b;

	assert_int_equal(bisect_new(&b, d->n, d->par, d->npar, o), 0);
	for (int i = 0; i < n; i++)
		bisect_add_run(b, log[i].commit, log[i].value, log[i].task, log[i].agent, log[i].kind);
	bisect_mark_skipped(b, 3);
	if (reproduced)
		bisect_assume_reproduced(b);
	return b;
}

static struct bisect *copied(const struct bisect *kept, int reproduced)
{
	struct bisect *b = bisect_clone(kept);

	bisect_mark_skipped(b, 3);
	if (reproduced)
		bisect_assume_reproduced(b);
	return b;
}

/*
 * The coordinator keeps a job's engine with its runs added and steps a
 * copy (bisect_clone()): at every step the copy decides, bit for bit,
 * what an engine rebuilt from all the runs decides, and stepping a copy
 * leaves the kept engine as it was (a second copy steps the same again).
 */
static void test_clone_steps_like_a_rebuild(void **state)
{
	struct dag *d = merged();
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[BISECT_MAX_QUERIES(4)];
	struct logged *log = xcalloc(20000, sizeof(*log));
	struct bisect *kept, *x, *y;
	struct bisect_result r;
	struct rng rng;
	int nlog = 0, rounds = 0, nq, added = 0, reproduced = 0;
	long task = 1;

	(void)state;
	rng_seed(&rng, 7);
	o.build_cost = o.run_cost = 1;
	assert_int_equal(bisect_new(&kept, d->n, d->par, d->npar, &o), 0);
	do {
		for (; added < nlog; added++)
			bisect_add_run(kept, log[added].commit, log[added].value, log[added].task, log[added].agent,
				       log[added].kind);
		x = rebuilt(d, &o, log, nlog, reproduced);
		y = copied(kept, reproduced);
		expect_same_step(x, y, 3, q);
		bisect_free(x);
		bisect_free(y);
		x = rebuilt(d, &o, log, nlog, reproduced);
		y = copied(kept, reproduced);
		nq = expect_same_step(x, y, 3, q);
		bisect_result(&r, x);
		reproduced |= r.state != BISECT_ENDS;
		bisect_free(x);
		bisect_free(y);
		/* The agents measure what was asked: a 15% culprit at commit 7, on two agents. */
		for (int i = 0; i < nq; i++, task++)
			for (int j = 0; j < q[i].runs && nlog < 20000; j++) {
				double mu = is_anc(d, 7, q[i].commit) ? 850 : 1000;

				log[nlog++] = (struct logged){ q[i].commit, i % 2, q[i].confirm, task,
							       mu * (1 + 0.04 * rng_normal(&rng)) };
			}
	} while (nq > 0 && ++rounds < 300);
	assert_true(rounds > 3);
	assert_int_equal(r.state, BISECT_DONE);
	bisect_free(kept);
	free(log);
	dag_free(d);
}

/*
 * Pairs noisier than the model's prior are read at their own variance:
 * the four pairs of two equal commits that passed the first look on the
 * recorded idle trace (log differences 0.026, 0.154, 0.158 and 0.102, sd
 * 6.3%, where the model's one-run task variance was 0.0285^2, a pair's sd
 * 4.0%) pooled to p = 0.0011 and passed; at their own variance p is above
 * the look's 0.003. The same mean with the spread the model expects
 * passes, and the prior still widens pairs tighter than it.
 */
static void test_pairs_noisier_than_the_model(void **state)
{
	double noisy[4] = { 0.026, 0.154, 0.158, 0.102 }, tight[4] = { 0.10, 0.12, 0.11, 0.11 };
	double calm[4] = { 0.03, 0.03, 0.03, 0.03 }, p;
	double v = 0.0285 * 0.0285;

	(void)state;
	assert_false(bisect_pairs_pass(&p, noisy, 4, 12, v));
	assert_true(p > 0.003 && p < 0.01);
	assert_true(bisect_pairs_pass(&p, tight, 4, 12, v));
	/* Four identical pairs 3% apart: their own variance is 0, the prior's 0.04^2 keeps them from passing. */
	assert_false(bisect_pairs_pass(&p, calm, 4, 12, v));
}

/*
 * The confirmation's sequential test on its own (bisect_pairs_pass()),
 * on 20,000 seeded sequences of pair differences whose variance is what
 * the model says (2 unit1_var = 1): two equal commits pass at most 0.025
 * of the time over all looks up to 24 pairs (the boundary is sized for
 * 0.02), and at the effect a 7% change has at 4% (1.24 sd of a
 * difference, the last look at 18 pairs) a culprit passes in 0.99 of the
 * sequences or more. Here: 0.016 and 0.996, after 8.9 pairs on average.
 * A look at 0.01 in place of 0.003 passes equal commits 0.033 of the time
 * and fails the first.
 */
static void test_pairs_test_error_and_power(void **state)
{
	struct rng rng;
	double d[24], p;
	int nul = 0, alt = 0, T = 20000;
	long pairs = 0;

	(void)state;
	rng_seed(&rng, 77);
	for (int t = 0; t < T; t++) {
		for (int i = 0; i < 24; i++)
			d[i] = rng_normal(&rng);
		nul += bisect_pairs_pass(&p, d, 24, 24, 0.5);
		for (int i = 0; i < 18; i++)
			d[i] = 1.237 + rng_normal(&rng);
		alt += bisect_pairs_pass(&p, d, 18, 18, 0.5);
		for (int n = 4; n <= 18; n += 2)
			if (bisect_pairs_pass(&p, d, n, 18, 0.5) || n == 18) {
				pairs += n;
				break;
			}
	}
	if (nul > 0.025 * T || nul < 0.002 * T)
		fail_msg("equal commits passed %d of %d times", nul, T);
	if (alt < 0.99 * T)
		fail_msg("a culprit at 1.24 sd passed %d of %d times", alt, T);
	/* It stops at the first look that passes: fewer pairs on average than the 18 it may take. */
	assert_true((double)pairs / T < 12);
	/* Fewer than four pairs are no test; a mean at or below 0 never passes. */
	for (int i = 0; i < 24; i++)
		d[i] = 5;
	assert_false(bisect_pairs_pass(&p, d, 3, 24, 0.5));
	for (int i = 0; i < 24; i++)
		d[i] = -0.1 * (i % 3);
	assert_false(bisect_pairs_pass(&p, d, 24, 24, 0.5));
}

/*
 * Two equal commits, each 24% slower in half its runs (a change that
 * comes and goes, on both sides of the pair) at a CV of 4%: the pairs'
 * differences are a mixture whose spread is seven times the model's.
 * Read at their own variance with the prior's five degrees of freedom
 * added as if it had described them, equal commits passed 561 of 20,000
 * sequences (0.028); with the prior's share cut to what it knows, 392
 * (0.020).
 */
static void test_pairs_of_two_intermittent_commits(void **state)
{
	struct rng rng;
	double d[12], p;
	int nul = 0, T = 20000;

	(void)state;
	rng_seed(&rng, 78);
	for (int t = 0; t < T; t++) {
		for (int i = 0; i < 12; i++) {
			double a = 0.04 * rng_normal(&rng), c = 0.04 * rng_normal(&rng);

			a += rng_uniform(&rng) < 0.5 ? log(0.76) : 0;
			c += rng_uniform(&rng) < 0.5 ? log(0.76) : 0;
			d[i] = a - c;
		}
		nul += bisect_pairs_pass(&p, d, 12, 12, 0.04 * 0.04);
	}
	if (nul > 0.025 * T)
		fail_msg("two equal intermittent commits passed %d of %d times", nul, T);
}

/* Every sign assignment of d[0..n), counted one by one: bisect_pairs_flip_p() by brute force. */
static double flip_p_brute(const double *d, int n)
{
	double t = 0;
	long ge = 0;

	for (int i = 0; i < n; i++)
		t += d[i];
	for (long m = 0; m < 1L << n; m++) {
		double s = 0;

		for (int i = 0; i < n; i++)
			s += (m >> i & 1 ? -1 : 1) * fabs(d[i]);
		ge += s >= t - 1e-9 * (fabs(t) + 1e-12);
	}
	return (double)ge / (double)(1L << n);
}

/*
 * The sign-flip test: its p is the share of sign assignments at least as
 * far up as the pairs, exactly (a brute-force count), never below 2^-n
 * (four pairs all one way are 1/16, however far), and it holds its error
 * for two equal commits whatever their spread: the 12 pairs of two
 * commits each 24% slower in half their runs at a CV of 1% (levels 27
 * sigmas apart) pass a 0.01 boundary at most 1% of the time, where the t
 * test alone passes them more often.
 */
static void test_pairs_flip_p(void **state)
{
	static const double four[] = { 0.3, 0.31, 0.29, 0.3 }, three[] = { 3, 1, 1 }, two[] = { 1, -1 };
	struct rng rng;
	double d[24];
	int flip = 0, t = 0, T = 20000;

	(void)state;
	assert_true(fabs(bisect_pairs_flip_p(four, 4) - 1.0 / 16) < 1e-12);
	assert_true(fabs(bisect_pairs_flip_p(three, 3) - 1.0 / 8) < 1e-12);
	assert_true(fabs(bisect_pairs_flip_p(two, 2) - 0.75) < 1e-12);
	assert_true(bisect_pairs_flip_p(d, 0) == 1);
	rng_seed(&rng, 5);
	for (int n = 1; n <= 16; n++)
		for (int k = 0; k < 4; k++) {
			for (int i = 0; i < n; i++)
				d[i] = k == 3 ? (i % 3) - 0.5 : rng_normal(&rng) + 0.3 * k;
			if (fabs(bisect_pairs_flip_p(d, n) - flip_p_brute(d, n)) > 1e-12)
				fail_msg("%d pairs, set %d: %.6f where the count is %.6f", n, k,
					 bisect_pairs_flip_p(d, n), flip_p_brute(d, n));
		}
	for (int i = 0; i < 24; i++)
		d[i] = 0.01;
	assert_true(fabs(bisect_pairs_flip_p(d, 24) - 1.0 / (1 << 24)) < 1e-15);
	for (int s = 0; s < T; s++) {
		double p;

		for (int i = 0; i < 12; i++) {
			double a = 0.01 * rng_normal(&rng), c = 0.01 * rng_normal(&rng);

			a += rng_uniform(&rng) < 0.5 ? log(0.76) : 0;
			c += rng_uniform(&rng) < 0.5 ? log(0.76) : 0;
			d[i] = a - c;
		}
		flip += bisect_pairs_flip_p(d, 12) < 0.01;
		t += bisect_pairs_pass(&p, d, 12, 12, 0.01 * 0.01) && p < 0.01;
	}
	print_message("two equal intermittent commits, 12 pairs below 0.01: sign-flip %d, t test %d of %d\n", flip,
		      t, T);
	if (flip > 0.01 * T)
		fail_msg("the sign-flip test passed two equal commits %d of %d times", flip, T);
}

/*
 * A job kept from the local lab (tests/fixtures/jobs/, replay-job
 * --export): its engine made as bisectd makes it, and its runs in the
 * order they were taken. *runs_out: the runs; each is "run IDX VALUE TASK
 * AGENT KIND" in the file and comes back as five numbers a run.
 */
struct lab_job {
	struct bisect *b;
	double *runs;
	int nr, n, **par, *npar;
};

static void lab_job_load(struct lab_job *j, const char *name)
{
	const char *dir = getenv("FIXTURES_DIR") ? getenv("FIXTURES_DIR") : "tests/fixtures";
	char path[512], line[4096];
	struct bisect_opts o;
	double conf = 0, alpha = 0, min_effect = 0, build = -1, run = -1;
	long long budget_runs = 0, budget_builds = 0, runs = 0;
	int higher = 1, cap = 0, skipped[64], nsk = 0, end_runs = 0, ends_max = 0;
	FILE *f;

	memset(j, 0, sizeof(*j));
	snprintf(path, sizeof(path), "%s/jobs/%s", dir, name);
	if (!(f = fopen(path, "r")))
		fail_msg("%s: cannot open (run from the top of the tree or set FIXTURES_DIR)", path);
	while (fgets(line, sizeof(line), f)) {
		int idx, off, p;
		double v;
		long long task, agent;
		int kind;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "job confidence %lf alpha %lf min_effect %lf budget_runs %lld budget_builds %lld "
				 "higher %d runs %lld", &conf, &alpha, &min_effect, &budget_runs, &budget_builds, &higher,
			   &runs) == 7)
			continue;
		if (sscanf(line, "job end_runs %d", &end_runs) == 1)
			continue;
		if (sscanf(line, "job ends_max %d", &ends_max) == 1)
			continue;
		if (sscanf(line, "costs %lf %lf", &build, &run) == 2)
			continue;
		if (sscanf(line, "skipped %d", &idx) == 1) {
			assert_true(nsk < 64);
			skipped[nsk++] = idx;
			continue;
		}
		if (sscanf(line, "commit %d%n", &idx, &off) == 1) {
			assert_int_equal(idx, j->n);
			j->n++;
			j->par = realloc(j->par, (size_t)j->n * sizeof(*j->par));
			j->npar = realloc(j->npar, (size_t)j->n * sizeof(*j->npar));
			j->par[idx] = NULL;
			j->npar[idx] = 0;
			for (char *s = line + off; sscanf(s, "%d%n", &p, &off) == 1; s += off) {
				j->par[idx] = realloc(j->par[idx], (size_t)(j->npar[idx] + 1) * sizeof(int));
				j->par[idx][j->npar[idx]++] = p;
			}
			continue;
		}
		if (sscanf(line, "run %d %lf %lld %lld %d", &idx, &v, &task, &agent, &kind) == 5) {
			if (j->nr == cap) {
				cap = cap ? 2 * cap : 256;
				j->runs = realloc(j->runs, (size_t)cap * 5 * sizeof(double));
			}
			j->runs[5 * j->nr + 0] = idx;
			j->runs[5 * j->nr + 1] = v;
			j->runs[5 * j->nr + 2] = (double)task;
			j->runs[5 * j->nr + 3] = (double)agent;
			j->runs[5 * j->nr + 4] = kind;
			j->nr++;
			continue;
		}
		fail_msg("%s: cannot read '%s'", path, line);
	}
	fclose(f);
	assert_true(conf > 0 && j->n >= 2 && j->nr > 0);
	bisect_job_opts(&o, conf, alpha, min_effect, (long)budget_runs, (long)budget_builds, higher, (int)runs);
	o.equal_runs = end_runs;
	if (ends_max > o.end_runs_max)
		o.end_runs_max = ends_max;
	assert_int_equal(bisect_new(&j->b, j->n, j->par, j->npar, &o), 0);
	for (int i = 0; i < nsk; i++)
		bisect_mark_skipped(j->b, skipped[i]);
	if (build >= 0)
		bisect_set_costs(j->b, build, run);
}

static void lab_job_free(struct lab_job *j)
{
	bisect_free(j->b);
	for (int i = 0; i < j->n; i++)
		free(j->par[i]);
	free(j->par);
	free(j->npar);
	free(j->runs);
}

/*
 * Replays a kept job's runs one at a time, the engine stepped on a copy
 * after each while it is at the ends; returns the run at which it ended
 * (0: not within the runs), its result in *res, its why copied into
 * why[320]. Fails if it leaves the ends.
 */
static int lab_job_at_the_ends(struct lab_job *j, struct bisect_result *res, char *why)
{
	for (int i = 0; i < j->nr; i++) {
		const double *r = j->runs + 5 * i;
		struct bisect *c;
		struct bisect_query q[BISECT_MAX_QUERIES(2)];

		bisect_add_stored_run(j->b, (int)r[0], r[1], (long long)r[2], (long long)r[3], (long long)r[4]);
		c = bisect_clone(j->b);
		bisect_next(q, c, 2, NULL);
		bisect_result(res, c);
		snprintf(why, 320, "%s", res->why ? res->why : "");
		res->why = why;
		res->set = NULL;
		bisect_free(c);
		if (res->state == BISECT_DONE)
			return i + 1;
		if (res->state != BISECT_ENDS)
			fail_msg("run %d: the ends were taken to differ: %s", i + 1, res->why);
	}
	return 0;
}

/*
 * A no-change job of bench-lab (none-slow-at-one-end.runs): at its 17th
 * run the bad end had two slow runs of eight, kept as a lab in two
 * levels, and the good end one of nine, set aside, so the ends "differed"
 * by -35% and the job ended undecided on the search's kept runs. The
 * lab's levels are both ends': kept at both, the ends are not taken to
 * differ on the job's 22 runs (11bb028's engine searched from the 17th).
 */
static void test_lab_ends_keep_the_labs_levels_alike(void **state)
{
	struct lab_job j;
	struct bisect_result res;
	char why[320];
	int at;

	(void)state;
	lab_job_load(&j, "none-slow-at-one-end.runs");
	at = lab_job_at_the_ends(&j, &res, why);
	if (at)
		fail_msg("run %d: ended %d: %s", at, res.verdict, res.why);
	lab_job_free(&j);
}

/*
 * A no-change job of bench-lab (none-bursts-at-both-ends.runs) with about
 * half of each end's runs halved by the hog: of the ends' neighbouring
 * pairs, 0.35% apart, two lay beyond the pairs' fence on each side. A
 * burst at either end alike leaves a worse pair and its answer out: the
 * job ends not-reproduced at the ends (at its 28th run; 11bb028's engine,
 * which read those pairs at the fence, ended undecided after 62).
 */
static void test_ends_pairs_bursts_at_either_end(void **state)
{
	struct lab_job j;
	struct bisect_result res;
	char why[320];
	int at;

	(void)state;
	lab_job_load(&j, "none-bursts-at-both-ends.runs");
	at = lab_job_at_the_ends(&j, &res, why);
	if (!at || res.verdict != VERDICT_NOT_REPRODUCED)
		fail_msg("after %d runs: verdict %d: %s", at ? at : j.nr, res.verdict, res.why);
	print_message("not reproduced at run %d of %d: %s\n", at, j.nr, res.why);
	lab_job_free(&j);
}

/*
 * A no-change job of bench-lab on f7622df (--cases none --seed 30, its
 * 18th: loadgen's hog on one agent's core, 1-8 s on and off) whose ends
 * the load made differ by -24% on their first 20 runs. It searched with
 * nothing to find, its best commit at 0.1-0.5 for 600 decisions, under a
 * derived budget of 2,623 runs, until the bench cancelled it at 729. Its
 * runs replayed as replay-job does (the engine stepped on a copy every
 * 20 runs, past the ends once it has been): the engine must never name a
 * commit, and must end undecided by the 300th (f7622df's engine never
 * ended; 99d4fa3's at the 240th on the ends' kept runs, "the change is in
 * the slow runs set aside"; since the lab's levels are kept at both ends
 * alike its ends are never taken to differ, and it ends at the 260th,
 * when the replay has given each end 30 runs, neither shown equal nor
 * different).
 */
static void test_lab_no_change_job_ends_undecided(void **state)
{
	struct lab_job j;
	int past_ends = 0, ended = 0;

	(void)state;
	lab_job_load(&j, "none-runaway.runs");
	for (int i = 0; i < j.nr && !ended; i++) {
		const double *r = j.runs + 5 * i;

		bisect_add_stored_run(j.b, (int)r[0], r[1], (long long)r[2], (long long)r[3], (long long)r[4]);
		if ((i + 1) % 20 == 0 || i + 1 == j.nr) {
			struct bisect *c = bisect_clone(j.b);
			struct bisect_query q[BISECT_MAX_QUERIES(2)];
			struct bisect_result res;

			bisect_next(q, c, 2, NULL);
			bisect_result(&res, c);
			if (res.verdict == VERDICT_CULPRIT || res.verdict == VERDICT_RANGE)
				fail_msg("run %d: named commit %d at %.4f: %s", i + 1, res.culprit, res.confidence,
					 res.why);
			if (res.state == BISECT_DONE) {
				if (res.verdict != VERDICT_UNDECIDED || i + 1 > 300)
					fail_msg("run %d: verdict %d: %s", i + 1, res.verdict, res.why);
				ended = 1;
			}
			if (res.state != BISECT_ENDS && !past_ends) {
				past_ends = 1;
				bisect_assume_reproduced(j.b);
			}
			bisect_free(c);
		}
	}
	if (!ended)
		fail_msg("all %d runs replayed and the job has not ended", j.nr);
	lab_job_free(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs_test_error_and_power),
		cmocka_unit_test(test_pairs_noisier_than_the_model),
		cmocka_unit_test(test_pairs_of_two_intermittent_commits),
		cmocka_unit_test(test_pairs_flip_p),
		cmocka_unit_test(test_first_and_last_candidate),
		cmocka_unit_test(test_culprit_inside_merged_branch),
		cmocka_unit_test(test_merge_confirmed_against_each_parent),
		cmocka_unit_test(test_skipped_neighbours_give_a_range),
		cmocka_unit_test(test_ends_that_do_not_differ),
		cmocka_unit_test(test_outlier_run_does_not_flip),
		cmocka_unit_test(test_slow_run_in_the_confirmation),
		cmocka_unit_test(test_slow_parent_run_at_a_large_effect),
		cmocka_unit_test(test_one_good_looking_run_of_the_culprit),
		cmocka_unit_test(test_k_way_queries),
		cmocka_unit_test(test_four_agents_take_fewer_rounds),
		cmocka_unit_test(test_early_pair_is_not_the_confirmation),
		cmocka_unit_test(test_ends_refreshed_with_four_agents),
		cmocka_unit_test(test_confirmation_rejects_equal_commits),
		cmocka_unit_test(test_confirmation_in_two_chains),
		cmocka_unit_test(test_two_chains_round_is_no_look),
		cmocka_unit_test(test_lab_with_a_rhythm_never_names_a_good_commit),
		cmocka_unit_test(test_recorded_modes_job),
		cmocka_unit_test(test_recorded_overlap_job),
		cmocka_unit_test(test_recorded_round_job),
		cmocka_unit_test(test_bursty_lab_right_or_undecided),
		cmocka_unit_test(test_bursts_cancel_in_the_ends_pairs),
		cmocka_unit_test(test_derived_budget_ends_undecided),
		cmocka_unit_test(test_budget_spent_on_the_deciding_runs),
		cmocka_unit_test(test_agent_levels_for_the_report),
		cmocka_unit_test(test_agent_level_not_known),
		cmocka_unit_test(test_alike),
		cmocka_unit_test(test_ends_why_before_they_are_compared),
		cmocka_unit_test(test_agent_level_from_shared_commits),
		cmocka_unit_test(test_agent_at_two_levels_at_the_ends),
		cmocka_unit_test(test_ends_pairs_of_two_interleaved_agents),
		cmocka_unit_test(test_search_does_not_pile_runs_into_one_unit),
		cmocka_unit_test(test_hog_switched_between_the_agents),
		cmocka_unit_test(test_hog_no_change_not_reproduced),
		cmocka_unit_test(test_commit_half_hogged_still_counts),
		cmocka_unit_test(test_budget_counts_runs_set_aside),
		cmocka_unit_test(test_intermittent_regression_not_ruled_out),
		cmocka_unit_test(test_not_reproduced_says_what_it_cannot_rule_out),
		cmocka_unit_test(test_ends_shown_equal_only_on_enough_runs),
		cmocka_unit_test(test_end_runs_asked_before_not_reproduced),
		cmocka_unit_test(test_intermittent_regression_jobs),
		cmocka_unit_test(test_intermittent_culprit_not_misnamed),
		cmocka_unit_test(test_intermittent_overlapping_modes),
		cmocka_unit_test(test_change_in_slow_runs_found_by_their_share),
		cmocka_unit_test(test_small_steady_shift_keeps_the_slow_runs_mode),
		cmocka_unit_test(test_change_set_aside_reports_the_ends_shares),
		cmocka_unit_test(test_noisier_commits_are_not_a_change_in_slow_runs),
		cmocka_unit_test(test_lab_no_change_job_ends_undecided),
		cmocka_unit_test(test_lab_ends_keep_the_labs_levels_alike),
		cmocka_unit_test(test_ends_pairs_bursts_at_either_end),
		cmocka_unit_test(test_confirmation_ends_when_its_pairs_are_left_out),
		cmocka_unit_test(test_pairs_judged_with_the_agents_levels_out),
		cmocka_unit_test(test_clone_steps_like_a_rebuild),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
