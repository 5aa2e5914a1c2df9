/*
 * bisect: probabilistic bisection over a DAG with unknown means and sigma.
 *
 * For a culprit j, the measured commits split in two groups: those that
 * have j as an ancestor-or-self (bad) and the others (good). With flat
 * priors on the two means and Jeffreys' prior on a common sigma, the
 * marginal likelihood of the data given j is, up to a constant,
 *
 *     (n_G n_B)^(-1/2) SS(j)^(-(n - 2) / 2)
 *
 * where SS(j) is the within-group sum of squares. Runs that lie far from
 * both groups of the most probable split (a bimodal machine's slow runs)
 * are set aside, and the posterior is computed again without them. A
 * factor for "the bad group is the worse one" keeps splits that would
 * mean an improvement out. (Student-t weights fitted against the most
 * probable split were tried: they feed back and made 5% of the answers
 * wrong at 0.99 confidence.)
 *
 * Every measured commit keeps the bitset of its ancestors, so one update
 * costs O(measured x candidates / 64) words plus a pass over the
 * candidates: well under a second for a 15,000-commit merge window.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "err.h"
#include "stats.h"
#include "util.h"

#define FAR_SIGMAS 5.0     /* runs this far from both groups are set aside */
#define SLOW_MIN_SIGMAS 2.5 /* however many slow runs, one this close to its group is a normal run */
#define TOPLIST 16        /* the most probable commits are always looked at too */
#define SHORTLIST 12       /* exact ancestor masses computed per quantile target */
#define MIN_GAIN 1e-3      /* bits: below this nothing left is worth measuring */
#define CONFIRM_ROUNDS 5
#define CONFIRM_ALPHA 0.01 /* the rank test that stands in for the best runs (confirmed()) */
/* Drift scales averaged over (sd of the drift per run, in sigmas): none, one sigma over 200 runs, over 40. */
static const double drift_taus[] = { 0, 0.005, 0.025 };
#define NR_TAUS 3
#define STOP_MARGIN 0.75  /* search until the error left is this share of what the job allows */
#define REFRESH_RUNS 25   /* an end not measured for this many runs gets one more */
#define SPECULATE 0.5     /* with 3+ agents, confirm early from this posterior on */

struct cdata {
	double *x;          /* log values of successful runs, sign-flipped so lower is worse */
	double *t;          /* when each was taken: the engine's run counter */
	int nx, cap;
	int failures;
	int skipped;
	double *cx;         /* runs from interleaved confirmations (x) */
	int nconfirm;
	uint64_t *anc;      /* ancestors-or-self, once measured */
	double w_sum, s_sum, q_sum;  /* sufficient statistics of the runs kept */
	double t_sum, tt_sum, xt_sum;
};

struct bisect {
	int n;
	struct bisect_opts o;
	int **par;
	int *npar;
	size_t words;
	double *prior;
	double *logl;        /* scratch: log posterior, unnormalised */
	double *post;
	double *wb, *sb, *qb, *tb; /* per split: bad-group sums */
	struct cdata *c;
	int *measured;       /* commits with samples, in first-measured order */
	int nr_measured;
	uint64_t *scratch;   /* one bitset */

	enum bisect_state state;
	enum bisect_verdict verdict;
	int culprit, confirm_parent;
	int *set;
	int nr_set;
	double set_mass;
	double ends_change, ends_p;
	double mu_g, mu_b, sigma;  /* of the most probable split */
	double slow_rate, slow_depth; /* the lab's slow runs: how often, how deep (see slow_cut()) */
	int map;
	int outliers;
	long runs, builds;
	char why[256];
};

static int valid_value(double v)
{
	return isfinite(v) && v > 0;
}

int bisect_new(struct bisect **out, int n, int *const *parents, const int *nr_parents,
	       const struct bisect_opts *opts)
{
	struct bisect *b;

	*out = NULL;
	if (n < 2)
		return err_set(ERR_INVALID, "bisect: a job needs at least its two ends");
	for (int i = 0; i < n; i++)
		for (int j = 0; j < nr_parents[i]; j++)
			if (parents[i][j] < 0 || parents[i][j] >= i)
				return err_set(ERR_INVALID, "bisect: parent %d of commit %d is not before it",
					       parents[i][j], i);
	b = xcalloc(1, sizeof(*b));
	b->n = n;
	b->o = *opts;
	if (b->o.runs_min < 1)
		b->o.runs_min = 1;
	if (b->o.runs_max < b->o.runs_min)
		b->o.runs_max = b->o.runs_min;
	if (b->o.end_runs < 2)
		b->o.end_runs = 2;
	if (b->o.end_runs_max < b->o.end_runs)
		b->o.end_runs_max = b->o.end_runs;
	b->words = ((size_t)n + 63) / 64;
	b->par = xcalloc((size_t)n, sizeof(*b->par));
	b->npar = xcalloc((size_t)n, sizeof(int));
	for (int i = 0; i < n; i++) {
		b->npar[i] = nr_parents[i];
		b->par[i] = xmalloc(((size_t)nr_parents[i] + 1) * sizeof(int));
		if (nr_parents[i] > 0)
			memcpy(b->par[i], parents[i], (size_t)nr_parents[i] * sizeof(int));
	}
	b->prior = xmalloc((size_t)n * sizeof(double));
	for (int i = 0; i < n; i++)
		b->prior[i] = i == 0 ? 0 : 1;
	b->logl = xcalloc((size_t)n, sizeof(double));
	b->post = xcalloc((size_t)n, sizeof(double));
	b->wb = xcalloc((size_t)n, sizeof(double));
	b->sb = xcalloc((size_t)n, sizeof(double));
	b->qb = xcalloc((size_t)n, sizeof(double));
	b->tb = xcalloc((size_t)n, sizeof(double));
	b->c = xcalloc((size_t)n, sizeof(*b->c));
	b->measured = xcalloc((size_t)n, sizeof(int));
	b->set = xcalloc((size_t)n, sizeof(int));
	b->scratch = xcalloc(b->words, sizeof(uint64_t));
	for (int i = 1; i < n; i++)
		b->post[i] = 1.0 / (n - 1);
	b->state = BISECT_ENDS;
	b->culprit = -1;
	b->map = -1;
	b->ends_p = 1;
	snprintf(b->why, sizeof(b->why), "measuring both ends first");
	*out = b;
	return 0;
}

