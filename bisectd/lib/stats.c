/*
 * stats: summaries, rank and distribution tests, Welch's t, the bootstrap.
 * The special functions (normal and Student t CDFs, the regularised
 * incomplete beta) are here too: small, and only the tests need them.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "rng.h"
#include "stats.h"
#include "util.h"

typedef unsigned __int128 u128;

static int valid(double x)
{
	return isfinite(x) && x > 0;
}

size_t stats_valid(double *out, const double *x, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (valid(x[i]))
			out[k++] = x[i];
	return k;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The successful values of x, sorted, in a new array (at least one slot). */
static double *sorted_valid(size_t *k, const double *x, size_t n)
{
	double *v = xmalloc((n ? n : 1) * sizeof(*v));

	*k = stats_valid(v, x, n);
	qsort(v, *k, sizeof(*v), cmp_double);
	return v;
}

static double mean(const double *v, size_t k)
{
	double sum = 0;

	for (size_t i = 0; i < k; i++)
		sum += v[i];
	return sum / (double)k;
}

/* Sample variance (n - 1), two passes; k >= 2. */
static double variance(const double *v, size_t k, double m)
{
	double ss = 0;

	for (size_t i = 0; i < k; i++)
		ss += (v[i] - m) * (v[i] - m);
	return ss / (double)(k - 1);
}

static double hmean(const double *v, size_t k)
{
	double inv = 0;

	for (size_t i = 0; i < k; i++)
		inv += 1.0 / v[i];
	return (double)k / inv;
}

void stats_summary(struct summary *s, const double *x, size_t n)
{
	size_t k;
	double *v = sorted_valid(&k, x, n);

	memset(s, 0, sizeof(*s));
	s->n = k;
	s->failures = n - k;
	if (k == 0)
		goto out;
	s->amean = mean(v, k);
	s->hmean = hmean(v, k);
	s->min = v[0];
	s->max = v[k - 1];
	s->median = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	/* Identical runs have no spread: do not report rounding noise as one. */
	if (k > 1 && s->min != s->max)
		s->stddev = sqrt(variance(v, k, s->amean));
	s->cv = s->stddev / s->amean;
out:
	free(v);
}

void stats_acc_add(struct stats_acc *a, double x)
{
	double d;

	if (!valid(x)) {
		a->failures++;
		return;
	}
	if (a->n == 0 || x < a->min)
		a->min = x;
	if (a->n == 0 || x > a->max)
		a->max = x;
	a->n++;
	a->sum += x;
	a->sum_inv += 1.0 / x;
	a->sum_inv2 += 1.0 / (x * x);
	d = x - a->mean;
	a->mean += d / (double)a->n;
	a->m2 += d * (x - a->mean);
}

void stats_acc_summary(struct summary *s, const struct stats_acc *a)
{
	memset(s, 0, sizeof(*s));
	s->n = a->n;
	s->failures = a->failures;
	if (a->n == 0)
		return;
	s->amean = a->sum / (double)a->n;
	s->hmean = (double)a->n / a->sum_inv;
	s->min = a->min;
	s->max = a->max;
	/* As stats_summary(): identical runs have no spread. */
	if (a->n > 1 && a->min != a->max)
		s->stddev = sqrt((a->m2 > 0 ? a->m2 : 0) / (double)(a->n - 1));
	s->cv = s->stddev / s->amean;
}

void stats_acc_merge_scaled(struct stats_acc *a, const struct stats_acc *b, double scale)
{
	double mean = b->mean / scale, d = mean - a->mean, n = (double)(a->n + b->n);

	a->failures += b->failures;
	if (b->n == 0)
		return;
	if (a->n == 0 || b->min / scale < a->min)
		a->min = b->min / scale;
	if (a->n == 0 || b->max / scale > a->max)
		a->max = b->max / scale;
	a->m2 += b->m2 / (scale * scale) + d * d * (double)a->n * (double)b->n / n;
	a->mean += d * (double)b->n / n;
	a->sum += b->sum / scale;
	a->sum_inv += b->sum_inv * scale;
	a->sum_inv2 += b->sum_inv2 * scale * scale;
	a->n += b->n;
}

