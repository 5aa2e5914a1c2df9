/*
 * test_stats: every summary and test against scipy's values on fixed data
 * (tests/unit/stats_fixtures.h, made by tests/lib/stats-oracle.py), and the
 * bootstrap by its properties (scipy's bootstrap draws other numbers).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rng.h"
#include "stats.h"
#include "util.h"

struct fx_summary {
	const char *name;
	const double *x;
	size_t n_all;
	size_t n, failures;
	double hmean, amean, median, min, max, stddev, cv;
};

struct fx_test {
	const char *a_name;
	const double *a;
	size_t na;
	const char *b_name;
	const double *b;
	size_t nb;
	enum stats_alt alt;
	double stat, df, p;
	int exact;
};

struct fx_cdf {
	double x, df, value;
};

#include "stats_fixtures.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define REL_EXACT 1e-9  /* summaries, statistics */
#define REL_P 1e-6      /* p-values and CDFs */

static const char *alt_name(enum stats_alt alt)
{
	return alt == ALT_LESS ? "less" : alt == ALT_GREATER ? "greater" : "two-sided";
}

/*
 * |got - want| <= rel * |want|, with NaN equal to NaN, and an absolute
 * floor of rel * floor for expected values at or near 0 (a p-value of 0.5
 * is fine to 5e-7; a stddev of 0 is fine to rel * the mean).
 */
static int close_to(double got, double want, double rel, double floor)
{
	if (isnan(want))
		return isnan(got);
	if (isinf(want))
		return got == want;
	return fabs(got - want) <= rel * fmax(fabs(want), floor);
}

static void check(const char *what, const char *name, double got, double want, double rel,
		  double floor)
{
	if (!close_to(got, want, rel, floor))
		fail_msg("%s of %s: got %.17g, scipy says %.17g (rel %.3g)", what, name, got, want,
			 want != 0 ? fabs(got - want) / fabs(want) : fabs(got));
}

static void test_summaries(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_OF(fx_summaries); i++) {
		const struct fx_summary *f = &fx_summaries[i];
		struct summary s;

		stats_summary(&s, f->x, f->n_all);
		assert_int_equal(s.n, f->n);
		assert_int_equal(s.failures, f->failures);
		check("hmean", f->name, s.hmean, f->hmean, REL_EXACT, 0);
		check("amean", f->name, s.amean, f->amean, REL_EXACT, 0);
		check("median", f->name, s.median, f->median, REL_EXACT, 0);
		check("min", f->name, s.min, f->min, REL_EXACT, 0);
		check("max", f->name, s.max, f->max, REL_EXACT, 0);
		/* a spread is only as exact as the mean it is taken from */
		check("stddev", f->name, s.stddev, f->stddev, REL_EXACT, f->amean);
		check("cv", f->name, s.cv, f->cv, REL_EXACT, 1);
	}
}

static void test_summary_identical_runs_have_no_spread(void **state)
{
	double x[] = { 1726716.59, 1726716.59, 1726716.59 };
	struct summary s;

	(void)state;
	stats_summary(&s, x, 3);
	assert_true(s.stddev == 0 && s.cv == 0);
	stats_summary(&s, x, 0);
	assert_true(s.n == 0 && s.failures == 0 && s.hmean == 0);
}

static void check_test(const char *test, const struct fx_test *f, const struct stats_test *r)
{
	char name[160];

	snprintf(name, sizeof(name), "%s(%s, %s, %s)", test, f->a_name, f->b_name, alt_name(f->alt));
	check("statistic", name, r->stat, f->stat, REL_EXACT, 1e-12);
	check("df", name, r->df, f->df, REL_EXACT, 0);
	/* p of 1 or 0.5 need no relative tolerance; a small p does */
	check("p", name, r->p, f->p, REL_P, 0);
	if (r->exact != f->exact)
		fail_msg("%s: exact %d, the oracle's method %d", name, r->exact, f->exact);
}

static void test_mann_whitney(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_OF(fx_mw); i++) {
		const struct fx_test *f = &fx_mw[i];
		struct stats_test r;

		stats_mann_whitney_test(&r, f->a, f->na, f->b, f->nb, f->alt);
		check_test("mannwhitneyu", f, &r);
		assert_true(stats_mann_whitney(f->a, f->na, f->b, f->nb, f->alt) == r.p);
	}
}

static void test_mann_whitney_empty_side(void **state)
{
	double a[] = { 1, 2, 3 }, bad[] = { 0, -1, NAN };

	(void)state;
	assert_true(stats_mann_whitney(a, 3, bad, 3, ALT_LESS) == 1.0);
	assert_true(stats_mann_whitney(bad, 0, a, 3, ALT_TWO_SIDED) == 1.0);
}