void bisect_free(struct bisect *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->n; i++) {
		free(b->par[i]);
		free(b->c[i].x);
		free(b->c[i].t);
		free(b->c[i].cx);
		free(b->c[i].anc);
	}
	free(b->par);
	free(b->npar);
	free(b->prior);
	free(b->logl);
	free(b->post);
	free(b->wb);
	free(b->sb);
	free(b->qb);
	free(b->tb);
	free(b->c);
	free(b->measured);
	free(b->set);
	free(b->scratch);
	free(b);
}

void bisect_weight_prior(struct bisect *b, int i, double w)
{
	if (i > 0 && i < b->n && w > 0 && isfinite(w))
		b->prior[i] *= w;
}

/* Ancestors-or-self of i into bits, by a walk over the parents. */
static void ancestors(const struct bisect *b, int i, uint64_t *bits)
{
	int *stack = xmalloc((size_t)b->n * sizeof(int)), top = 0;

	memset(bits, 0, b->words * sizeof(uint64_t));
	stack[top++] = i;
	bits[i / 64] |= 1ULL << (i % 64);
	while (top) {
		int v = stack[--top];

		if (v > 0 && b->npar[v] == 0 && !(bits[0] & 1)) {
			bits[0] |= 1;  /* the good end */
			stack[top++] = 0;
		}
		for (int k = 0; k < b->npar[v]; k++) {
			int p = b->par[v][k];

			if (!(bits[p / 64] >> (p % 64) & 1)) {
				bits[p / 64] |= 1ULL << (p % 64);
				stack[top++] = p;
			}
		}
	}
	free(stack);
}

static int has_bit(const uint64_t *bits, int i)
{
	return (bits[i / 64] >> (i % 64)) & 1;
}

void bisect_add_sample(struct bisect *b, int i, double value)
{
	struct cdata *c;

	if (i < 0 || i >= b->n)
		return;
	c = &b->c[i];
	b->runs++;
	if (c->nx + c->failures == 0)
		b->builds++;
	if (!valid_value(value)) {
		c->failures++;
		/* A commit that only ever fails cannot be measured. */
		if (c->nx == 0 && c->failures >= 3)
			c->skipped = 1;
		return;
	}
	if (!c->anc) {
		c->anc = xmalloc(b->words * sizeof(uint64_t));
		ancestors(b, i, c->anc);
		b->measured[b->nr_measured++] = i;
	}
	if (c->nx == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 8;
		c->x = xrealloc(c->x, (size_t)c->cap * sizeof(double));
		c->t = xrealloc(c->t, (size_t)c->cap * sizeof(double));
	}
	c->t[c->nx] = (double)b->runs;
	c->x[c->nx++] = b->o.higher_is_better ? log(value) : -log(value);
}

void bisect_add_run(struct bisect *b, int i, double value, long task, int agent, int kind)
{
	(void)task;
	(void)agent;
	if (kind == BISECT_Q_CONFIRM)
		bisect_add_confirm_sample(b, i, value);
	else
		bisect_add_sample(b, i, value);
}

void bisect_add_confirm_sample(struct bisect *b, int i, double value)
{
	bisect_add_sample(b, i, value);
	if (i >= 0 && i < b->n && valid_value(value)) {
		struct cdata *c = &b->c[i];

		c->cx = xrealloc(c->cx, (size_t)(c->nconfirm + 1) * sizeof(double));
		c->cx[c->nconfirm++] = c->x[c->nx - 1];
	}
}

void bisect_mark_skipped(struct bisect *b, int i)
{
	if (i >= 0 && i < b->n)
		b->c[i].skipped = 1;
}

void bisect_assume_reproduced(struct bisect *b)
{
	if (b->state == BISECT_ENDS)
		b->state = BISECT_SEARCH;
}