double stats_acc_hmean_cv(const struct stats_acc *a)
{
	double h, ss;

	/* As stats_hmean_stddev(): fewer than two runs, or identical ones, have no spread. */
	if (a->n < 2 || a->min == a->max)
		return 0;
	h = (double)a->n / a->sum_inv;
	ss = a->sum_inv2 - a->sum_inv * a->sum_inv / (double)a->n;  /* sum of (1/x - 1/h)^2 */
	return sqrt((ss > 0 ? ss : 0) / (double)a->n) * h;
}

/*
 * mmtests' HStddev (bin/lib/MMTests/Stat.pm, calc_stddev for "hmean"):
 * the spread of the reciprocals about 1/hmean, carried back to the
 * metric's scale by the delta method, sqrt(sum (1/x - 1/H)^2 H^4 / n).
 * Its divisor is n, not n - 1, as mmtests has it.
 */
double stats_hmean_stddev(const double *x, size_t n)
{
	size_t k;
	double *v = sorted_valid(&k, x, n), h, ss = 0;

	if (k < 2 || v[0] == v[k - 1]) {
		free(v);
		return 0;
	}
	h = hmean(v, k);
	for (size_t i = 0; i < k; i++)
		ss += (1.0 / v[i] - 1.0 / h) * (1.0 / v[i] - 1.0 / h);
	free(v);
	return sqrt(ss / (double)k) * h * h;
}

double stats_hmean_cv(const double *x, size_t n)
{
	size_t k;
	double *v = sorted_valid(&k, x, n), h = k ? hmean(v, k) : 0;

	free(v);
	return h > 0 ? stats_hmean_stddev(x, n) / h : 0;
}

double stats_change_pct(double a, double b)
{
	return a != 0 ? (b - a) / a * 100.0 : 0;
}

/* --- special functions ------------------------------------------------- */

double stats_normal_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

/*
 * Continued fraction for the incomplete beta function, evaluated by the
 * modified Lentz method (the even and odd steps of the classic expansion,
 * Abramowitz and Stegun 26.5.8). Converges fast for x < (a + 1) / (a + b + 2).
 */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 100000; m++) {
		double m2 = 2.0 * m, num, delta;

		/* even step: d_{2m} */
		num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		c = 1 + num / c;
		if (fabs(d) < tiny)
			d = tiny;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h *= d * c;
		/* odd step: d_{2m+1} */
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		if (fabs(d) < tiny)
			d = tiny;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		delta = d * c;
		h *= delta;
		if (fabs(delta - 1) < 2 * DBL_EPSILON)
			break;
	}
	return h;
}

/*
 * lgamma(a) - lgamma(a + b) for a >= 100, from Stirling's series: the
 * direct difference of two large lgammas would lose about log10(a ln a)
 * digits, which matters for the t CDF at large degrees of freedom.
 */
static double lgamma_ratio_large(double a, double b)
{
	double c = a + b;

	return -(a - 0.5) * log1p(b / a) - b * log(c) + b +
	       (1 / a - 1 / c) / 12 - (1 / (a * a * a) - 1 / (c * c * c)) / 360 +
	       (1 / pow(a, 5) - 1 / pow(c, 5)) / 1260;
}

/* log B(a, b) */
static double lbeta(double a, double b)
{
	double big = fmax(a, b), small = fmin(a, b);

	if (big >= 100)
		return lgamma(small) + lgamma_ratio_large(big, small);
	return lgamma(a) + lgamma(b) - lgamma(a + b);
}

/*
 * Regularised incomplete beta I_x(a, b), given x and y = 1 - x separately
 * so that a caller that knows y better than 1 - x loses nothing. Whichever
 * of I and 1 - I the continued fraction converges for is computed directly;
 * *ic gets 1 - I, so a small tail on either side keeps its relative precision.
 */
