/*
 * bisect_budget: the job's derived budget of runs, from the range and
 * the noise seen, and the estimate of how many more would decide it.
 */
#include "bisect_internal.h"

/* Bits per run of the best search query at the effect and noise seen. */
static double bits_per_run(const struct bisect *b)
{
	struct bisect_query q;

	bisect_best_batch(&q, b, 0.5, 1, 0);
	return q.gain / q.runs;
}

/*
 * Bits per run taken: bits_per_run() is that of the runs kept, and runs
 * set aside (a hog's slow ones) carry none, so it is scaled by the share
 * of the runs kept, down to BUDGET_KEPT_MIN.
 */
static double bits_per_run_taken(const struct bisect *b)
{
	long all = 0;

	/*
	 * On the share of slow runs, a run's bits at the ends' shares, which
	 * set the mode: the most probable split's can near each other where
	 * the search finds nothing, and the budget would grow without bound.
	 */
	if (b->rate)
		return bisect_rate_info(0.5, 1, b->rate_eg, b->rate_eb);
	for (int k = 0; k < b->nr_measured; k++)
		all += b->c[b->measured[k]].nx;
	return bits_per_run(b) * fmax(all > 0 ? 1 - (double)b->outliers / (double)all : 1, BUDGET_KEPT_MIN);
}

/*
 * The runs budget: the job's, or BUDGET_FACTOR times what locating the
 * culprit and its confidence takes at the effect and per-task noise seen
 * (log2 of the candidates plus log2 of 1 / (1 - confidence) bits, at the
 * best query's bits per run taken), plus the ends' runs and a whole
 * confirmation (both its looks). (At the bits per run kept, jobs under a
 * hog switched between the agents' cores set aside a third of their runs
 * and used up to three quarters of a budget made for the quiet runs
 * alone.)
 */
void bisect_set_budget(struct bisect *b)
{
	double bits = log2((double)(b->n - 1)) + log2(1 / (1 - b->o.confidence)), need;

	if (b->o.budget_runs != 0) {
		b->budget = b->o.budget_runs > 0 ? b->o.budget_runs : 0;
		return;
	}
	need = BUDGET_FACTOR * bits / bits_per_run_taken(b) + 2 * bisect_confirm_last(b) + 2 * b->o.end_runs_max;
	b->budget = need < BUDGET_MIN ? BUDGET_MIN : need > BUDGET_MAX ? BUDGET_MAX : (long)ceil(need);
}

/* About how many more runs would decide it: the posterior's entropy and the confidence, at bits_per_run_taken(). */
void bisect_estimate_more(struct bisect *b)
{
	double h = 0;

	for (int i = 1; i < b->n; i++)
		if (b->post[i] > 0)
			h -= b->post[i] * log2(b->post[i]);
	b->more_runs = -1;
	/* An effect not even 2 sd from nothing: no number of runs at this noise can be promised. */
	if (b->map <= 0 || fabs(b->delta) < 2 * b->delta_sd)
		return;
	b->more_runs = (long)ceil((h + log2(1 / (1 - b->o.confidence))) / bits_per_run_taken(b)) +
		       2 * bisect_pairs_needed(b);
}

/* The z whose upper tail of the standard normal is p (0 < p < 0.5), by bisection. */
static double z_upper(double p)
{
	double lo = 0, hi = 40;

	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;

		if (stats_normal_cdf(-mid) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/*
 * At the ends: about how many more runs there would decide them (the sd
 * shrinks as the square root of the runs). A shift seen beyond min_effect
 * the worse way: shown at the job's alpha, -1 when it is not even one sd
 * from nothing. Any other: the bad end shown not worse by min_effect at
 * the job's confidence, as bisect_ends_test() does, from the shift's
 * distance to that bound (ends neither apart nor equal on a noisy lab
 * read "no estimate" before, though their runs would tell). Both ends'
 * runs together.
 */
long bisect_ends_more_runs(const struct bisect *b)
{
	double z = 2.326, gap = fabs(b->delta), m = bisect_min_shift(b), ratio;
	long have = b->c[0].nx + b->c[b->n - 1].nx;

	if (!(b->delta_sd > 0))
		return -1;
	if (b->delta > m) {
		z = z_upper((1 - b->o.confidence) / 2);
		gap = b->delta - m;
	} else if (gap < b->delta_sd) {
		return -1;
	}
	ratio = z * b->delta_sd / gap;
	return ratio * ratio > 1 ? (long)ceil(have * (ratio * ratio - 1)) : 2 * b->o.end_runs;
}

int bisect_budget_spent(const struct bisect *b)
{
	return (b->budget > 0 && b->runs >= b->budget) ||
	       (b->o.budget_builds > 0 && b->builds >= b->o.budget_builds);
}