void bisect_set_costs(struct bisect *b, double build_cost, double run_cost)
{
	if (build_cost > 0)
		b->o.build_cost = build_cost;
	if (run_cost > 0)
		b->o.run_cost = run_cost;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_of(const double *x, int n)
{
	double *t = xmalloc((size_t)(n ? n : 1) * sizeof(double)), m;

	memcpy(t, x, (size_t)n * sizeof(double));
	qsort(t, (size_t)n, sizeof(double), cmp_dbl);
	m = n == 0 ? 0 : n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	free(t);
	return m;
}

/* ------------------------------------------------------------------ */
/* The ends */

/*
 * The runs of end i within 5 robust sigmas (1.4826 MAD) of its median, as
 * raw values into out; returns how many. A bimodal machine can put four
 * slow runs in twenty at one end, and a rank test loses its power to them.
 */
static int end_inliers(const struct bisect *b, int i, double *out)
{
	const struct cdata *c = &b->c[i];
	double *dev = xmalloc((size_t)(c->nx ? c->nx : 1) * sizeof(double));
	double med = median_of(c->x, c->nx), mad;
	int m = 0;

	for (int k = 0; k < c->nx; k++)
		dev[k] = fabs(c->x[k] - med);
	mad = 1.4826 * median_of(dev, c->nx);
	for (int k = 0; k < c->nx; k++)
		if (mad <= 0 || dev[k] <= 5 * mad)
			out[m++] = exp(b->o.higher_is_better ? c->x[k] : -c->x[k]);
	free(dev);
	return m;
}

/* Do the ends differ, in the worse direction, significantly and by enough? */
static int ends_differ(struct bisect *b)
{
	const struct cdata *g = &b->c[0], *x = &b->c[b->n - 1];
	double *vg = xmalloc((size_t)g->nx * sizeof(double) + 1), *vb = xmalloc((size_t)x->nx * sizeof(double) + 1);
	struct summary sg, sb;
	int ng = end_inliers(b, 0, vg), nb = end_inliers(b, b->n - 1, vb);
	double worse;

	stats_summary(&sg, vg, (size_t)ng);
	stats_summary(&sb, vb, (size_t)nb);
	b->ends_change = sg.hmean > 0 ? (sb.hmean - sg.hmean) / sg.hmean : 0;
	b->ends_p = stats_mann_whitney(vb, (size_t)nb, vg, (size_t)ng,
				       b->o.higher_is_better ? ALT_LESS : ALT_GREATER);
	free(vg);
	free(vb);
	/* The size of the effect from the medians: one slow run must not hide it or fake it. */
	worse = sg.median > 0 ? 1 - sb.median / sg.median : 0;
	if (!b->o.higher_is_better)
		worse = sg.median > 0 ? sb.median / sg.median - 1 : 0;
	return b->ends_p < b->o.alpha && worse >= b->o.min_effect;
}

/* ------------------------------------------------------------------ */
/* The posterior */

/* Sums of every commit's runs, leaving out (when sigma > 0) those far from both groups. */
static void commit_sums(struct bisect *b, double sigma)
{
	double lo = fmin(b->mu_g, b->mu_b) - FAR_SIGMAS * sigma;
	double hi = fmax(b->mu_g, b->mu_b) + FAR_SIGMAS * sigma;

	b->outliers = 0;
	for (int k = 0; k < b->nr_measured; k++) {
		struct cdata *c = &b->c[b->measured[k]];
		/*
		 * A commit with three runs or more also sets aside a run far from
		 * its own median: a slow run that lands near the other group
		 * would otherwise stay, and contradict the rest forever.
		 */
		double med = sigma > 0 && c->nx >= 3 ? median_of(c->x, c->nx) : 0;

		c->w_sum = c->s_sum = c->q_sum = c->t_sum = c->tt_sum = c->xt_sum = 0;
		for (int r = 0; r < c->nx; r++) {
			double x = c->x[r], t = c->t[r];

			if (sigma > 0 && (x < lo || x > hi || (c->nx >= 3 && fabs(x - med) > FAR_SIGMAS * sigma))) {
				b->outliers++;
				continue;
			}
			c->w_sum += 1;
			c->s_sum += x;
			c->q_sum += x * x;
			c->t_sum += t;
			c->tt_sum += t * t;
			c->xt_sum += x * t;
		}
	}
}

/*
 * Log marginal likelihood of every split into b->logl (and the posterior
 * into b->post); returns the most probable split.
 */
static int split_posterior(struct bisect *b)
{
	double wt = 0, st = 0, qt = 0, tt = 0, t2 = 0, xt = 0, tbar, TT, XT, best = -INFINITY, z = 0;
	int map = -1, drift = b->o.drift;

	memset(b->wb, 0, (size_t)b->n * sizeof(double));
	memset(b->sb, 0, (size_t)b->n * sizeof(double));
	memset(b->qb, 0, (size_t)b->n * sizeof(double));
	memset(b->tb, 0, (size_t)b->n * sizeof(double));
	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];

		wt += c->w_sum;
		st += c->s_sum;
		qt += c->q_sum;
		tt += c->t_sum;
		t2 += c->tt_sum;
		xt += c->xt_sum;
		if (c->w_sum == 0)
			continue;
		for (size_t w = 0; w < b->words; w++) {
			uint64_t bits = c->anc[w];

			while (bits) {
				int j = (int)(w * 64) + __builtin_ctzll(bits);

				bits &= bits - 1;
				b->wb[j] += c->w_sum;
				b->sb[j] += c->s_sum;
				b->qb[j] += c->q_sum;
				b->tb[j] += c->t_sum;
			}
		}
	}
	/* Time centred on the runs' mean, for the drift term. */
	tbar = wt > 0 ? tt / wt : 0;
	TT = t2 - wt * tbar * tbar;
	XT = xt - tbar * st;
	if (wt < 8 || TT <= 0)
		drift = 0;  /* too few runs to spend a degree of freedom on drift */
	for (int j = 1; j < b->n; j++) {
		double nb = b->wb[j], ng = wt - nb, ssb, ssg, ss0, mb, mg, se, l, v0, dof;

		if (b->prior[j] <= 0 || nb <= 0.5 || ng <= 0.5) {
			b->logl[j] = -INFINITY;
			continue;
		}
		mb = b->sb[j] / nb;
		mg = (st - b->sb[j]) / ng;
		ssb = b->qb[j] - b->sb[j] * mb;
		ssg = (qt - b->qb[j]) - (st - b->sb[j]) * mg;
		ss0 = fmax(ssb, 0) + fmax(ssg, 0);
		v0 = 1 / nb + 1 / ng;
		dof = wt - 2;
		/*
		 * A common linear drift over time: x = mu_group + beta t, with
		 * beta ~ N(0, (tau sigma)^2) per run. The prior is proper, so a
		 * history whose commits are measured in order (bisection does
		 * that) cannot pass its regression off as drift: the marginal gains
		 * (tau^2 D')^-1/2 with D' = D + 1/tau^2, and the residual loses
		 * beta^2 D' at beta's posterior mean. The drift's scale is not
		 * known either: the marginal is averaged over a few taus (tau 0 is
		 * no drift), each with an equal prior weight, so a steady lab pays
		 * almost nothing and a drifting one is followed.
		 */
		l = -INFINITY;
		for (int m = 0; m < (drift ? NR_TAUS : 1); m++) {
			double tau = drift_taus[m], lm = -0.5 * log(nb * ng), ss = ss0, diff = mg - mb, v = v0;

			if (tau > 0) {
				double TB = b->tb[j] - nb * tbar, D = TT - TB * TB * v0;
				double Dp = D + 1 / (tau * tau), beta = (XT - TB * (mb - mg)) / Dp;

				ss -= beta * beta * Dp;
				diff += beta * TB * v0;
				lm -= 0.5 * log(Dp * tau * tau);
				v += TB * TB * v0 * v0 / Dp;
			}
			ss = fmax(ss, 1e-300 + 1e-12 * wt);
			lm += -0.5 * dof * log(ss);
			/* The bad group must be the worse one: P(mu_B < mu_G | data). */
			se = sqrt(ss / fmax(dof, 1) * v);
			lm += log(fmax(0.5 * erfc(-diff / (se * M_SQRT2)), 1e-300));
			l = l > lm ? l + log1p(exp(lm - l)) : lm + (isfinite(l) ? log1p(exp(l - lm)) : 0);
		}
		l += log(b->prior[j]);
		b->logl[j] = l;
		if (l > best) {
			best = l;
			map = j;
		}
	}
	for (int j = 1; j < b->n; j++) {
		b->post[j] = isfinite(b->logl[j]) ? exp(b->logl[j] - best) : 0;
		z += b->post[j];
	}
	for (int j = 1; j < b->n; j++)
		b->post[j] = z > 0 ? b->post[j] / z : 1.0 / (b->n - 1);
	return map;
}