static double ibeta(double *ic, double a, double b, double x, double y)
{
	double front, v;

	if (x <= 0) {
		*ic = 1;
		return 0;
	}
	if (y <= 0) {
		*ic = 0;
		return 1;
	}
	front = exp(a * (x < 0.5 ? log(x) : log1p(-y)) + b * (y < 0.5 ? log(y) : log1p(-x)) -
		    lbeta(a, b));
	if (x < (a + 1) / (a + b + 2)) {
		v = front * beta_cf(a, b, x) / a;
		*ic = 1 - v;
		return v;
	}
	v = front * beta_cf(b, a, y) / b;
	*ic = v;
	return 1 - v;
}

/* P(T <= -|t|) for T ~ Student t with df degrees of freedom. */
static double t_lower_tail(double t, double df)
{
	double t2 = t * t, ic;

	if (isinf(df))
		return stats_normal_cdf(-fabs(t));
	if (!isfinite(t2))
		return 0;
	/* P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2) */
	return 0.5 * ibeta(&ic, df / 2, 0.5, df / (df + t2), t2 / (df + t2));
}

double stats_t_cdf(double t, double df)
{
	double tail;

	if (isnan(t) || isnan(df) || df <= 0)
		return NAN;
	tail = t_lower_tail(t, df);
	return t < 0 ? tail : 1 - tail;
}

/* P(T >= t): the upper tail, accurate when small. */
static double t_sf(double t, double df)
{
	double tail = t_lower_tail(t, df);

	return t > 0 ? tail : 1 - tail;
}

/* --- Mann-Whitney U ------------------------------------------------------ */

struct ranked {
	double v;
	int from_a;
};

static int cmp_ranked(const void *x, const void *y)
{
	return cmp_double(&((const struct ranked *)x)->v, &((const struct ranked *)y)->v);
}

/*
 * C(m + n, m) into *c; 0 when it and every intermediate product fits in
 * 128 bits, -1 otherwise.
 */
static int binom128(u128 *c, size_t m, size_t n)
{
	u128 v = 1;

	for (size_t i = 1; i <= m; i++) {
		u128 t;

		if (__builtin_mul_overflow(v, (u128)(n + i), &t))
			return -1;
		v = t / i;  /* exact: v * (n + i) = C(n + i, i) * i */
	}
	*c = v;
	return 0;
}

/*
 * P(U <= k) under the null, for sizes m and n without ties. The counts of U
 * are the coefficients of the Gaussian binomial
 *   prod_{i=1..s} (1 - q^(l + i)) / (1 - q^i),  s = min(m, n), l = max(m, n),
 * computed as power series truncated after q^k. The arithmetic is modulo
 * 2^128: the ring operations stay exact there, and every true coefficient
 * is below C(m + n, m) < 2^128 (the caller checked), so the wrapped
 * intermediate values do not matter. O(s k) time, O(k) memory.
 */
static double mw_exact_cdf(size_t m, size_t n, size_t k, u128 total)
{
	size_t s = m < n ? m : n, l = m < n ? n : m;
	u128 *c, sum = 0;

	if (k >= m * n)
		return 1;
	c = xcalloc(k + 1, sizeof(*c));
	c[0] = 1;
	for (size_t i = 1; i <= s; i++) {
		size_t e = l + i;

		/* times (1 - q^e), from the top so c[j - e] is still old */
		if (k >= e)
			for (size_t j = k; j >= e; j--)
				c[j] -= c[j - e];
		/* divided by (1 - q^i): times 1 + q^i + q^2i + ... */
		for (size_t j = i; j <= k; j++)
			c[j] += c[j - i];
	}
	for (size_t j = 0; j <= k; j++)
		sum += c[j];
	free(c);
	return (double)sum / (double)total;
}

