/*
 * pairs: the confirmation's paired test on its own (bench-bisect
 * --pairs), against two sequential tests it could be replaced by, on
 * seeded sequences of normal pair differences:
 *
 *   bisectd  bisect_pairs_pass(): a one-sided paired t test at 4, 6, ...
 *            pairs, p < 0.003 at each look and < 0.011 at the last, its
 *            variance the pairs' differences' pooled with the model's (5
 *            degrees of freedom)
 *   welch    the same looks, its variance the two commits' own spreads
 *            added (Welch's degrees of freedom, up to 2 (n - 1) where the
 *            differences have n - 1) pooled with the model's: the more
 *            degrees of freedom when runs are independent, and the more
 *            careful where a pair's two runs share a level
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
 * Each row is one true effect (in sd of a pair's difference), one ratio
 * of the true variance to the model's and one correlation of a pair's two
 * runs (a level they share); the figures are the share that passed and
 * the mean pairs taken, and the pairs over bisectd's.
 *
 * Then the recorded traces (tests/bench/traces/): every window of 36 runs
 * of an agent, in the order the confirmation takes them (rounds of A B B
 * A or B A A B, a coin a round), is a sequence of 18 pairs of two equal
 * commits, and with the culprit's runs 7% lower, of a culprit; unit1_var
 * is the trace's task noise squared. The engine's test is also read in
 * the order it took before 2026-12-06 (A B A B, then B A B A), which a
 * lab with a rhythm can line up with. The windows overlap, so their
 * shares are rough.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bisect.h"
#include "err.h"
#include "pairs.h"
#include "rng.h"
#include "stats.h"
#include "trace.h"
#include "util.h"

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

/*
 * welch: the engine's looks and boundary (0.003 at a look, 0.011 at the
 * last), the variance of a difference taken as the parent's runs' spread
 * plus the culprit's, a[i] and c[i] the parent's and the culprit's run of
 * pair i, with Welch's degrees of freedom, pooled with the model's 2
 * unit1_var at 5 degrees of freedom.
 */
static int welch_pass(const double *a, const double *c, int np, int last, double unit1_var, double *p)
{
	int passed = 0;

	*p = 1;
	for (int n = BISECT_PAIRS_FIRST_LOOK; n <= np && n <= last && !passed; n += 2) {
		double ma = 0, mc = 0, va = 0, vc = 0, v, nu = 0, nu0 = BISECT_PAIRS_PRIOR_DOF, s2, q;

		for (int i = 0; i < n; i++) {
			ma += a[i];
			mc += c[i];
		}
		ma /= n;
		mc /= n;
		for (int i = 0; i < n; i++) {
			va += (a[i] - ma) * (a[i] - ma);
			vc += (c[i] - mc) * (c[i] - mc);
		}
		va /= n - 1;
		vc /= n - 1;
		v = va + vc;
		if (va * va + vc * vc > 0)
			nu = v * v * (n - 1) / (va * va + vc * vc);
		s2 = (nu0 * 2 * unit1_var + nu * v) / (nu0 + nu);
		q = s2 > 0 ? stats_t_cdf((mc - ma) / sqrt(s2 / n), nu0 + nu) : ma > mc ? 0 : 1;
		*p = q < *p ? q : *p;
		passed = q < bisect_pairs_boundary(n, last);
	}
	return passed;
}

struct row {
	double th, vr;  /* true effect in sd of the model's variance; true variance over the model's */
	double rho;     /* correlation of a pair's two runs */
	double th1;     /* the effect the test is sized for */
	int last;       /* the last look: twice the pairs a fixed test needs, 12 at least */
};

#define TRACE_LAST 18

/* The recorded traces: equal commits and a 7% culprit, on every window of an agent's runs. */
static void trace_rows(const char *dir)
{
	char **paths;
	int n = trace_list(&paths, dir);

	if (n < 0) {
		printf("# traces: %s\n", err_msg());
		return;
	}
	printf("\n# the recorded traces (%s): windows of %d runs of one agent, rounds of A B B A or B A A B\n"
	       "# (fixed: the order before 2026-12-06, A B A B then B A B A)\n"
	       "%-12s %-6s %8s   %-8s %6s %6s   %-8s %6s %6s   %-8s %6s %6s %9s\n", dir, 2 * TRACE_LAST, "trace",
	       "change", "windows", "bisectd", "pass", "pairs", "fixed", "pass", "pairs", "welch", "pass", "pairs",
	       "/bisectd");
	for (int f = 0; f < n; f++) {
		struct trace *tr;

		if (trace_load(&tr, paths[f]) < 0) {
			printf("# %s\n", err_msg());
			free(paths[f]);
			continue;
		}
		for (int e = 0; e < 2; e++) {
			double eff = e ? log(1.07) : 0, xa[2][TRACE_LAST], xc[2][TRACE_LAST], d[2][TRACE_LAST], p;
			double u = tr->task_noise * tr->task_noise;
			long wins = 0, pass[3] = { 0 }, pairs[3] = { 0 };
			struct rng rng;

			rng_seed(&rng, 0x5eed + (uint64_t)f);
			for (int a = 0; a < tr->nr_agents; a++)
				for (int s = 0; s + 2 * TRACE_LAST <= tr->n[a]; s++) {
					const double *v = tr->v[a] + s;
					int coin = 0;

					for (int i = 0; i < TRACE_LAST; i++) {
						/*
						 * Pair i is runs 2i and 2i+1. Drawn (o = 0): the parent
						 * first in a round's first pair and second in its other,
						 * or the reverse, by a coin a round. Fixed (o = 1): the
						 * parent first in even rounds of two pairs.
						 */
						if (i % 2 == 0)
							coin = (int)rng_below(&rng, 2);
						for (int o = 0; o < 2; o++) {
							int first_a = o ? (i / 2) % 2 == 0 : (i % 2 == 0) == coin;

							xa[o][i] = log(v[2 * i + !first_a]);
							xc[o][i] = log(v[2 * i + first_a]) - eff;
							d[o][i] = xa[o][i] - xc[o][i];
						}
					}
					wins++;
					for (int k = 0; k < 3; k++)
						for (int np = 4; np <= TRACE_LAST; np += 2) {
							int ok = k == 2 ? welch_pass(xa[0], xc[0], np, TRACE_LAST, u, &p)
								   : bisect_pairs_pass(&p, d[k], np, TRACE_LAST, u);

							if (ok || np == TRACE_LAST) {
								pass[k] += ok;
								pairs[k] += np;
								break;
							}
						}
				}
			if (wins)
				printf("%-12s %-6s %8ld   %-8s %6.4f %6.2f   %-8s %6.4f %6.2f   %-8s %6.4f %6.2f %9.2f\n",
				       tr->name, e ? "7%" : "none", wins, "", (double)pass[0] / wins,
				       (double)pairs[0] / wins, "", (double)pass[1] / wins, (double)pairs[1] / wins, "",
				       (double)pass[2] / wins, (double)pairs[2] / wins, (double)pairs[2] / (double)pairs[0]);
		}
		trace_free(tr);
		free(paths[f]);
	}
	free(paths);
}