/* The means of the two groups of split j, over the runs kept. */
static void group_means(struct bisect *b, int j)
{
	double wt = 0, st = 0, sb = 0, nb = 0;

	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];

		wt += c->w_sum;
		st += c->s_sum;
		if (has_bit(c->anc, j)) {
			nb += c->w_sum;
			sb += c->s_sum;
		}
	}
	b->mu_b = nb > 0 ? sb / nb : 0;
	b->mu_g = wt - nb > 0 ? (st - sb) / (wt - nb) : 0;
}

/*
 * Slow runs (a bimodal machine: a few runs in a hundred some 25-40% slower)
 * as a Bernoulli mixture: a run is slow with probability eps, and a slow
 * run lies anywhere in a depth L below the worse group; otherwise it is a
 * normal run of its group. The runs beyond doubt slow, FAR_SIGMAS or more
 * below the worse group, estimate both: for a uniform depth they average
 * (FAR_SIGMAS + L) / 2 deep, and they are the share (L - FAR_SIGMAS) / L
 * of the slow runs. A lab that has shown none is taken to have none (eps
 * 0): a clean or a drifting lab keeps every run within FAR_SIGMAS.
 */
static void slow_model(struct bisect *b)
{
	double lo = fmin(b->mu_g, b->mu_b), far = FAR_SIGMAS * b->sigma, depth = 0;
	int m = 0, nf = 0;

	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];

		for (int r = 0; r < c->nx; r++, m++)
			if (c->x[r] < lo - far) {
				nf++;
				depth += lo - c->x[r];
			}
	}
	b->slow_rate = 0;
	b->slow_depth = 0;
	if (nf == 0)
		return;
	/* At least twice FAR_SIGMAS: a few slow runs just past it do not make eps explode. */
	b->slow_depth = fmax(2 * depth / nf - far, 2 * far);
	b->slow_rate = fmin((double)nf / m * b->slow_depth / (b->slow_depth - far), 0.5);
}

/*
 * Below this value a run is more likely one of the slow runs than a normal
 * run of the worse group: where eps / L > (1 - eps) phi(z) / sigma, z sigmas
 * below it. On a machine with 5% of runs slow that is about 3 sigmas,
 * against the FAR_SIGMAS that set runs aside without a model. The
 * confirmation uses it: there a handful of runs a side decide, and a slow
 * run of the parent 4 sigmas below the bad group (a 25% slow run at 7% /
 * 4%) outweighs them all, so that the true culprit fails round after round.
 * (The posterior keeps FAR_SIGMAS: where the slow runs are as deep as the
 * effect plus a few sigmas, at a CV of 13% for one, the cut would set aside
 * only true runs of the bad group, and the answers got worse.)
 */
static double slow_cut(const struct bisect *b)
{
	double eps = b->slow_rate, z = FAR_SIGMAS;

	if (eps > 0 && b->sigma > 0) {
		double r = (1 - eps) * b->slow_depth / (eps * b->sigma * sqrt(2 * M_PI));

		if (r > 1)
			z = fmin(sqrt(2 * log(r)), FAR_SIGMAS);
		z = fmax(z, SLOW_MIN_SIGMAS);
	}
	return fmin(b->mu_g, b->mu_b) - z * b->sigma;
}

/*
 * Fits the model: the posterior over all runs, then again without the runs
 * that lie far from both groups of the most probable split, with sigma
 * taken from the median absolute residual so those runs cannot inflate it.
 */
static void update_posterior(struct bisect *b)
{
	double *res, *gx, *bx;
	int map, m = 0, ng = 0, nb = 0;

	commit_sums(b, 0);
	map = split_posterior(b);
	if (map <= 0) {
		b->map = map;
		return;
	}
	for (int k = 0; k < b->nr_measured; k++)
		m += b->c[b->measured[k]].nx;
	res = xmalloc((size_t)(m ? m : 1) * sizeof(double));
	gx = xmalloc((size_t)(m ? m : 1) * sizeof(double));
	bx = xmalloc((size_t)(m ? m : 1) * sizeof(double));
	/* The groups' centres as medians: slow runs must not drag them, or sigma with them. */
	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];

		for (int r = 0; r < c->nx; r++) {
			if (has_bit(c->anc, map))
				bx[nb++] = c->x[r];
			else
				gx[ng++] = c->x[r];
		}
	}
	b->mu_g = median_of(gx, ng);
	b->mu_b = median_of(bx, nb);
	m = 0;
	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];
		double mu = has_bit(c->anc, map) ? b->mu_b : b->mu_g;

		for (int r = 0; r < c->nx; r++)
			res[m++] = fabs(c->x[r] - mu);
	}
	/* Sigma from the median absolute residual, so the runs to be set aside cannot inflate it. */
	b->sigma = 1.4826 * median_of(res, m);
	free(res);
	free(gx);
	free(bx);
	if (b->sigma > 0) {
		slow_model(b);
		commit_sums(b, b->sigma);
		if (b->outliers)
			map = split_posterior(b);
	}
	group_means(b, map);
	b->map = map;
}

/* ------------------------------------------------------------------ */
/* Choosing queries */

/* 24-point Gauss-Hermite rule for E[g(Z)], Z standard normal (numpy's hermegauss, normalised). */
static const double gh_x[24] = {
	-8.5078035191952566, -7.437890666021663, -6.5416750050986341, -5.7327471752512009,
	-4.9780413746391199, -4.2603836050199053, -3.5693067640735601, -2.8977286432233136,
	-2.2404678516917524, -1.5934804298164202, -0.95342192293210903, -0.31737009662945237,
	0.31737009662945237, 0.95342192293210903, 1.5934804298164202, 2.2404678516917524,
	2.8977286432233136, 3.5693067640735601, 4.2603836050199053, 4.9780413746391199,
	5.7327471752512009, 6.5416750050986341, 7.437890666021663, 8.5078035191952566,
};
static const double gh_w[24] = {
	9.3901936890420398e-17, 3.7149741527624003e-13, 1.7186649279648716e-10, 2.2674616734806501e-08,
	1.2176597454425883e-06, 3.2095005652746016e-05, 0.00046471871877939644, 0.0039766089291813069,
	0.021126344408967556, 0.072069364017178228, 0.16145951286700011, 0.2408701155466404,
	0.2408701155466404, 0.16145951286700011, 0.072069364017178228, 0.021126344408967556,
	0.0039766089291813069, 0.00046471871877939644, 3.2095005652746016e-05, 1.2176597454425883e-06,
	2.2674616734806501e-08, 1.7186649279648716e-10, 3.7149741527624003e-13, 9.3901936890420398e-17,
};