void stats_mann_whitney_test(struct stats_test *r, const double *a, size_t na_all,
			     const double *b, size_t nb_all, enum stats_alt alt)
{
	double *va = xmalloc((na_all ? na_all : 1) * sizeof(double));
	double *vb = xmalloc((nb_all ? nb_all : 1) * sizeof(double));
	size_t na = stats_valid(va, a, na_all), nb = stats_valid(vb, b, nb_all), n = na + nb;
	struct ranked *rk = NULL;
	double ra = 0, u1, u2, u, mn = (double)na * (double)nb, tie_sum = 0;
	int ties = 0;
	u128 total;

	r->stat = NAN;
	r->df = 0;
	r->se = NAN;
	r->p = 1.0;
	r->exact = 0;
	if (na == 0 || nb == 0)
		goto out;
	rk = xmalloc(n * sizeof(*rk));
	for (size_t i = 0; i < na; i++)
		rk[i] = (struct ranked){ va[i], 1 };
	for (size_t i = 0; i < nb; i++)
		rk[na + i] = (struct ranked){ vb[i], 0 };
	qsort(rk, n, sizeof(*rk), cmp_ranked);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && rk[j + 1].v == rk[i].v)
			j++;
		double rank = (double)(i + j) / 2.0 + 1.0, t = (double)(j - i + 1);

		if (j > i) {
			ties = 1;
			tie_sum += t * t * t - t;
		}
		for (size_t k = i; k <= j; k++)
			if (rk[k].from_a)
				ra += rank;
		i = j + 1;
	}
	/* U of a: how many (a, b) pairs have a > b, ties counting half. */
	u1 = ra - (double)na * ((double)na + 1) / 2.0;
	u2 = mn - u1;
	r->stat = u1;
	u = alt == ALT_GREATER ? u1 : alt == ALT_LESS ? u2 : fmax(u1, u2);
	if (!ties && (na <= STATS_MW_EXACT_SMALL || nb <= STATS_MW_EXACT_SMALL) &&
	    na <= STATS_MW_EXACT_MAX && nb <= STATS_MW_EXACT_MAX &&
	    binom128(&total, na < nb ? na : nb, na < nb ? nb : na) == 0) {
		/* Without ties U is an integer; P(U >= u) = P(U <= mn - u) by symmetry. */
		size_t ui = (size_t)llround(u);

		r->p = mw_exact_cdf(na, nb, na * nb - ui, total);
		r->exact = 1;
	} else {
		double s = sqrt(mn / 12.0 * (((double)n + 1) - tie_sum / ((double)n * ((double)n - 1))));

		/* s == 0 only when every value is the same: no evidence, p = 1 */
		if (s > 0)
			r->p = 0.5 * erfc((u - mn / 2 - 0.5) / s / M_SQRT2);
	}
	if (alt == ALT_TWO_SIDED)
		r->p *= 2;
	r->p = fmin(1.0, fmax(0.0, r->p));
out:
	free(rk);
	free(va);
	free(vb);
}

double stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
			  enum stats_alt alt)
{
	struct stats_test r;

	stats_mann_whitney_test(&r, a, na, b, nb, alt);
	return r.p;
}

/* --- Kolmogorov-Smirnov ---------------------------------------------------- */

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * P(max |x ng - y mg| >= h) over uniformly random monotone lattice paths from
 * (0, 0) to (m, n). A uniform path is the urn walk that steps in x with
 * probability (m - x) / (m - x + n - y), so the probability mass is carried
 * row by row and the mass reaching the boundary is absorbed and summed:
 * only additions of positive terms, no binomials, no overflow.
 */