/* Exact null distribution at the size cap's edge: P(U <= 0) = 1 / C(m + n, m). */
static void test_mann_whitney_exact_large(void **state)
{
	size_t n = 2000;
	double a[8], *b = xmalloc(n * sizeof(*b)), want = 1;
	struct stats_test r;

	(void)state;
	for (size_t i = 0; i < 8; i++)
		a[i] = 1 + (double)i;
	for (size_t j = 0; j < n; j++)
		b[j] = 100 + (double)j;
	for (size_t i = 1; i <= 8; i++)
		want = want * (double)i / (double)(n + i);
	stats_mann_whitney_test(&r, a, 8, b, n, ALT_LESS);
	assert_int_equal(r.exact, 1);
	check("p", "8 below 2000", r.p, want, REL_P, 0);
	free(b);
}

static void test_ks_2samp(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_OF(fx_ks); i++) {
		const struct fx_test *f = &fx_ks[i];
		struct stats_test r;

		stats_ks_2samp_test(&r, f->a, f->na, f->b, f->nb);
		check_test("ks_2samp", f, &r);
		assert_true(stats_ks_2samp(f->a, f->na, f->b, f->nb) == r.p);
	}
}

static void test_ks_2samp_asymptotic(void **state)
{
	double *a = xmalloc(FX_KS_BIG_NA * sizeof(*a)), *b = xmalloc(FX_KS_BIG_NB * sizeof(*b));
	struct stats_test r;

	(void)state;
	for (size_t i = 0; i < FX_KS_BIG_NA; i++)
		a[i] = 1000.0 + 3.0 * (double)i;
	for (size_t j = 0; j < FX_KS_BIG_NB; j++)
		b[j] = 1600.0 + 2.5 * (double)j;
	stats_ks_2samp_test(&r, a, FX_KS_BIG_NA, b, FX_KS_BIG_NB);
	assert_int_equal(r.exact, 0);
	check("D", "ks big", r.stat, fx_ks_big_d, REL_EXACT, 0);
	check("p", "ks big", r.p, fx_ks_big_p, REL_P, 0);
	free(a);
	free(b);
}

static void test_welch(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_OF(fx_welch); i++) {
		const struct fx_test *f = &fx_welch[i];
		struct stats_test r;

		stats_welch_t_test(&r, f->a, f->na, f->b, f->nb, f->alt);
		check_test("ttest_ind", f, &r);
		assert_true(stats_welch_t(f->a, f->na, f->b, f->nb, f->alt) == r.p);
	}
}

/*
 * The standard error Welch's test reports is t's denominator: a shifted
 * by h gives t + h / se, on the same degrees of freedom (the engine reads
 * a steady change against a null shifted by half of min_effect so). The
 * other tests have none.
 */
static void test_welch_se_reads_a_shifted_null(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_OF(fx_welch); i++) {
		const struct fx_test *f = &fx_welch[i];
		double a[64], h = 0.03;
		struct stats_test r, s;

		assert_true(f->na <= 64);
		for (size_t k = 0; k < f->na; k++)   /* the runs that failed stay failed */
			a[k] = isfinite(f->a[k]) && f->a[k] > 0 ? f->a[k] + h : f->a[k];
		stats_welch_t_test(&r, f->a, f->na, f->b, f->nb, f->alt);
		stats_welch_t_test(&s, a, f->na, f->b, f->nb, f->alt);
		if (isnan(r.stat)) {
			assert_true(isnan(r.se));
			continue;
		}
		assert_true(r.se > 0);
		check("welch se", "shifted t", r.stat + h / r.se, s.stat, 1e-9, 1e-12);
		check("welch se", "shifted df", r.df, s.df, 1e-9, 0);
	}
	{
		static const double x[] = { 1, 2, 3, 4 }, y[] = { 2, 3, 5, 7 };
		struct stats_test r;

		stats_mann_whitney_test(&r, x, 4, y, 4, ALT_TWO_SIDED);
		assert_true(isnan(r.se));
		stats_ks_2samp_test(&r, x, 4, y, 4);
		assert_true(isnan(r.se));
	}
}