/*
 * Mutual information (bits) of one binary-input Gaussian use: P(bad) = p,
 * amplitude a (sigma 1). With y = +-a + z, the likelihood ratio of the
 * other input is exp(-2a(a + z)) for either input, so
 * I = -E[p log2(p + (1-p) e) + (1-p) log2(1-p + p e)], e = exp(-2a(a + z)).
 */
static double channel_info(double p, double a)
{
	double h = 0;

	if (p <= 1e-12 || p >= 1 - 1e-12 || a <= 0)
		return 0;
	for (int i = 0; i < 24; i++) {
		double e = exp(-2 * a * (a + gh_x[i]));

		h -= gh_w[i] * (p * log2(p + (1 - p) * e) + (1 - p) * log2(1 - p + p * e));
	}
	return h > 0 ? h : 0;
}

/* Posterior mass of the ancestors-or-self of q. */
static double anc_mass(struct bisect *b, int q)
{
	const uint64_t *bits = b->c[q].anc;
	double m = 0;

	if (!bits) {
		ancestors(b, q, b->scratch);
		bits = b->scratch;
	}
	for (size_t w = 0; w < b->words; w++) {
		uint64_t x = bits[w];

		while (x) {
			m += b->post[w * 64 + (size_t)__builtin_ctzll(x)];
			x &= x - 1;
		}
	}
	return m;
}

/* The effect in sigmas of the most probable split (at least a little, so a query is never worth nothing). */
static double effect_sigmas(const struct bisect *b)
{
	double d = b->sigma > 0 ? fabs(b->mu_g - b->mu_b) / b->sigma : 1;

	return fmax(d, 0.25);
}

/* The best batch size for a query at mass p: most bits per second. */
static void best_batch(const struct bisect *b, double p, int built, struct bisect_query *q)
{
	double s = effect_sigmas(b), best = -1;

	for (int r = b->o.runs_min; r <= b->o.runs_max; r++) {
		double gain = channel_info(p, sqrt((double)r) * s / 2);
		double cost = (built ? 0 : b->o.build_cost) + r * b->o.run_cost;

		if (gain / cost > best) {
			best = gain / cost;
			q->runs = r;
			q->gain = gain;
			q->cost = cost;
		}
	}
}

struct cand {
	int commit;
	double approx;   /* topological prefix mass: an upper bound of the ancestor mass */
};