static double ks_exact_sf(uint64_t m, uint64_t n, uint64_t mg, uint64_t ng, uint64_t h)
{
	double *p = xmalloc((n + 1) * sizeof(*p)), out = 0;

#define OUTSIDE(x, y) ((int64_t)((x) * ng) - (int64_t)((y) * mg) >= (int64_t)h || \
		       (int64_t)((y) * mg) - (int64_t)((x) * ng) >= (int64_t)h)
	for (uint64_t x = 0; x <= m; x++) {
		for (uint64_t y = 0; y <= n; y++) {
			double v = 0;

			if (x == 0 && y == 0) {
				v = 1;
			} else {
				if (x > 0)  /* from (x - 1, y) */
					v += p[y] * (double)(m - x + 1) / (double)(m - x + 1 + n - y);
				if (y > 0)  /* from (x, y - 1) */
					v += p[y - 1] * (double)(n - y + 1) / (double)(m - x + n - y + 1);
			}
			if (OUTSIDE(x, y)) {
				out += v;
				v = 0;
			}
			p[y] = v;
		}
	}
#undef OUTSIDE
	free(p);
	return out;
}

/*
 * Limiting Kolmogorov distribution: P(K >= z). Below z = 1 the Jacobi theta
 * form of the CDF converges in a few terms, above it the alternating series
 * of the survival function does.
 */
static double kolmogorov_sf(double z)
{
	double sum = 0;

	if (z <= 0)
		return 1;
	if (z < 1) {
		for (int k = 1; k < 100; k++) {
			double t = exp(-(2.0 * k - 1) * (2.0 * k - 1) * M_PI * M_PI / (8 * z * z));

			sum += t;
			if (t <= 1e-17 * sum)
				break;
		}
		return fmin(1.0, fmax(0.0, 1 - sqrt(2 * M_PI) / z * sum));
	}
	for (int k = 1; k < 100; k++) {
		double t = exp(-2.0 * k * k * z * z);

		sum += k % 2 ? t : -t;
		if (t <= 1e-17 * sum)
			break;
	}
	return fmin(1.0, fmax(0.0, 2 * sum));
}

void stats_ks_2samp_test(struct stats_test *r, const double *a, size_t na_all,
			 const double *b, size_t nb_all)
{
	size_t na, nb;
	double *va = sorted_valid(&na, a, na_all), *vb = sorted_valid(&nb, b, nb_all);
	uint64_t g, mg, ng, lcm, h = 0;

	r->stat = NAN;
	r->df = 0;
	r->se = NAN;
	r->p = 1.0;
	r->exact = 0;
	if (na == 0 || nb == 0)
		goto out;
	/* Work in units of 1 / lcm(m, n): F_a - F_b = (i ng - j mg) / lcm exactly. */
	g = gcd_u64(na, nb);
	mg = na / g;
	ng = nb / g;
	lcm = mg * nb;
	for (size_t i = 0, j = 0; i < na || j < nb;) {
		double v = i < na && (j >= nb || va[i] <= vb[j]) ? va[i] : vb[j];
		int64_t d;

		while (i < na && va[i] == v)
			i++;
		while (j < nb && vb[j] == v)
			j++;
		d = (int64_t)(i * ng) - (int64_t)(j * mg);
		if ((uint64_t)llabs(d) > h)
			h = (uint64_t)llabs(d);
	}
	r->stat = (double)h / (double)lcm;
	r->exact = na <= STATS_KS_EXACT_MAX && nb <= STATS_KS_EXACT_MAX;
	if (h == 0)
		goto out;
	if (r->exact) {
		r->p = ks_exact_sf(na, nb, mg, ng, h);
	} else {
		double en = (double)na * (double)nb / ((double)na + (double)nb);

		r->p = kolmogorov_sf(sqrt(en) * r->stat);
	}
	r->p = fmin(1.0, fmax(0.0, r->p));
out:
	free(va);
	free(vb);
}

double stats_ks_2samp(const double *a, size_t na, const double *b, size_t nb)
{
	struct stats_test r;

	stats_ks_2samp_test(&r, a, na, b, nb);
	return r.p;
}

/* --- Welch's t ------------------------------------------------------------------ */

