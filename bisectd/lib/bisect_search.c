/*
 * bisect_search: what to measure next. The information a run at each
 * commit carries, and the batch that buys the most of it per second.
 */
#include "bisect_internal.h"

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

/* The effect in sigmas of the most probable split (at least a little, so a query is never worth nothing). */
static double effect_sigmas(const struct bisect *b)
{
	double d = b->sigma > 0 ? fabs(b->mu_g - b->mu_b) / b->sigma : 1;

	return fmax(d, 0.25);
}

/*
 * The effect in sigmas of r more runs of a unit that has n0 already (0: a
 * new unit): the runs of a unit share its level, so the between-unit part
 * of the noise (lambda times the within-unit variance) does not average
 * out however many runs it has, and runs that extend a unit add only what
 * its mean's precision gains, 1 / (lambda + 1 / (n0 + r)) less 1 / (lambda
 * + 1 / n0). Until some unit has two runs, the within-unit noise is not
 * known apart and runs count as independent.
 *
 * For runs that extend a unit, lambda is taken as LAMBDA_EXTEND at least.
 * Lambda cannot be told from the noise until several units have runs of
 * their own (one-run units give only their sum), and a search that
 * trusted a small one piled runs into one unit, ten or twenty in a row at
 * 7% / 4%, while its mean could not tell the groups apart under the
 * larger lambdas the posterior still held. The recorded traces have 0.4
 * (kbuild) to 2.4 (bursts) and more; a quiet lab pays only for the order
 * in which its commits are measured.
 */
#define LAMBDA_EXTEND 0.5

double bisect_task_sigmas(const struct bisect *b, int r, int n0)
{
	double eff = b->map > 0 ? fabs(b->mu_g - b->mu_b) : fabs(b->delta);
	double lam = n0 > 0 ? fmax(b->lambda, LAMBDA_EXTEND) : b->lambda;
	double gain = 1 / (lam + 1.0 / (n0 + r)) - (n0 > 0 ? 1 / (lam + 1.0 / n0) : 0);

	if (b->scale2 <= 0)
		return effect_sigmas(b) * sqrt(n0 > 0 ? gain : (double)r);
	return fmax(eff * sqrt(gain / b->scale2), 0.25);
}

/*
 * The best batch size for a query at mass p: most bits per second. n0 is
 * the size of the unit the runs would extend (the last runs the lab took
 * were at this commit), 0 when they start one.
 */
void bisect_best_batch(struct bisect_query *q, const struct bisect *b, double p, int built, int n0)
{
	double best = -1;

	for (int r = b->o.runs_min; r <= b->o.runs_max; r++) {
		double gain = b->rate ? bisect_rate_info(p, r, b->rate_g, b->rate_b)
				       : channel_info(p, bisect_task_sigmas(b, r, n0) / 2);
		double cost = (built ? 0 : b->o.build_cost) + r * b->o.run_cost;

		if (gain / cost > best) {
			best = gain / cost;
			q->runs = r;
			q->gain = gain;
			q->cost = cost;
		}
	}
}

/*
 * The runs of the unit a search query at commit c would extend: on one
 * agent, the lab's last runs when they were a search's at c (with more
 * agents the next run at c is another agent's, or not next); else 0.
 */
static int extends_unit(const struct bisect *b, int c, int k)
{
	const struct task *u;

	if (k != 1 || b->last_commit != c)
		return 0;
	u = &b->tasks[b->last_unit];
	return u->kind == BISECT_Q_SEARCH ? u->n : 0;
}

struct cand {
	int commit;
	double approx;   /* topological prefix mass: an upper bound of the ancestor mass */
};

int bisect_choose_search(struct bisect_query *out, struct bisect *b, int k, const unsigned char *busy)
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
	nt = bisect_top(top, tp, b, TOPLIST);
	for (int i = 0; i < nt; i++)
		if (!seen[top[i]] && !b->c[top[i]].skipped && !(busy && busy[top[i]])) {
			seen[top[i]] = 1;
			ev[nev++].commit = top[i];
		}
	for (int i = 0; i < nev; i++) {
		int c = ev[i].commit;

		ev[i].mass = bisect_anc_mass(b, c);
		bisect_best_batch(&ev[i], b, ev[i].mass, b->c[c].nx + b->c[c].failures > 0, extends_unit(b, c, k));
		ev[i].confirm = BISECT_Q_SEARCH;
		ev[i].chain = 0;
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