static int choose_search(struct bisect *b, struct bisect_query *out, int k, const unsigned char *busy)
{
	struct cand *cs = xmalloc((size_t)b->n * sizeof(*cs));
	unsigned char *seen = xcalloc((size_t)b->n, 1), *taken = xcalloc((size_t)b->n, 1);
	struct bisect_query *ev = xmalloc(((size_t)k * (2 * SHORTLIST + 1) + TOPLIST) * sizeof(*ev));
	int top[TOPLIST], nt, nev = 0, nc = 0, got = 0;
	double prefix = 0, tp[TOPLIST];

	for (int i = 1; i < b->n; i++) {
		prefix += b->post[i];
		if (b->c[i].skipped || (busy && busy[i]))
			continue;
		cs[nc].commit = i;
		cs[nc].approx = prefix;
		nc++;
	}
	/*
	 * The commits worth an exact look: those around each quantile of the
	 * topological prefix mass (cs is sorted by it: it grows with the
	 * index), which is exact on a line and an upper bound on a DAG; and
	 * the most probable commits themselves, which on a DAG with merges
	 * may sit far from the prefix's quantiles.
	 */
	for (int t = 1; t <= k && nc > 0; t++) {
		double target = (double)t / (k + 1);
		int lo = 0, hi = nc;

		while (lo < hi) {
			int mid = (lo + hi) / 2;

			if (cs[mid].approx < target)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (int d = -SHORTLIST; d <= SHORTLIST; d++)
			if (lo + d >= 0 && lo + d < nc && !seen[cs[lo + d].commit]) {
				seen[cs[lo + d].commit] = 1;
				ev[nev++].commit = cs[lo + d].commit;
			}
	}
	nt = bisect_top(b, top, tp, TOPLIST);
	for (int i = 0; i < nt; i++)
		if (!seen[top[i]] && !b->c[top[i]].skipped && !(busy && busy[top[i]])) {
			seen[top[i]] = 1;
			ev[nev++].commit = top[i];
		}
	for (int i = 0; i < nev; i++) {
		int c = ev[i].commit;

		ev[i].mass = anc_mass(b, c);
		best_batch(b, ev[i].mass, b->c[c].nx + b->c[c].failures > 0, &ev[i]);
		ev[i].confirm = BISECT_Q_SEARCH;
	}
	for (int t = 1; t <= k; t++) {
		double target = (double)t / (k + 1), best_score = -1;
		int best = -1;

		for (int i = 0; i < nev; i++) {
			double score;

			if (taken[ev[i].commit])
				continue;
			/* With several agents, each takes the commits near its own quantile. */
			score = ev[i].gain / ev[i].cost * exp(-fabs(ev[i].mass - target) * (k > 1 ? 4.0 * (k + 1) : 0));
			if (score > best_score) {
				best_score = score;
				best = i;
			}
		}
		if (best < 0 || ev[best].gain < MIN_GAIN)
			continue;
		taken[ev[best].commit] = 1;
		out[got++] = ev[best];
	}
	free(ev);
	free(cs);
	free(seen);
	free(taken);
	return got;
}

static int cmp_by_post(const void *x, const void *y, void *arg)
{
	const double *post = arg;
	double a = post[*(const int *)x], b = post[*(const int *)y];

	return (a < b) - (a > b);
}

/* The smallest set of commits holding the confidence, most probable first. */
static void smallest_set(struct bisect *b)
{
	int m = 0;

	for (int i = 1; i < b->n; i++)
		if (b->post[i] > 0)
			b->set[m++] = i;
	qsort_r(b->set, (size_t)m, sizeof(int), cmp_by_post, b->post);
	b->nr_set = 0;
	b->set_mass = 0;
	while (b->set_mass < b->o.confidence && b->nr_set < m)
		b->set_mass += b->post[b->set[b->nr_set++]];
}

static int parent_of(const struct bisect *b, int i)
{
	return b->npar[i] ? b->par[i][0] : 0;
}

/* Runs the end i still needs: a first batch, then both level, a batch at a time. */
static int batch_for_ends(const struct bisect *b, int i)
{
	int n0 = b->c[0].nx, n1 = b->c[b->n - 1].nx, want = b->o.end_runs;

	if (n0 >= b->o.end_runs && n1 >= b->o.end_runs)
		want = (n0 < n1 ? n0 : n1) + b->o.end_runs;
	if (want > b->o.end_runs_max)
		want = b->o.end_runs_max;
	return want - b->c[i].nx;
}

static int finish(struct bisect *b, enum bisect_verdict v, const char *why)
{
	if (b->state != BISECT_ENDS)
		smallest_set(b);
	b->state = BISECT_DONE;
	b->verdict = v;
	snprintf(b->why, sizeof(b->why), "%s", why);
	return 0;
}

/*
 * Runs per commit in one round of confirmation: enough that the pair's
 * means show the direction (2 / effect^2 runs each, 1 to 4): the
 * posterior already holds the confidence, this guards against a model
 * that does not fit the lab.
 */
static int confirm_runs(const struct bisect *b)
{
	double s = effect_sigmas(b);
	int r = (int)ceil(2 / (s * s));

	/*
	 * A large effect needs one run to show, but a slow run looks just like
	 * it: two a side, so that one slow run cannot confirm a good commit.
	 */
	if (s >= 3)
		return 2;
	return r < 1 ? 1 : r > 4 ? 4 : r;
}

/*
 * Confirmation: does the change show, in the right direction, in the
 * interleaved runs of parent and culprit? Everything about it is derived
 * from the runs tagged as confirmation, so an engine rebuilt from stored
 * samples is in the same place.
 */
static double inlier_mean(const struct bisect *b, const double *x, int n)
{
	double lo = slow_cut(b), hi = fmax(b->mu_g, b->mu_b) + FAR_SIGMAS * b->sigma;
	double sum = 0;
	int m = 0;

	for (int i = 0; i < n; i++)
		if (b->sigma <= 0 || (x[i] >= lo && x[i] <= hi)) {
			sum += x[i];
			m++;
		}
	return m ? sum / m : NAN;
}

/* Do the parent's runs rank above the culprit's (x: higher is better), at CONFIRM_ALPHA? */
static int ranks_show_change(const double *px, int np, const double *cx, int nc)
{
	/* The test counts values <= 0 as failed runs: ranks are those of exp(x). */
	double *a = xmalloc((size_t)(np + 1) * sizeof(double)), *c = xmalloc((size_t)(nc + 1) * sizeof(double));
	double p;

	for (int i = 0; i < np; i++)
		a[i] = exp(px[i]);
	for (int i = 0; i < nc; i++)
		c[i] = exp(cx[i]);
	p = stats_mann_whitney(a, (size_t)np, c, (size_t)nc, ALT_GREATER);
	free(a);
	free(c);
	return p < CONFIRM_ALPHA;
}

static int confirmed(const struct bisect *b, int parent, int culprit)
{
	const struct cdata *p = &b->c[parent], *c = &b->c[culprit];
	double mp = inlier_mean(b, p->cx, p->nconfirm), mc = inlier_mean(b, c->cx, c->nconfirm);

	/*
	 * Runs far from both groups do not count, here as in the posterior,
	 * and below the groups neither do those more likely slow than normal
	 * (slow_cut()): a mean of two or three runs cannot carry one slow run.
	 * Where the effect is large (3 sigmas or more) a slow run looks just
	 * like the other group and the posterior takes it at its word: there
	 * the pair must show at least half the effect, not merely its
	 * direction (two good commits pass a direction test half the time), on
	 * each side's best run, or a rank test must.
	 */
	if (!isfinite(mp) || !isfinite(mc))
		return 0;
	if (effect_sigmas(b) >= 3) {
		double pmax = -INFINITY, cmax = -INFINITY;

		/*
		 * Slow runs only ever lower a value (x is flipped so that worse is
		 * lower whatever the metric): the best run of each side is the
		 * one a slow run cannot fake, so those are compared.
		 */
		for (int i = 0; i < p->nconfirm; i++)
			pmax = fmax(pmax, p->cx[i]);
		for (int i = 0; i < c->nconfirm; i++)
			cmax = fmax(cmax, c->cx[i]);
		if (pmax - cmax > 0.5 * (b->mu_g - b->mu_b))
			return 1;
		/*
		 * A maximum only grows: one good-looking run of the culprit, with
		 * an effect the groups overstate (sigma is estimated low in just
		 * the trials that reach the confidence early), failed the true
		 * culprit for all five rounds, however clear its other runs. So
		 * once there are enough runs a side, a one-sided Mann-Whitney test
		 * at CONFIRM_ALPHA may confirm instead: a minority of slow runs
		 * cannot carry it, as they carry a mean.
		 */
		return ranks_show_change(p->cx, p->nconfirm, c->cx, c->nconfirm);
	}
	return mp > mc;
}

/* Queries for what the current round still needs: parent, then culprit (a pair for one agent). */
static int confirm_queries(struct bisect *b, struct bisect_query *out)
{
	int pair[2] = { b->confirm_parent, b->culprit }, r = confirm_runs(b), got = 0;
	int rounds = (b->c[pair[0]].nconfirm < b->c[pair[1]].nconfirm ? b->c[pair[0]].nconfirm :
		      b->c[pair[1]].nconfirm) / r;

	for (int e = 0; e < 2; e++) {
		int need = (rounds + 1) * r - b->c[pair[e]].nconfirm;

		if (need > 0)
			out[got++] = (struct bisect_query){ pair[e], need, BISECT_Q_CONFIRM,
							    anc_mass(b, pair[e]), 0, 0 };
	}
	snprintf(b->why, sizeof(b->why), "commit %d holds %.4f: confirming against its parent %d with "
		 "interleaved runs (round %d)", b->culprit, b->post[b->culprit], b->confirm_parent, rounds + 1);
	return got;
}

/* Removes the query with the least information per second from out[0..got); returns got - 1. */
static int drop_least(struct bisect_query *out, int got)
{
	int least = got - 1;

	for (int i = 0; i < got - 1; i++)
		if (out[i].gain * out[least].cost < out[least].gain * out[i].cost)
			least = i;
	memmove(&out[least], &out[least + 1], (size_t)(got - 1 - least) * sizeof(*out));
	return got - 1;
}

/* When commit i was last measured (the run counter), -1 when never. */
static double last_run(const struct bisect *b, int i)
{
	return b->c[i].nx ? b->c[i].t[b->c[i].nx - 1] : -1;
}

static int budget_spent(const struct bisect *b)
{
	return (b->o.budget_runs > 0 && b->runs >= b->o.budget_runs) ||
	       (b->o.budget_builds > 0 && b->builds >= b->o.budget_builds);
}

static double best_post(const struct bisect *b, int *at)
{
	double best = -1;

	*at = -1;
	for (int i = 1; i < b->n; i++)
		if (b->post[i] > best) {
			best = b->post[i];
			*at = i;
		}
	return best;
}

/*
 * The most probable commit holds enough of the posterior: confirm it
 * against its parent with interleaved runs, or report it once they show
 * the change.
 */
static int confirm_step(struct bisect *b, struct bisect_query *out, const unsigned char *busy, int top, double p_top)
{
	int parent = parent_of(b, top), r = confirm_runs(b);
	const struct cdata *cp = &b->c[parent], *cc = &b->c[top];

	b->culprit = top;
	b->confirm_parent = parent;
	if (cc->skipped || cp->skipped) {
		char why[160];

		snprintf(why, sizeof(why), "commit %d holds %.4f but it or its parent cannot be measured",
			 top, p_top);
		return finish(b, VERDICT_RANGE, why);
	}
	if (busy && (busy[top] || busy[parent]))
		return 0;
	if (cp->nconfirm >= r && cc->nconfirm >= r) {
		char why[200];

		if (confirmed(b, parent, top)) {
			snprintf(why, sizeof(why), "commit %d holds %.4f of the posterior, and the interleaved "
				 "runs against its parent show the change", top, p_top);
			return finish(b, VERDICT_CULPRIT, why);
		}
		if ((cp->nconfirm < cc->nconfirm ? cp->nconfirm : cc->nconfirm) >= CONFIRM_ROUNDS * r) {
			snprintf(why, sizeof(why), "commit %d holds %.4f, but %d rounds of interleaved runs "
				 "against its parent do not show the change", top, p_top, CONFIRM_ROUNDS);
			return finish(b, VERDICT_RANGE, why);
		}
	}
	b->state = BISECT_CONFIRM;
	return confirm_queries(b, out);
}

int bisect_next(struct bisect *b, struct bisect_query *out, int k, const unsigned char *busy)
{
	int got = 0, top;
	double p_top;

	if (b->state == BISECT_DONE || k <= 0)
		return 0;
	if (b->state == BISECT_ENDS) {
		int ends[2] = { 0, b->n - 1 };

		if (b->c[0].skipped || b->c[b->n - 1].skipped)
			return finish(b, VERDICT_NONE, b->c[0].skipped ? "the good end could not be measured"
				      : "the bad end could not be measured");
		if ((busy && (busy[0] || busy[b->n - 1])))
			return 0;
		if (b->c[0].nx >= b->o.end_runs && b->c[b->n - 1].nx >= b->o.end_runs) {
			if (ends_differ(b)) {
				b->state = BISECT_SEARCH;
				snprintf(b->why, sizeof(b->why), "the bad end is %.2f%% worse (p=%.4f): searching",
					 100 * fabs(b->ends_change), b->ends_p);
			} else if (b->c[0].nx >= b->o.end_runs_max && b->c[b->n - 1].nx >= b->o.end_runs_max) {
				char why[160];

				snprintf(why, sizeof(why), "the ends differ by %+.2f%% (p=%.4f): not a regression "
					 "at alpha %.3g and %.1f%%", 100 * b->ends_change, b->ends_p, b->o.alpha,
					 100 * b->o.min_effect);
				return finish(b, VERDICT_NOT_REPRODUCED, why);
			}
		}
		if (b->state == BISECT_ENDS) {
			for (int e = 0; e < 2 && got < k; e++) {
				int r = batch_for_ends(b, ends[e]);

				if (r > 0)
					out[got++] = (struct bisect_query){ ends[e], r, 0, e ? 1.0 : 0.0, 0, 0 };
			}
			if (got == 0) /* both at the maximum and still unclear: handled above */
				return finish(b, VERDICT_NOT_REPRODUCED, "the ends do not differ");
			/*
			 * Agents beyond the two ends do not wait: they measure the
			 * quantiles of the prior, which the search needs first if the
			 * ends differ (and which are wasted if they do not).
			 */
			if (k > got && b->c[0].nx + b->c[b->n - 1].nx == 0) {
				unsigned char *busy2 = xcalloc((size_t)b->n, 1);

				busy2[0] = busy2[b->n - 1] = 1;
				for (int i = 0; busy && i < b->n; i++)
					busy2[i] |= busy[i];
				got += choose_search(b, out + got, k - got, busy2);
				free(busy2);
			}
			if (b->c[0].nx > 0)
				snprintf(b->why, sizeof(b->why), "the ends differ by %+.2f%% (p=%.4f): more runs at "
					 "both", 100 * b->ends_change, b->ends_p);
			return got;
		}
	}

	if (b->ends_p >= 1 && b->c[0].nx > 0 && b->c[b->n - 1].nx > 0)
		ends_differ(b);  /* the numbers for the report, when the ends phase was taken as done */
	update_posterior(b);
	p_top = best_post(b, &top);

	if (budget_spent(b)) {
		b->culprit = top;
		return finish(b, VERDICT_RANGE, "the budget is spent: the answer is the smallest set holding "
			      "the confidence");
	}
	/*
	 * Stop at half the error the job allows: the posterior is calibrated
	 * only as far as the model fits the lab, and the last halving costs
	 * about one bit, a run or two.
	 */
	if (p_top >= 1 - (1 - b->o.confidence) * STOP_MARGIN)
		return confirm_step(b, out, busy, top, p_top);
	b->state = BISECT_SEARCH;
	b->culprit = -1;
	/*
	 * With three agents or more, measure the likely culprit and its parent
	 * as a pair, interleaved, while the others search: those runs are
	 * informative either way. They are not the confirmation: that takes
	 * runs asked for once the posterior holds the confidence, or a pair
	 * measured early, when the posterior was far from it, would confirm
	 * at once with no new evidence. (Counted as the confirmation, they
	 * named a good neighbour of the culprit in 1.0% of the trials at
	 * N = 16384, 7% / 4%, 4 agents, against none with 1 agent.)
	 */
	if (k >= 3 && p_top >= SPECULATE && !(busy && (busy[top] || busy[parent_of(b, top)])) &&
	    !b->c[top].skipped && !b->c[parent_of(b, top)].skipped) {
		int nc;

		b->culprit = top;
		b->confirm_parent = parent_of(b, top);
		nc = confirm_queries(b, out);
		b->culprit = -1;
		for (int i = 0; i < nc; i++)
			out[i].confirm = BISECT_Q_EARLY;
		if (nc > 0) {
			unsigned char *busy2 = xcalloc((size_t)b->n, 1);

			for (int i = 0; i < b->n; i++)
				busy2[i] = busy && busy[i];
			for (int i = 0; i < nc; i++)
				busy2[out[i].commit] = 1;
			got = nc + choose_search(b, out + nc, k - nc, busy2);
			free(busy2);
			snprintf(b->why, sizeof(b->why), "best commit %d at %.4f: measuring it and its parent early "
				 "on two agents, searching on %d", top, p_top, got - nc);
			return got;
		}
	}
	got = choose_search(b, out, k, busy);
	if (got == 0) {
		int pending = 0;

		for (int i = 0; busy && i < b->n; i++)
			pending += busy[i];
		if (pending)
			return 0;
		/* Nothing left to learn and the job's confidence is reached: confirm. */
		if (p_top >= b->o.confidence)
			return confirm_step(b, out, busy, top, p_top);
		b->culprit = top;
		return finish(b, VERDICT_RANGE, "nothing measurable separates the most probable commits "
			      "(skipped neighbours)");
	}
	/*
	 * Keep the ends level with the commits that were measured most
	 * (estimates stall otherwise), with any number of agents: with k of
	 * them all searching, the ends would keep their first batch for the
	 * whole job, and with a few slow runs among it the groups' estimates
	 * can hold the posterior between two wrong places until the budget is
	 * spent. The end takes the place of the query worth least.
	 */
	{
		/* Counted in runs kept: an end's slow runs do not anchor its group. */
		double most = 0;
		int e = b->c[0].w_sum <= b->c[b->n - 1].w_sum ? 0 : b->n - 1;

		for (int i = 0; i < b->nr_measured; i++)
			if (b->measured[i] != 0 && b->measured[i] != b->n - 1 && b->c[b->measured[i]].w_sum > most)
				most = b->c[b->measured[i]].w_sum;
		if (most >= 6 && most > 2 * b->c[e].w_sum && !(busy && busy[e])) {
			if (got == k)
				got = drop_least(out, got);
			out[got++] = (struct bisect_query){ e, b->o.end_runs, 0, e ? 1.0 : 0.0, 0, 0 };
		} else {
			/*
			 * An end not measured for a long while gets one run: the ends
			 * are the only commits whose group is certain, so their fresh
			 * runs tell drift apart from regression. With any number of
			 * agents: when k of them searched with one run a commit, the
			 * ends kept their first runs, and on a drifting lab the
			 * posterior never settled (at N = 16384, 7% / 4%, four
			 * agents, 4 of 500 trials ran out of budget with the best
			 * commit at 0.0005; none with the refresh).
			 */
			int stale = last_run(b, 0) <= last_run(b, b->n - 1) ? 0 : b->n - 1;

			if (b->runs - last_run(b, stale) >= REFRESH_RUNS && !(busy && busy[stale])) {
				if (got == k)
					got = drop_least(out, got);
				out[got++] = (struct bisect_query){ stale, 1, 0, stale ? 1.0 : 0.0, 0, 0 };
			}
		}
	}
	snprintf(b->why, sizeof(b->why), "best commit %d at %.4f; measuring %d commit%s, the first at %.2f "
		 "of the mass", top, p_top, got, got > 1 ? "s" : "", out[0].mass);
	return got;
}

void bisect_result(const struct bisect *b, struct bisect_result *r)
{
	int top;

	memset(r, 0, sizeof(*r));
	r->state = b->state;
	r->verdict = b->verdict;
	r->confidence = best_post(b, &top);
	r->culprit = b->culprit >= 0 ? b->culprit : (b->state == BISECT_ENDS ? -1 : top);
	if (r->culprit >= 0)
		r->confidence = b->post[r->culprit];
	r->set = b->set;
	r->nr_set = b->nr_set;
	r->set_mass = b->set_mass;
	r->ends_change = b->ends_change;
	r->ends_p = b->ends_p;
	r->runs = b->runs;
	r->builds = b->builds;
	r->outliers = b->outliers;
	r->why = b->why;
	r->budget_runs = b->o.budget_runs > 0 ? b->o.budget_runs : 0;
	r->more_runs = -1;
	r->failed_confirm = -1;
}

double bisect_bad_mass(struct bisect *b, int i)
{
	return i >= 0 && i < b->n ? anc_mass(b, i) : 0;
}

int bisect_skipped(const struct bisect *b, int i)
{
	return i >= 0 && i < b->n && b->c[i].skipped;
}

double bisect_posterior(const struct bisect *b, int i)
{
	return i > 0 && i < b->n ? b->post[i] : 0;
}

int bisect_top(const struct bisect *b, int *idx, double *p, int k)
{
	int m = 0;

	for (int i = 1; i < b->n; i++) {
		int at;

		if (m == k && b->post[i] <= p[m - 1])
			continue;
		at = m < k ? m++ : m - 1;
		while (at > 0 && p[at - 1] < b->post[i]) {
			idx[at] = idx[at - 1];
			p[at] = p[at - 1];
			at--;
		}
		idx[at] = i;
		p[at] = b->post[i];
	}
	return m;
}