static void test_t_cdf(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_OF(fx_tcdf); i++) {
		char name[64];

		snprintf(name, sizeof(name), "t=%g df=%g", fx_tcdf[i].x, fx_tcdf[i].df);
		check("t cdf", name, stats_t_cdf(fx_tcdf[i].x, fx_tcdf[i].df), fx_tcdf[i].value,
		      REL_P, 0);
	}
	assert_true(isnan(stats_t_cdf(1, 0)));
	assert_true(isnan(stats_t_cdf(NAN, 3)));
	check("t cdf", "df=inf", stats_t_cdf(-2, INFINITY), stats_normal_cdf(-2), 1e-15, 0);
}

static void test_normal_cdf(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_OF(fx_ncdf); i++) {
		char name[32];

		snprintf(name, sizeof(name), "z=%g", fx_ncdf[i].x);
		check("normal cdf", name, stats_normal_cdf(fx_ncdf[i].x), fx_ncdf[i].value, REL_P, 0);
	}
}

/* --- bootstrap: properties, not values ------------------------------------- */

static void test_bootstrap_contains_estimate(void **state)
{
	struct summary sa, sb;
	double lo, hi, ratio;

	(void)state;
	stats_summary(&sa, fx_large_a, N_OF(fx_large_a));
	stats_summary(&sb, fx_large_b, N_OF(fx_large_b));
	ratio = sb.hmean / sa.hmean;
	assert_int_equal(stats_bootstrap_ratio(&lo, &hi, FX_DATA(large_a), FX_DATA(large_b), 0, 1), 0);
	assert_true(lo < ratio && ratio < hi);
	/* about 5% up with cv 4% and 7% over 30 and 40 runs: a few percent wide */
	assert_true(hi - lo > 0.01 && hi - lo < 0.1);
	/* failed runs are left out, not resampled */
	assert_int_equal(stats_bootstrap_ratio(&lo, &hi, FX_DATA(failed_a), FX_DATA(failed_b), 0, 1), 0);
	assert_true(isfinite(lo) && isfinite(hi) && lo > 1 && hi < 1.1);
}

static void test_bootstrap_reproducible(void **state)
{
	double lo1, hi1, lo2, hi2, lo3, hi3;

	(void)state;
	assert_int_equal(stats_bootstrap_ratio(&lo1, &hi1, FX_DATA(big_a), FX_DATA(big_b), 0, 42), 0);
	assert_int_equal(stats_bootstrap_ratio(&lo2, &hi2, FX_DATA(big_a), FX_DATA(big_b), 2000, 42), 0);
	assert_true(lo1 == lo2 && hi1 == hi2);  /* default is 2000, same seed: same draws */
	assert_int_equal(stats_bootstrap_ratio(&lo3, &hi3, FX_DATA(big_a), FX_DATA(big_b), 0, 43), 0);
	assert_true(lo1 != lo3 || hi1 != hi3);
	/* another seed moves the ends by Monte Carlo noise only: well under 10% of the width */
	assert_true(fabs(lo1 - lo3) < 0.1 * (hi1 - lo1) && fabs(hi1 - hi3) < 0.1 * (hi1 - lo1));
}

/* Repeats each value k times: same hmean, k times the runs. */
static double *repeat(const double *x, size_t n, size_t k)
{
	double *v = xmalloc(n * k * sizeof(*v));

	for (size_t i = 0; i < n * k; i++)
		v[i] = x[i % n];
	return v;
}

static void test_bootstrap_narrows_with_more_data(void **state)
{
	double *a4 = repeat(fx_big_a, N_OF(fx_big_a), 4), *b4 = repeat(fx_big_b, N_OF(fx_big_b), 4);
	double lo1, hi1, lo4, hi4, ratio;
	struct summary sa, sb;

	(void)state;
	stats_summary(&sa, fx_big_a, N_OF(fx_big_a));
	stats_summary(&sb, fx_big_b, N_OF(fx_big_b));
	ratio = sb.hmean / sa.hmean;
	assert_int_equal(stats_bootstrap_ratio(&lo1, &hi1, FX_DATA(big_a), FX_DATA(big_b), 4000, 7), 0);
	assert_int_equal(stats_bootstrap_ratio(&lo4, &hi4, a4, 4 * N_OF(fx_big_a), b4,
					       4 * N_OF(fx_big_b), 4000, 7), 0);
	assert_true(lo4 < ratio && ratio < hi4);
	/* four times the runs: about half the width */
	assert_true(hi4 - lo4 > 0.35 * (hi1 - lo1) && hi4 - lo4 < 0.65 * (hi1 - lo1));
	free(a4);
	free(b4);
}

