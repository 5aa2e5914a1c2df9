/*
 * pairs: the confirmation's paired test on its own (bench-bisect
 * --pairs), against two sequential tests it could be replaced by, on
 * seeded sequences of normal pair differences:
 *
 *   bisectd  bisect_pairs_pass(): a one-sided paired t test at 4, 6, ...
 *            pairs, p < 0.003 at each look and < 0.011 at the last, its
 *            variance pooled with the model's (5 degrees of freedom)
 *   seq-t    the scale-invariant sequential t test (Rushton's): the
 *            likelihood ratio of the t statistic's direction, with the
 *            alternative a mixture of the effect expected and half of it;
 *            passes at a ratio of 1 / 0.02. It needs no variance from the
 *            model, and under the null its ratio is a martingale whatever
 *            the variance, so Ville's inequality holds its error at 0.02
 *            over every look
 *   bf-sprt  a Bayes factor of the same mixture against no change, the
 *            variance integrated over the engine's prior (5 degrees of
 *            freedom at the model's variance); passes at 1 / 0.02
 *
 * All look at the same pairs (4, 6, ... up to the last look), and the
 * alternatives' effect is the one the engine would size the test for.
 * Each row is one true effect (in sd of a pair's difference) and one
 * ratio of the true variance to the model's; the figures are the share
 * that passed and the mean pairs taken, and the pairs over bisectd's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bisect.h"
#include "pairs.h"
#include "rng.h"

#define PAIRS_ALPHA 0.02

/* log of the integral over r > 0 of r^(n-1) exp(-r^2 / 2 + c r), by the trapezoid rule around its peak. */
static double log_moment(int n, double c)
{
	double peak = (c + sqrt(c * c + 4.0 * (n - 1))) / 2, lo = fmax(peak - 12, 0), hi = peak + 12;
	double h = (hi - lo) / 600, top = (n - 1) * log(peak) - peak * peak / 2 + c * peak, sum = 0;

	for (int i = 0; i <= 600; i++) {
		double r = lo + i * h;

		if (r > 0)
			sum += (i == 0 || i == 600 ? 0.5 : 1) * exp((n - 1) * log(r) - r * r / 2 + c * r - top);
	}
	return top + log(sum * h);
}

/* seq-t: the log likelihood ratio of d's direction, effect th (in sd) against none. */
static double seq_t_llr(const double *d, int n, double th)
{
	double s = 0, q = 0;

	for (int i = 0; i < n; i++) {
		s += d[i];
		q += d[i] * d[i];
	}
	return -n * th * th / 2 + log_moment(n, th * s / sqrt(q)) - log_moment(n, 0);
}

/* bf-sprt: the log Bayes factor of a shift mu against none, the variance scaled-inverse-chi2 (nu0, v0). */
static double bf_llr(const double *d, int n, double mu, double v0, double nu0)
{
	double a = nu0 * v0, b = nu0 * v0;

	for (int i = 0; i < n; i++) {
		a += (d[i] - mu) * (d[i] - mu);
		b += d[i] * d[i];
	}
	return -(nu0 + n) / 2 * (log(a) - log(b));
}

static double mix(double l1, double l2)
{
	double m = fmax(l1, l2);

	return m + log(0.5 * exp(l1 - m) + 0.5 * exp(l2 - m));
}

struct row {
	double th, vr;  /* true effect in sd of the model's variance; true variance over the model's */
	double th1;     /* the effect the test is sized for */
	int last;       /* the last look: twice the pairs a fixed test needs, 12 at least */
};

int bench_pairs(int trials, uint64_t seed)
{
	static const struct row rows[] = {
		{ 0, 1, 1.237, 18 }, { 0, 2, 1.237, 18 }, { 0, 3, 1.237, 18 }, { 0, 1, 2.0, 12 },
		{ 0.6, 1, 1.237, 18 }, { 0.9, 1, 1.237, 18 }, { 1.237, 1, 1.237, 18 }, { 2.0, 1, 2.0, 12 },
	};
	double d[64], stop = log(1 / PAIRS_ALPHA);
	struct rng rng;

	rng_seed(&rng, seed);
	printf("# the confirmation's paired test on its own: %d sequences a row of normal pair differences (seed %llu)\n",
	       trials, (unsigned long long)seed);
	printf("#   th: the true change in sd of a pair's difference (the model's); vr: the true variance over the\n"
	       "#   model's; sized for: the effect the test expects (7%%/4%% is 1.24); pass: the share that passed\n"
	       "#   (at th 0 a false pass); pairs: mean pairs taken; /bisectd: those pairs over bisectd's\n");
	printf("%-6s %-4s %-9s %-5s   %-8s %6s %6s   %-8s %6s %6s %9s   %-8s %6s %6s %9s\n", "th", "vr", "sized for",
	       "last", "bisectd", "pass", "pairs", "seq-t", "pass", "pairs", "/bisectd", "bf-sprt", "pass", "pairs",
	       "/bisectd");
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct row *w = &rows[r];
		long pass[3] = { 0 }, pairs[3] = { 0 };

		for (int t = 0; t < trials; t++) {
			int done[3] = { 0 };
			double p;

			for (int i = 0; i < w->last; i++)
				d[i] = w->th + sqrt(w->vr) * rng_normal(&rng);
			for (int n = 4; n <= w->last; n += 2) {
				/* The model's variance of a difference is 1: unit1_var 0.5. */
				int ok[3] = {
					bisect_pairs_pass(d, n, w->last, 0.5, &p),
					mix(seq_t_llr(d, n, w->th1), seq_t_llr(d, n, w->th1 / 2)) >= stop,
					mix(bf_llr(d, n, w->th1, 1, 5), bf_llr(d, n, w->th1 / 2, 1, 5)) >= stop,
				};

				for (int k = 0; k < 3; k++)
					if (!done[k] && (ok[k] || n >= w->last)) {
						done[k] = 1;
						pass[k] += ok[k];
						pairs[k] += n;
					}
			}
		}
		printf("%-6.3g %-4.3g %-9.3g %-5d   %-8s %6.4f %6.2f   %-8s %6.4f %6.2f %9.2f   %-8s %6.4f %6.2f %9.2f\n",
		       w->th, w->vr, w->th1, w->last, "", (double)pass[0] / trials, (double)pairs[0] / trials, "",
		       (double)pass[1] / trials, (double)pairs[1] / trials, (double)pairs[1] / (double)pairs[0], "",
		       (double)pass[2] / trials, (double)pairs[2] / trials, (double)pairs[2] / (double)pairs[0]);
	}
	return 0;
}