int bench_pairs(int trials, uint64_t seed, const char *traces)
{
	static const struct row rows[] = {
		{ 0, 1, 0, 1.237, 18 }, { 0, 2, 0, 1.237, 18 }, { 0, 3, 0, 1.237, 18 }, { 0, 1, 0.5, 1.237, 18 },
		{ 0, 1, 0, 2.0, 12 }, { 0.6, 1, 0, 1.237, 18 }, { 0.9, 1, 0, 1.237, 18 }, { 1.237, 1, 0, 1.237, 18 },
		{ 1.237, 1, 0.5, 1.237, 18 }, { 2.0, 1, 0, 2.0, 12 },
	};
	double a[64], c[64], d[64], stop = log(1 / PAIRS_ALPHA);
	struct rng rng;

	rng_seed(&rng, seed);
	printf("# the confirmation's paired test on its own: %d sequences a row of normal pairs (seed %llu)\n",
	       trials, (unsigned long long)seed);
	printf("#   th: the true change in sd of a pair's difference (the model's); vr: the true variance over the\n"
	       "#   model's; rho: the correlation of a pair's two runs (a level they share); sized for: the effect\n"
	       "#   the test expects (7%%/4%% is 1.24); pass: the share that passed (at th 0 a false pass); pairs:\n"
	       "#   mean pairs taken; /bisectd: those pairs over bisectd's\n");
	printf("%-6s %-4s %-4s %-9s %-5s   %-8s %6s %6s   %-8s %6s %6s %9s   %-8s %6s %6s %9s   %-8s %6s %6s %9s\n",
	       "th", "vr", "rho", "sized for", "last", "bisectd", "pass", "pairs", "welch", "pass", "pairs", "/bisectd",
	       "seq-t", "pass", "pairs", "/bisectd", "bf-sprt", "pass", "pairs", "/bisectd");
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct row *w = &rows[r];
		long pass[4] = { 0 }, pairs[4] = { 0 };
		/* A run's sd, so that a difference has variance vr whatever rho. */
		double sd = sqrt(w->vr / (2 * (1 - w->rho)));

		for (int t = 0; t < trials; t++) {
			int done[4] = { 0 };
			double p;

			for (int i = 0; i < w->last; i++) {
				double shared = sqrt(w->rho) * rng_normal(&rng);

				a[i] = w->th + sd * (shared + sqrt(1 - w->rho) * rng_normal(&rng));
				c[i] = sd * (shared + sqrt(1 - w->rho) * rng_normal(&rng));
				d[i] = a[i] - c[i];
			}
			for (int n = BISECT_PAIRS_FIRST_LOOK; n <= w->last; n += 2) {
				/* The model's variance of a difference is 1: unit1_var 0.5. */
				int ok[4] = {
					bisect_pairs_pass(&p, d, n, w->last, 0.5),
					welch_pass(a, c, n, w->last, 0.5, &p),
					mix(seq_t_llr(d, n, w->th1), seq_t_llr(d, n, w->th1 / 2)) >= stop,
					mix(bf_llr(d, n, w->th1, 1, BISECT_PAIRS_PRIOR_DOF),
					    bf_llr(d, n, w->th1 / 2, 1, BISECT_PAIRS_PRIOR_DOF)) >= stop,
				};

				for (int k = 0; k < 4; k++)
					if (!done[k] && (ok[k] || n >= w->last)) {
						done[k] = 1;
						pass[k] += ok[k];
						pairs[k] += n;
					}
			}
		}
		printf("%-6.3g %-4.3g %-4.2g %-9.3g %-5d   %-8s %6.4f %6.2f", w->th, w->vr, w->rho, w->th1, w->last, "",
		       (double)pass[0] / trials, (double)pairs[0] / trials);
		for (int k = 1; k < 4; k++)
			printf("   %-8s %6.4f %6.2f %9.2f", "", (double)pass[k] / trials, (double)pairs[k] / trials,
			       (double)pairs[k] / (double)pairs[0]);
		printf("\n");
	}
	trace_rows(traces);
	return 0;
}