void stats_welch_t_test(struct stats_test *r, const double *a, size_t na_all,
			const double *b, size_t nb_all, enum stats_alt alt)
{
	double *va = xmalloc((na_all ? na_all : 1) * sizeof(double));
	double *vb = xmalloc((nb_all ? nb_all : 1) * sizeof(double));
	size_t na = stats_valid(va, a, na_all), nb = stats_valid(vb, b, nb_all);
	double ma, mb, sa, sb, t, df;

	r->stat = NAN;
	r->df = NAN;
	r->se = NAN;
	r->p = 1.0;
	r->exact = 0;
	if (na < 2 || nb < 2)
		goto out;
	ma = mean(va, na);
	mb = mean(vb, nb);
	sa = variance(va, na, ma) / (double)na;  /* squared standard errors */
	sb = variance(vb, nb, mb) / (double)nb;
	if (sa + sb == 0)
		goto out;
	r->se = sqrt(sa + sb);
	t = (ma - mb) / r->se;
	df = (sa + sb) * (sa + sb) / (sa * sa / (double)(na - 1) + sb * sb / (double)(nb - 1));
	r->stat = t;
	r->df = df;
	if (alt == ALT_LESS)
		r->p = stats_t_cdf(t, df);
	else if (alt == ALT_GREATER)
		r->p = t_sf(t, df);
	else
		r->p = fmin(1.0, 2 * t_lower_tail(t, df));
out:
	free(va);
	free(vb);
}

double stats_welch_t(const double *a, size_t na, const double *b, size_t nb,
		     enum stats_alt alt)
{
	struct stats_test r;

	stats_welch_t_test(&r, a, na, b, nb, alt);
	return r.p;
}

/* --- bootstrap -------------------------------------------------------------- */

/* Quantile q of sorted v[0..n) with linear interpolation (numpy's default). */
static double quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1), f = floor(pos);
	size_t i = (size_t)f;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - f) * (v[i + 1] - v[i]);
}

/* hmean of k values drawn from v[0..n) with replacement. */
static double resample_hmean(struct rng *g, const double *v, size_t n, size_t k)
{
	double inv = 0;

	for (size_t i = 0; i < k; i++)
		inv += 1.0 / v[rng_below(g, n)];
	return (double)k / inv;
}

int stats_bootstrap_ratio(double *lo, double *hi, const double *a, size_t na_all,
			  const double *b, size_t nb_all, int resamples, uint64_t seed)
{
	double *va = xmalloc((na_all ? na_all : 1) * sizeof(double));
	double *vb = xmalloc((nb_all ? nb_all : 1) * sizeof(double));
	size_t na = stats_valid(va, a, na_all), nb = stats_valid(vb, b, nb_all);
	size_t nr = resamples > 0 ? (size_t)resamples : STATS_BOOTSTRAP_DEFAULT;
	double *ratio = NULL;
	struct rng g;
	int rc = ERR_INVALID;

	*lo = *hi = NAN;
	if (na == 0 || nb == 0)
		goto out;
	ratio = xmalloc(nr * sizeof(*ratio));
	rng_seed(&g, seed);
	for (size_t i = 0; i < nr; i++) {
		double ha = resample_hmean(&g, va, na, na);

		ratio[i] = resample_hmean(&g, vb, nb, nb) / ha;
	}
	qsort(ratio, nr, sizeof(*ratio), cmp_double);
	*lo = quantile(ratio, nr, 0.025);
	*hi = quantile(ratio, nr, 0.975);
	rc = 0;
out:
	free(ratio);
	free(va);
	free(vb);
	return rc;
}

int stats_change_ci(double *pct, double *lo, double *hi, const double *a, size_t na,
		    const double *b, size_t nb, int resamples, uint64_t seed)
{
	struct summary sa, sb;
	int rc;

	*pct = NAN;
	if ((rc = stats_bootstrap_ratio(lo, hi, a, na, b, nb, resamples, seed)))
		return rc;
	stats_summary(&sa, a, na);
	stats_summary(&sb, b, nb);
	*pct = stats_change_pct(sa.hmean, sb.hmean);
	*lo = (*lo - 1) * 100.0;
	*hi = (*hi - 1) * 100.0;
	return 0;
}