static void test_bootstrap_degenerate(void **state)
{
	double lo, hi, pct;

	(void)state;
	assert_int_equal(stats_bootstrap_ratio(&lo, &hi, FX_DATA(small_a), FX_DATA(all_failed), 0, 1),
			 -4 /* ERR_INVALID */);
	assert_true(isnan(lo) && isnan(hi));
	/* identical runs: no spread, the interval is the point */
	assert_int_equal(stats_bootstrap_ratio(&lo, &hi, FX_DATA(same_a), FX_DATA(same_c), 100, 1), 0);
	check("lo", "same", lo, 1842337.77 / 1726716.59, 1e-12, 0);
	check("hi", "same", hi, 1842337.77 / 1726716.59, 1e-12, 0);
	/* in percent */
	assert_int_equal(stats_change_ci(&pct, &lo, &hi, FX_DATA(one_a), FX_DATA(one_b), 50, 1), 0);
	check("pct", "one", pct, (1842337.77 - 1726716.59) / 1726716.59 * 100, 1e-12, 0);
	check("lo", "one", lo, pct, 1e-9, 0);
	check("hi", "one", hi, pct, 1e-9, 0);
	assert_int_equal(stats_change_ci(&pct, &lo, &hi, FX_DATA(all_failed), FX_DATA(one_b), 50, 1), -4);
	assert_true(isnan(pct));
}

/* --- mmtests' harmonic CoV ------------------------------------------------ */

/*
 * Expected values computed apart from the C code, in exact rationals, by
 * mmtests' formula (Stat.pm: calc_stddev "hmean", calc_coeffvar):
 *   from fractions import Fraction as F
 *   v = [F(x) for x in xs]; n = len(v); h = n / sum(1 / x for x in v)
 *   sd = math.sqrt(float(sum((1 / x - 1 / h) ** 2 for x in v) * h ** 4 / n))
 */
static void test_hmean_cv(void **state)
{
	static const double before[] = { 1877, 1875, 1878, 1874, 1882, 1873 };
	static const double noisy[] = { 1.2e6, 1.5e6, 0, 1.1e6, 1.6e6, 1.45e6 };  /* 0: a failed run */
	static const double one[] = { 1234.5 }, same[] = { 7, 7, 7 };

	(void)state;
	check("hstddev", "before", stats_hmean_stddev(before, 6), 2.982872315310476, 1e-12, 0);
	check("hcv", "before", stats_hmean_cv(before, 6), 0.001589597580915081, 1e-12, 0);
	check("hstddev", "noisy", stats_hmean_stddev(noisy, 6), 194729.33741696004, 1e-12, 0);
	check("hcv", "noisy", stats_hmean_cv(noisy, 6), 0.1450245214320824, 1e-12, 0);
	assert_true(stats_hmean_cv(one, 1) == 0);
	assert_true(stats_hmean_cv(same, 3) == 0);
	assert_true(stats_hmean_cv(NULL, 0) == 0);
}

/* --- the fixture is still what the script makes -------------------------- */

