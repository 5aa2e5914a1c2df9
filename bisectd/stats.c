/* stats: summaries and rank tests. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

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

void stats_summary(struct summary *s, const double *x, size_t n)
{
	double *v = xmalloc((n ? n : 1) * sizeof(*v));
	double sum = 0, inv = 0, ss = 0;
	size_t k = stats_valid(v, x, n);

	memset(s, 0, sizeof(*s));
	s->n = k;
	s->failures = n - k;
	if (k == 0)
		goto out;
	qsort(v, k, sizeof(*v), cmp_double);
	for (size_t i = 0; i < k; i++) {
		sum += v[i];
		inv += 1.0 / v[i];
	}
	s->amean = sum / (double)k;
	s->hmean = (double)k / inv;
	s->min = v[0];
	s->max = v[k - 1];
	s->median = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	for (size_t i = 0; i < k; i++)
		ss += (v[i] - s->amean) * (v[i] - s->amean);
	s->stddev = k > 1 ? sqrt(ss / (double)(k - 1)) : 0;
	s->cv = s->amean > 0 ? s->stddev / s->amean : 0;
out:
	free(v);
}

double stats_change_pct(double a, double b)
{
	return a != 0 ? (b - a) / a * 100.0 : 0;
}

struct ranked {
	double v;
	int from_a;
};

static int cmp_ranked(const void *x, const void *y)
{
	return cmp_double(&((const struct ranked *)x)->v, &((const struct ranked *)y)->v);
}

/*
 * Number of ways to get U = u with sizes m, n: the classic recurrence
 * f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1), tabulated for all u.
 * Returns the distribution as probabilities in a caller-freed array of
 * m*n + 1 entries.
 */
static double *u_distribution(int m, int n)
{
	int max = m * n;
	/* dp[j][u] for the current i, j in 0..n */
	double *prev = xcalloc((size_t)(n + 1) * (size_t)(max + 1), sizeof(double));
	double *cur = xcalloc((size_t)(n + 1) * (size_t)(max + 1), sizeof(double));
	double *dist = xcalloc((size_t)max + 1, sizeof(double));
	double total = 0;

#define AT(a, j, u) (a)[(size_t)(j) * (size_t)(max + 1) + (size_t)(u)]
	/* i = 0: f(0; 0, j) = 1 */
	for (int j = 0; j <= n; j++)
		AT(prev, j, 0) = 1;
	for (int i = 1; i <= m; i++) {
		memset(cur, 0, (size_t)(n + 1) * (size_t)(max + 1) * sizeof(double));
		AT(cur, 0, 0) = 1;
		for (int j = 1; j <= n; j++)
			for (int u = 0; u <= i * j; u++)
				AT(cur, j, u) = (u >= j ? AT(prev, j, u - j) : 0) + AT(cur, j - 1, u);
		double *t = prev;
		prev = cur;
		cur = t;
	}
	for (int u = 0; u <= max; u++)
		total += AT(prev, n, u);
	for (int u = 0; u <= max; u++)
		dist[u] = AT(prev, n, u) / total;
#undef AT
	free(prev);
	free(cur);
	return dist;
}

double stats_mann_whitney(const double *a, size_t na_all, const double *b, size_t nb_all,
			  enum stats_alt alt)
{
	double *va = xmalloc((na_all ? na_all : 1) * sizeof(double));
	double *vb = xmalloc((nb_all ? nb_all : 1) * sizeof(double));
	size_t na = stats_valid(va, a, na_all), nb = stats_valid(vb, b, nb_all), n = na + nb;
	struct ranked *r = NULL;
	double ra = 0, u, p = 1.0, tie_sum = 0;
	int ties = 0;

	if (na == 0 || nb == 0)
		goto out;
	r = xmalloc(n * sizeof(*r));
	for (size_t i = 0; i < na; i++)
		r[i] = (struct ranked){ va[i], 1 };
	for (size_t i = 0; i < nb; i++)
		r[na + i] = (struct ranked){ vb[i], 0 };
	qsort(r, n, sizeof(*r), cmp_ranked);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && r[j + 1].v == r[i].v)
			j++;
		double rank = (double)(i + j) / 2.0 + 1.0, t = (double)(j - i + 1);

		if (j > i) {
			ties = 1;
			tie_sum += t * t * t - t;
		}
		for (size_t k = i; k <= j; k++)
			if (r[k].from_a)
				ra += rank;
		i = j + 1;
	}
	/* U of a: how many (a, b) pairs have a > b (ties half). */
	u = ra - (double)na * ((double)na + 1) / 2.0;
	if (!ties && na <= 20 && nb <= 20) {
		double *dist = u_distribution((int)na, (int)nb);
		int ui = (int)lround(u), max = (int)(na * nb);
		double le = 0, ge = 0;

		for (int k = 0; k <= ui; k++)
			le += dist[k];
		for (int k = ui; k <= max; k++)
			ge += dist[k];
		free(dist);
		if (alt == ALT_LESS)
			p = le;
		else if (alt == ALT_GREATER)
			p = ge;
		else
			p = fmin(1.0, 2.0 * fmin(le, ge));
	} else {
		double mu = (double)na * (double)nb / 2.0;
		double sigma = sqrt((double)na * (double)nb / 12.0 *
				    (((double)n + 1) - tie_sum / ((double)n * ((double)n - 1))));
		double z;

		if (sigma == 0)
			goto out;
		if (alt == ALT_LESS)
			z = (u - mu + 0.5) / sigma, p = 0.5 * erfc(-z / M_SQRT2);
		else if (alt == ALT_GREATER)
			z = (u - mu - 0.5) / sigma, p = 0.5 * erfc(z / M_SQRT2);
		else {
			z = (fabs(u - mu) - 0.5) / sigma;
			p = fmin(1.0, erfc(z / M_SQRT2));
		}
	}
out:
	free(r);
	free(va);
	free(vb);
	return p;
}
