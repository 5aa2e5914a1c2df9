/* test_policy: candidate sets and k-way choices on linear and merged DAGs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "policy.h"
#include "stats.h"
#include "util.h"

/* 0 <- 1 <- 2 <- ... <- n-1 */
static struct policy *linear(int n)
{
	int **par = xcalloc((size_t)n, sizeof(int *)), *nr = xcalloc((size_t)n, sizeof(int));
	struct policy *p;

	for (int i = 1; i < n; i++) {
		par[i] = xmalloc(sizeof(int));
		par[i][0] = i - 1;
		nr[i] = 1;
	}
	assert_int_equal(policy_new(&p, n, par, nr), 0);
	for (int i = 0; i < n; i++)
		free(par[i]);
	free(par);
	free(nr);
	return p;
}

/* Bisects a linear history with a perfect oracle; returns steps. */
static int bisect(struct policy *p, int n, int culprit, int k)
{
	enum commit_class *cls = xcalloc((size_t)n, sizeof(*cls));
	unsigned char *in = xcalloc((size_t)n, 1);
	int picks[8], steps = 0;

	cls[0] = CLASS_GOOD;
	cls[n - 1] = CLASS_BAD;
	while (policy_candidates(in, p, cls) > 1) {
		int got = policy_next(picks, p, cls, NULL, k);

		assert_true(got > 0 && got <= k);
		for (int i = 0; i < got; i++)
			cls[picks[i]] = picks[i] >= culprit ? CLASS_BAD : CLASS_GOOD;
		steps++;
		assert_true(steps < 64);
	}
	assert_int_equal(in[culprit], 1);
	free(cls);
	free(in);
	return steps;
}

static void test_linear_every_culprit(void **state)
{
	struct policy *p = linear(42);

	(void)state;
	for (int c = 1; c < 42; c++) {
		assert_true(bisect(p, 42, c, 1) <= 6);  /* ceil(log2(41)) */
		assert_true(bisect(p, 42, c, 2) <= 4);  /* ceil(log3(41)) */
	}
	policy_free(p);
}

/*
 * 0 - 1 - 2 ------- 6(merge) - 7
 *      \           /
 *       3 - 4 - 5
 * A culprit on the side branch (4) is found: the merge and 7 are bad,
 * 2 is good, 3 is good, 5 is bad.
 */
static void test_merge_branch_culprit(void **state)
{
	int p1[] = { 0 }, p2[] = { 1 }, p3[] = { 1 }, p4[] = { 3 }, p5[] = { 4 }, p6[] = { 2, 5 }, p7[] = { 6 };
	int *par[] = { NULL, p1, p2, p3, p4, p5, p6, p7 };
	int nr[] = { 0, 1, 1, 1, 1, 1, 2, 1 };
	enum commit_class cls[8] = { CLASS_GOOD, 0, 0, 0, 0, 0, 0, CLASS_BAD };
	unsigned char in[8];
	struct policy *p;
	int picks[2], steps = 0;

	(void)state;
	assert_int_equal(policy_new(&p, 8, par, nr), 0);
	assert_true(policy_is_ancestor(p, 4, 6));
	assert_false(policy_is_ancestor(p, 2, 5));
	assert_int_equal(policy_candidates(in, p, cls), 7);
	while (policy_candidates(in, p, cls) > 1) {
		int got = policy_next(picks, p, cls, NULL, 1);

		assert_int_equal(got, 1);
		/* bad iff the culprit 4 is an ancestor-or-self */
		cls[picks[0]] = policy_is_ancestor(p, 4, picks[0]) ? CLASS_BAD : CLASS_GOOD;
		assert_true(++steps < 8);
	}
	assert_int_equal(in[4], 1);
	policy_free(p);
}

static void test_skipped_neighbours_leave_a_range(void **state)
{
	struct policy *p = linear(6);
	enum commit_class cls[6] = { CLASS_GOOD, CLASS_GOOD, CLASS_SKIPPED, CLASS_SKIPPED, 0, CLASS_BAD };
	unsigned char in[6];
	int picks[2];

	(void)state;
	cls[4] = CLASS_BAD;
	assert_int_equal(policy_candidates(in, p, cls), 3);
	assert_true(in[2] && in[3] && in[4]);
	assert_int_equal(policy_next(picks, p, cls, NULL, 2), 0);
	policy_free(p);
}

static void test_busy_commits_are_not_chosen(void **state)
{
	struct policy *p = linear(10);
	enum commit_class cls[10] = { CLASS_GOOD };
	unsigned char busy[10] = { 0 };
	int picks[3];

	(void)state;
	cls[9] = CLASS_BAD;
	assert_int_equal(policy_next(picks, p, cls, busy, 1), 1);
	busy[picks[0]] = 1;
	int first = picks[0];
	assert_int_equal(policy_next(picks, p, cls, busy, 3), 3);
	for (int i = 0; i < 3; i++)
		assert_int_not_equal(picks[i], first);
	policy_free(p);
}

static void test_summary_basics(void **state)
{
	double x[] = { 100, 200, 0, 400 };
	struct summary s;

	(void)state;
	stats_summary(&s, x, 4);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.failures, 1);
	assert_true(s.hmean > 171.428 && s.hmean < 171.429);  /* 3 / (1/100 + 1/200 + 1/400) */
	assert_true(s.median == 200 && s.min == 100 && s.max == 400);
}

static void test_mann_whitney_exact(void **state)
{
	double a[] = { 1, 2, 3, 4, 5 }, b[] = { 6, 7, 8, 9, 10 };

	(void)state;
	/* Complete separation with 5 and 5: one arrangement of 252. */
	assert_true(stats_mann_whitney(a, 5, b, 5, ALT_LESS) > 1.0 / 252 - 1e-12);
	assert_true(stats_mann_whitney(a, 5, b, 5, ALT_LESS) < 1.0 / 252 + 1e-12);
	assert_true(stats_mann_whitney(a, 5, b, 5, ALT_GREATER) > 0.999);
	assert_true(stats_mann_whitney(a, 5, b, 5, ALT_TWO_SIDED) < 2.0 / 252 + 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linear_every_culprit),
		cmocka_unit_test(test_merge_branch_culprit),
		cmocka_unit_test(test_skipped_neighbours_leave_a_range),
		cmocka_unit_test(test_busy_commits_are_not_chosen),
		cmocka_unit_test(test_summary_basics),
		cmocka_unit_test(test_mann_whitney_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
