/*
 * stats: summaries of a commit's runs and comparisons between two commits.
 * Pure functions, no I/O, no global state. A value <= 0 (or not finite) is
 * a failed run: counted in `failures`, never averaged in, and left out of
 * every test below. Checked against scipy by tests/unit/test_stats.c.
 */
#ifndef BISECT_STATS_H
#define BISECT_STATS_H

#include <stddef.h>
#include <stdint.h>

struct summary {
	size_t n;          /* successful runs */
	size_t failures;   /* runs with value <= 0 or not finite */
	double hmean;      /* n / sum(1/x): for rates */
	double amean;
	double median, min, max;
	double stddev;     /* sample (n - 1); 0 when n < 2 (scipy: nan) */
	double cv;         /* stddev / amean, a fraction; 0 when n < 2 */
};

/* Summarises x[0..n); the fields of s are 0 when no run succeeded. */
void stats_summary(struct summary *s, const double *x, size_t n);

/*
 * A summary kept one run at a time, as a commit's runs arrive: the sums
 * stats_summary() is made of (Welford's mean and squared deviations for
 * the spread). stats_acc_summary() gives what stats_summary() gives for
 * the same values, up to rounding (sums in arrival order, not sorted),
 * without the median. A zeroed struct is an empty summary.
 */
struct stats_acc {
	size_t n, failures;
	double sum, sum_inv;        /* of the successful values, and of their reciprocals */
	double sum_inv2;            /* ... and of their reciprocals' squares (the harmonic CoV) */
	double mean, m2;            /* running mean, sum of squared deviations from it */
	double min, max;
};

void stats_acc_add(struct stats_acc *a, double x);
/* n, failures, hmean, amean, min, max, stddev, cv; median 0. */
void stats_acc_summary(struct summary *s, const struct stats_acc *a);
/*
 * Adds to a the values b holds, each divided by scale (> 0), as if they
 * had been added one by one (Chan, Golub and LeVeque's pairwise update):
 * an agent's runs at another agent's level.
 */
void stats_acc_merge_scaled(struct stats_acc *a, const struct stats_acc *b, double scale);
/* stats_hmean_cv() of the values a holds, from its sums. */
double stats_acc_hmean_cv(const struct stats_acc *a);

/* Copies the successful values of x into out (room for n); returns how many. */
size_t stats_valid(double *out, const double *x, size_t n);

/*
 * mmtests' harmonic CoV (compare-kernels' HCoeffVar, as a fraction):
 * stats_hmean_stddev() / hmean. The stddev is that of the reciprocals
 * about 1/hmean scaled back by hmean^2, with divisor n (mmtests' choice).
 * Both are 0 with fewer than 2 successful runs or no spread, as cv is.
 */
double stats_hmean_stddev(const double *x, size_t n);
double stats_hmean_cv(const double *x, size_t n);

/* (b - a) / a in percent; 0 when a is 0. */
double stats_change_pct(double a, double b);

/*
 * The alternative hypothesis about a against b, as scipy's `alternative`
 * with x = a, y = b: ALT_LESS is "a is stochastically less than b" (for
 * Welch: mean of a < mean of b).
 */
enum stats_alt { ALT_TWO_SIDED, ALT_LESS, ALT_GREATER };

/* What a two-sample test found. */
struct stats_test {
	double stat;  /* MW: U of a (scipy's U1); KS: D; Welch: t (a - b) */
	double df;    /* Welch: degrees of freedom; otherwise 0 */
	double se;    /* Welch: the standard error of mean(a) - mean(b), t's denominator; otherwise NAN */
	double p;     /* p-value in [0, 1]; 1 when the test is undefined */
	int exact;    /* 1 when p comes from the exact null distribution */
};

/*
 * Mann-Whitney U test of a against b over their successful values
 * (m of a, n of b). The statistic is U1 = R1 - m(m+1)/2, R1 the rank sum of
 * a with mid-ranks for ties. Method, scipy 1.10's mannwhitneyu
 * method='auto' rule plus a size cap:
 *
 *   exact       when no value occurs twice in a and b pooled, and
 *               min(m, n) <= 8, and max(m, n) <= STATS_MW_EXACT_MAX;
 *               the null distribution of U counted exactly (integers),
 *               p = P(U >= u) as scipy's method='exact'.
 *   asymptotic  otherwise: z = (u - m n / 2 - 0.5) / s with the tie
 *               correction s^2 = m n / 12 ((N + 1) - sum(t^3 - t) / (N (N - 1))),
 *               p from the normal survival function, as scipy's
 *               method='asymptotic', use_continuity=True.
 *
 * u is U1 for ALT_GREATER, m n - U1 for ALT_LESS and max of the two for
 * ALT_TWO_SIDED, where p is doubled; p is clipped to 1. (scipy has no size
 * cap: it stays exact for any max(m, n); the cap only keeps memory bounded.)
 * p is 1 when either side is empty or every value is the same.
 */