static void test_fixture_is_current(void **state)
{
	const char *py = "/usr/bin/python3", *script = "tests/lib/stats-oracle.py";
	const char *fixture = "tests/unit/stats_fixtures.h";
	char cmd[256];
	int rc;

	(void)state;
	if (access(py, X_OK) || access(script, R_OK) || access(fixture, R_OK) ||
	    system("/usr/bin/python3 -c 'import scipy' >/dev/null 2>&1") != 0) {
		print_message("skip: needs /usr/bin/python3 with scipy, run from the top directory\n");
		skip();
	}
	snprintf(cmd, sizeof(cmd), "%s %s --check %s", py, script, fixture);
	rc = system(cmd);
	assert_true(rc != -1 && WIFEXITED(rc));
	if (WEXITSTATUS(rc) == 77) {
		print_message("skip: the fixture was made with another scipy\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(rc), 0);
}

static void expect_close(double a, double b)
{
	assert_true(fabs(a - b) <= 1e-12 * fabs(b) + 1e-300);
}

/* The running summary gives what the whole one gives, whatever the order the runs come in. */
static void test_acc_equals_summary(void **state)
{
	double x[500];
	struct rng r;

	(void)state;
	rng_seed(&r, 12);
	for (int i = 0; i < 500; i++)
		x[i] = i % 37 == 5 ? 0 : i % 53 == 7 ? NAN : 1000 * exp(0.05 * rng_normal(&r));
	for (int order = 0; order < 3; order++) {
		struct stats_acc a = { 0 };
		struct summary whole, run;

		for (int i = 0; i < 500; i++) {
			int k = order == 0 ? i : order == 1 ? 499 - i : (i * 7) % 500;

			stats_acc_add(&a, x[k]);
			if (i % 50 != 49)
				continue;
			/* At every point of the way, against the values so far. */
			{
				double *v = xmalloc(500 * sizeof(double));

				for (int j = 0; j <= i; j++)
					v[j] = x[order == 0 ? j : order == 1 ? 499 - j : (j * 7) % 500];
				stats_summary(&whole, v, (size_t)i + 1);
				free(v);
			}
			stats_acc_summary(&run, &a);
			assert_int_equal(run.n, whole.n);
			assert_int_equal(run.failures, whole.failures);
			expect_close(run.amean, whole.amean);
			expect_close(run.hmean, whole.hmean);
			expect_close(run.stddev, whole.stddev);
			expect_close(run.cv, whole.cv);
			assert_true(run.min == whole.min && run.max == whole.max);
		}
	}
}

/*
 * Three agents' runs of one commit, agents 1 and 2 reading 15% low and
 * 8% high: their accumulators merged, each divided by its level, hold
 * what the runs so divided hold, one by one (stats_summary(),
 * stats_hmean_cv()); a merge of nothing changes nothing.
 */
static void test_acc_merge_scaled(void **state)
{
	static const double level[3] = { 1, 0.85, 1.08 };
	struct stats_acc per[3] = { { 0 } }, all = { 0 }, none = { 0 };
	double v[90];
	struct summary want, got;
	struct rng r;
	size_t n = 0;

	(void)state;
	rng_seed(&r, 21);
	for (int i = 0; i < 90; i++) {
		int a = i % 3;
		double x = i == 40 ? 0 : 1e8 * level[a] * exp(0.03 * rng_normal(&r));

		stats_acc_add(&per[a], x);
		if (x > 0)
			v[n++] = x / level[a];
	}
	for (int a = 0; a < 3; a++)
		stats_acc_merge_scaled(&all, &per[a], level[a]);
	stats_acc_merge_scaled(&all, &none, 2);
	stats_summary(&want, v, n);
	stats_acc_summary(&got, &all);
	assert_int_equal(got.n, want.n);
	assert_int_equal(got.failures, 1);
	expect_close(got.hmean, want.hmean);
	expect_close(got.amean, want.amean);
	expect_close(got.cv, want.cv);
	assert_true(got.min == want.min && got.max == want.max);
	expect_close(stats_acc_hmean_cv(&all), stats_hmean_cv(v, n));
	assert_true(stats_acc_hmean_cv(&none) == 0);
}

static void test_acc_edges(void **state)
{
	struct stats_acc a = { 0 };
	struct summary s;

	(void)state;
	stats_acc_summary(&s, &a);
	assert_true(s.n == 0 && s.failures == 0 && s.hmean == 0 && s.cv == 0);
	stats_acc_add(&a, -1);
	stats_acc_add(&a, INFINITY);
	stats_acc_summary(&s, &a);
	assert_true(s.n == 0 && s.failures == 2 && s.amean == 0);
	/* Identical runs: no spread, exactly, as stats_summary() says. */
	for (int i = 0; i < 10; i++)
		stats_acc_add(&a, 0.1);
	stats_acc_summary(&s, &a);
	assert_int_equal(s.n, 10);
	assert_true(s.stddev == 0 && s.cv == 0);
	expect_close(s.hmean, 0.1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summaries),
		cmocka_unit_test(test_summary_identical_runs_have_no_spread),
		cmocka_unit_test(test_mann_whitney),
		cmocka_unit_test(test_mann_whitney_empty_side),
		cmocka_unit_test(test_mann_whitney_exact_large),
		cmocka_unit_test(test_ks_2samp),
		cmocka_unit_test(test_ks_2samp_asymptotic),
		cmocka_unit_test(test_welch),
		cmocka_unit_test(test_welch_se_reads_a_shifted_null),
		cmocka_unit_test(test_t_cdf),
		cmocka_unit_test(test_normal_cdf),
		cmocka_unit_test(test_bootstrap_contains_estimate),
		cmocka_unit_test(test_bootstrap_reproducible),
		cmocka_unit_test(test_bootstrap_narrows_with_more_data),
		cmocka_unit_test(test_bootstrap_degenerate),
		cmocka_unit_test(test_hmean_cv),
		cmocka_unit_test(test_fixture_is_current),
		cmocka_unit_test(test_acc_equals_summary),
		cmocka_unit_test(test_acc_edges),
		cmocka_unit_test(test_acc_merge_scaled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