#define STATS_MW_EXACT_SMALL 8
#define STATS_MW_EXACT_MAX 100000
void stats_mann_whitney_test(struct stats_test *r, const double *a, size_t na,
			     const double *b, size_t nb, enum stats_alt alt);
/* The p-value of stats_mann_whitney_test(). */
double stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
			  enum stats_alt alt);

/*
 * Two-sided two-sample Kolmogorov-Smirnov test over the successful values:
 * D = max |F_a(x) - F_b(x)| with right-continuous empirical CDFs evaluated
 * at every pooled value (as scipy's ks_2samp). Method, scipy 1.10's
 * ks_2samp method='auto' rule:
 *
 *   exact       when max(m, n) <= STATS_KS_EXACT_MAX: the probability that
 *               a uniformly random lattice path from (0, 0) to (m, n) has
 *               |x/m - y/n| >= D somewhere (ties in the data are ignored,
 *               as scipy does), same as scipy's method='exact';
 *   asymptotic  otherwise: the limiting Kolmogorov distribution,
 *               p = 2 sum_{k>=1} (-1)^(k-1) exp(-2 k^2 en D^2),
 *               en = m n / (m + n) (scipy.stats.kstwobign.sf(sqrt(en) D)).
 *               Not quite scipy's method='asymp', which uses the finite-n
 *               kstwo.sf(D, round(en)); the two differ by O(1/sqrt(en)).
 *
 * p is 1 when either side is empty or D is 0. Exact costs O(m n) time and
 * O(n) memory.
 */
#define STATS_KS_EXACT_MAX 10000
void stats_ks_2samp_test(struct stats_test *r, const double *a, size_t na,
			 const double *b, size_t nb);
/* The p-value of stats_ks_2samp_test(). */
double stats_ks_2samp(const double *a, size_t na, const double *b, size_t nb);

/*
 * Welch's unequal-variance t-test of a against b over the successful
 * values, as scipy.stats.ttest_ind(a, b, equal_var=False): t = (mean(a) -
 * mean(b)) / sqrt(va / m + vb / n), Welch-Satterthwaite degrees of freedom,
 * p from the Student t distribution. Undefined (p = 1, stat and df NaN;
 * scipy gives nan) when a side has fewer than 2 values or both variances
 * are 0.
 */
void stats_welch_t_test(struct stats_test *r, const double *a, size_t na,
			const double *b, size_t nb, enum stats_alt alt);
/* The p-value of stats_welch_t_test(). */
double stats_welch_t(const double *a, size_t na, const double *b, size_t nb,
		     enum stats_alt alt);

/* Standard normal CDF. */
double stats_normal_cdf(double z);
/*
 * Student t CDF with df > 0 degrees of freedom (df may be INFINITY), from
 * the regularised incomplete beta function; both tails are computed without
 * cancellation, so stats_t_cdf(-t, df) is an accurate small upper tail.
 * NaN for df <= 0 or NaN arguments.
 */
double stats_t_cdf(double t, double df);

/*
 * 95% percentile bootstrap confidence interval [*lo, *hi] of
 * hmean(b) / hmean(a) over the successful values: `resamples` times
 * (STATS_BOOTSTRAP_DEFAULT when <= 0), resample a and b with replacement,
 * independently, and take the 2.5% and 97.5% quantiles of the ratios
 * (linear interpolation between order statistics, numpy's default).
 * Reproducible: the same data and seed give the same interval on any
 * machine (rng.h). Returns 0, or ERR_INVALID (lo and hi NaN) when either
 * side has no successful value.
 */
#define STATS_BOOTSTRAP_DEFAULT 2000
int stats_bootstrap_ratio(double *lo, double *hi, const double *a, size_t na,
			  const double *b, size_t nb, int resamples, uint64_t seed);

/*
 * The change of b against a, (hmean(b) - hmean(a)) / hmean(a) in percent,
 * with the bootstrap interval above also in percent. Returns as
 * stats_bootstrap_ratio(); *pct is NaN too on failure.
 */
int stats_change_ci(double *pct, double *lo, double *hi, const double *a, size_t na,
		    const double *b, size_t nb, int resamples, uint64_t seed);

#endif
