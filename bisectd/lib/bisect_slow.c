/*
 * bisect_slow: runs in two modes. The tests that tell a bad end whose
 * runs show two modes, and a change in the share of slow runs (a
 * regression that shows in some runs), which the job then bisects as a share.
 */
#include "bisect_internal.h"

/*
 * Each of c's runs less its agent's mean into res (room for c->nx), for
 * the agents with two runs or more; unless all, the runs far from the
 * commit's centre are left out where they are a few (bisect_kept_runs() at sigma
 * < 0: a hog's or a bimodal machine's slow runs). Returns how many; *dof:
 * their degrees of freedom, one less an agent. level, unless NULL
 * (AGENT_SLOTS of them): each agent's mean of those runs, the pooled
 * mean where it has none.
 */
static int agent_resids(const struct bisect *b, const struct cdata *c, int all, double *res, int *dof,
			double *level)
{
	double sum[AGENT_SLOTS] = { 0 }, pooled = 0;
	int n[AGENT_SLOTS] = { 0 }, m = 0, na = 0, nk = 0;
	unsigned char *keep = xmalloc((size_t)c->nx + 1);

	if (all || bisect_kept_runs(keep, b, c, -1))
		memset(keep, 1, (size_t)c->nx);  /* in two levels: a fifth or more set aside is a mode, not a few */
	for (int r = 0; r < c->nx; r++)
		if (keep[r]) {
			int a = b->tasks[c->task[r]].agent;

			n[a]++;
			sum[a] += c->x[r];
		}
	for (int r = 0; r < c->nx; r++) {
		int a = b->tasks[c->task[r]].agent;

		if (keep[r] && n[a] >= 2)
			res[m++] = c->x[r] - sum[a] / n[a];
	}
	for (int a = 0; a < AGENT_SLOTS; a++) {
		na += n[a] >= 2;
		pooled += sum[a];
		nk += n[a];
	}
	if (level)
		for (int a = 0; a < AGENT_SLOTS; a++)
			level[a] = n[a] ? sum[a] / n[a] : nk ? pooled / nk : 0;
	free(keep);
	*dof = m - na;
	return m;
}

/*
 * Is a commit measured at both groups' levels: a run within a quarter of
 * their gap of the better and one of the worse, the groups LEVELS_APART
 * sigmas apart or more? A commit of one level does that once in 10^5
 * runs or less; a change that shows in some runs only (an intermittent
 * culprit, and every commit after it) does it in most commits measured
 * three times. Then a handful of pairs can be all of one kind by chance:
 * two commits both slow in half their runs, the parent's runs fast and
 * the other's slow four times in a row.
 *
 * Or any commit, good or bad, with two runs or more near each level, the
 * groups MIXED_TWICE_APART sigmas apart or more: a lab whose runs fall in
 * modes as far apart as the change. One level does that once in a
 * thousand commits measured twelve times (a run 2.6 sigmas off toward the
 * other level, 0.0043, twice). Beside a kernel build the kernel lab's
 * guest drops 35-40% every few runs (kbuild-guest.trace), the change
 * there is 40%, and the groups lie about 4 of the model's sigmas apart,
 * whose sigma takes in some of the modes' spread: a good commit with half
 * its runs low, against its good parent, passed the paired t test at 12
 * pairs (p = 0.0052) and was named at 0.9958 (test_recorded_modes_job).
 */
int bisect_levels_mixed(struct bisect *b)
{
	const struct cdata *g = &b->c[0];
	double lo = fmin(b->mu_g, b->mu_b), hi = fmax(b->mu_g, b->mu_b), gap = hi - lo, sd = b->sigma;
	int wide;

	/*
	 * The sigmas are the good end's own where it has runs enough and they
	 * are the tighter: where most commits after the culprit measure at
	 * both levels the model's sigma takes in the gap between them (a CV of
	 * 1% read as 4%, the levels 2.5 sigmas apart). Its upper 99% bound
	 * (chi-square, Wilson-Hilferty): its median absolute deviation, on ten
	 * runs at a CV of 4%, put a 12% change 6 of its sigmas apart and
	 * commits of one level in both.
	 */
	if (g->nx >= UPPER_MIN_RUNS) {
		/* Each agent's runs about their own mean: the agents' levels need no estimate. */
		double *res = xmalloc(((size_t)g->nx + 1) * sizeof(double)), ss = 0, k;
		int dof, m = agent_resids(b, g, 1, res, &dof, NULL);

		for (int i = 0; i < m; i++)
			ss += res[i] * res[i];
		free(res);
		k = dof;

		if (k >= UPPER_MIN_RUNS - 2) {
			double h = 2 / (9 * k), chi = k * pow(1 - h - 2.326 * sqrt(h), 3);

			sd = fmin(sd, sqrt(ss / chi));
		}
	}
	if (b->map <= 0 || !(sd > 0) || gap < MIXED_TWICE_APART * sd)
		return 0;
	wide = gap >= LEVELS_APART * sd;
	for (int k = 0; k < b->nr_measured; k++) {
		int i = b->measured[k], near[2] = { 0, 0 };
		const struct cdata *c = &b->c[i];

		for (int r = 0; r < c->nx; r++) {
			double x = ax(b, c, r);

			near[0] += fabs(x - lo) < gap / 4;
			near[1] += fabs(x - hi) < gap / 4;
		}
		if (!near[0] || !near[1])
			continue;
		/* Two runs near each level, or one where the groups are wide apart and the commit likely bad. */
		if ((near[0] >= 2 && near[1] >= 2) || (wide && (i == b->n - 1 || bisect_anc_mass(b, i) >= MIXED_BAD)))
			return 1;
	}
	return 0;
}

/*
 * Is the bad end's spread beyond the good end's: Levene's test, Welch's t
 * of the runs' distances from their agent's mean, one-sided, at
 * NOISIER_P? A change that shows in some runs only spreads them: half the
 * runs 24% slower at a CV of 4% put them 12% from the mean where the good
 * end's are 3%. (An F test of the variances holds its error only for
 * normal runs. Brown and Forsythe's distances from the median are robust
 * to a skewed end, but in two modes of about equal size the median falls
 * in one of them and half the distances are small: in the simulator's
 * intermittent cells 48 wrong answers at 0.99 or more, 38 with the mean.
 * The few runs that would skew it, a hog's, bisect_kept_runs() leaves out.)
 */
int bisect_bad_end_noisier(const struct bisect *b)
{
	const struct cdata *g = &b->c[0], *x = &b->c[b->n - 1];
	double *dg = xmalloc(((size_t)g->nx + 1) * sizeof(double)), *dx = xmalloc(((size_t)x->nx + 1) * sizeof(double));
	int dof, ng = agent_resids(b, g, 0, dg, &dof, NULL), nx = agent_resids(b, x, 0, dx, &dof, NULL), noisier = 0;

	if (ng > NOISIER_DOF && nx > NOISIER_DOF) {
		struct stats_test t;

		/*
		 * The distances, plus one: stats_welch_t_test() keeps values
		 * above 0 only, and a run at its agent's mean can be 0 from it;
		 * a shift common to both changes neither t nor its degrees of
		 * freedom.
		 */
		for (int i = 0; i < ng; i++)
			dg[i] = fabs(dg[i]) + 1;
		for (int i = 0; i < nx; i++)
			dx[i] = fabs(dx[i]) + 1;
		stats_welch_t_test(&t, dx, (size_t)nx, dg, (size_t)ng, ALT_GREATER);
		noisier = t.p < NOISIER_P;
	}
	free(dg);
	free(dx);
	return noisier;
}

static double lchoose(int n, int k)
{
	return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}

/* Fisher's exact test, one-sided: P(X >= x), X the slow runs of n drawn from N runs of which K are slow. */
static double fisher_upper(int x, int n, int K, int N)
{
	double p = 0, all = lchoose(N, n);

	for (int i = x; i <= n && i <= K; i++)
		if (n - i <= N - K)
			p += exp(lchoose(K, i) + lchoose(N - K, n - i) - all);
	return fmin(p, 1);
}

/*
 * Do the bad end's runs lie in two modes, one at the good end's level?
 * Its runs against each agent's mean at the good end, sorted and split
 * in a lower group of two runs or more and an upper one whose mean lies
 * within RATE_NEAR_SIGMAS standard errors of the good level, the two
 * MODES_APART sds apart (the sd pooled over the good end's runs about
 * their agents' means and each group's about its own), and the lower
 * group's share of the bad end above the good end's share of runs as
 * low (Fisher's exact test at MODES_SHARE_P: a lab's slow spells fall
 * on both ends). Returns 1, or 2 where the good end's runs have fewer
 * than UPPER_MIN_RUNS - 2 degrees of freedom: there one level's bad end
 * does it now and then (12 looks in 800 jobs at N = 1024, 7% / 4%, on
 * five runs an end and two agents or more), and bisect_next() measures
 * the ends on before it is read. (With more, 16 looks in those jobs.)
 *
 * An intermittent culprit 24% slower in half its runs at a CV of 4%
 * (6.9 sds) does it in most jobs, where bisect_levels_mixed(), on an upper
 * bound of the good end's sd, and bisect_bad_end_noisier() at NOISIER_P see it
 * in few: its slow mode lies nearer than FAR_SIGMAS for bisect_rate_mode(), a
 * model of two levels reads its runs at the good level as a lab's, and
 * two commits after it, each slow in half their runs, passed the paired
 * t test on 4-14 pairs (19 of the intermittent cells' 4,290 answers at
 * 0.999 or more, N = 64 and 1024, 7-30% at CVs of 4 and 13%).
 */
int bisect_bad_end_two_modes(const struct bisect *b)
{
	const struct cdata *g = &b->c[0], *x = &b->c[b->n - 1];
	double level[AGENT_SLOTS], ss = 0, *v, *rg;
	int dof, ng, modes = 0;

	if (g->nx < 3 || x->nx < 3)
		return 0;
	rg = xmalloc((size_t)g->nx * sizeof(double));
	ng = agent_resids(b, g, 0, rg, &dof, level);
	for (int i = 0; i < ng; i++)
		ss += rg[i] * rg[i];
	free(rg);
	v = xmalloc((size_t)x->nx * sizeof(double));
	/* The bad end's runs against their agents' means at the good end (the pooled mean where none). */
	for (int r = 0; r < x->nx; r++)
		v[r] = x->x[r] - level[b->tasks[x->task[r]].agent];
	qsort(v, (size_t)x->nx, sizeof(double), cmp_dbl);
	for (int k = 2; k < x->nx && dof > 0 && !modes; k++) {
		double lo = 0, hi = 0, s2 = ss, sp, cut;
		int low_g = 0;

		for (int i = 0; i < x->nx; i++)
			*(i < k ? &lo : &hi) += v[i];
		lo /= k;
		hi /= x->nx - k;
		for (int i = 0; i < x->nx; i++)
			s2 += (v[i] - (i < k ? lo : hi)) * (v[i] - (i < k ? lo : hi));
		sp = sqrt(s2 / (dof + x->nx - 2));
		if (!(sp > 0) || hi - lo < MODES_APART * sp || fabs(hi) > RATE_NEAR_SIGMAS * sp / sqrt(x->nx - k))
			continue;
		cut = (lo + hi) / 2;
		for (int r = 0; r < g->nx; r++)
			low_g += g->x[r] - level[b->tasks[g->task[r]].agent] < cut;
		modes = fisher_upper(k, x->nx, k + low_g, x->nx + g->nx) < MODES_SHARE_P;
	}
	free(v);
	return modes && dof < UPPER_MIN_RUNS - 2 ? 2 : modes;
}

/* How far run r of commit c lies below its agent's level at the good end (bisect_rate_mode()). */
static double rate_below(const struct bisect *b, const struct cdata *c, int r)
{
	return b->rate_lvl[b->tasks[c->task[r]].agent] - c->x[r];
}

/* Whether run r of commit c is slow: below its agent's level by rate_depth or more. */
int bisect_rate_slow(const struct bisect *b, const struct cdata *c, int r)
{
	return rate_below(b, c, r) > b->rate_depth;
}

/*
 * Is the change in some runs only, far below the rest: an intermittent
 * culprit whose slow mode lies beyond FAR_SIGMAS, whose slow runs the
 * outlier rules set aside as a lab's, so that what is left of a bad
 * commit measures good (bisect_change_set_aside() ended such jobs undecided)?
 * Then the job bisects on the share of slow runs instead of the level.
 *
 * Decided from the two ends' runs alone, so that every step of a job (a
 * clone, a restart from the store) takes the same mode on the same runs:
 * each agent's level is the centre of its runs at the good end that a
 * slow mode does not move (bisect_upper_centre(); pooled where it has fewer than
 * two), the noise s the median absolute deviation of those runs from
 * their levels. The bad end's runs beyond FAR_SIGMAS * s below their
 * level are its far runs; a run is slow below its level by half their
 * median depth (at least RATE_MIN_SIGMAS * s): midway between the modes.
 * The mode holds where
 *  - the bad end has three far runs or more, few runs of the ends lie as
 *    far above their level, and the runs lie in two modes with a gap
 *    between (below);
 *  - its share of slow runs is above the good end's (Fisher's exact test,
 *    one-sided, at (1 - confidence) / 2; the ends are measured in
 *    interleaved chains, so a lab's slow spells fall on both);
 *  - each end has RATE_MIN_FAST runs that are not slow, and the bad end's
 *    are not shown apart from the good end's by more than half of
 *    min_effect, either way, at RATE_STEADY_P (Welch): a steady change
 *    beside a lab's slow runs keeps the model of two levels, which sees
 *    it. With fewer, b->rate_maybe asks for more runs at the ends.
 * The effect (b->delta) is then the ends' difference over all their runs.
 */
int bisect_rate_mode(struct bisect *b)
{
	const struct cdata *e[2] = { &b->c[0], &b->c[b->n - 1] };
	double *v, *res[2], *fast[2], s, far, alpha = (1 - b->o.confidence) / 2, m[2], se[2];
	int nf[2] = { 0, 0 }, slow[2] = { 0, 0 }, nv, nfar, above = 0, mode = 0;
	int cap = e[0]->nx > e[1]->nx ? e[0]->nx : e[1]->nx;
	struct stats_test t;

	b->rate = b->rate_maybe = 0;
	if (e[0]->nx < RATE_MIN_RUNS || e[1]->nx < RATE_MIN_RUNS)
		return 0;
	v = xmalloc((size_t)cap * sizeof(double));
	for (int a = -1; a < AGENT_SLOTS; a++) {
		nv = 0;
		for (int r = 0; r < e[0]->nx; r++)
			if (a < 0 || b->tasks[e[0]->task[r]].agent == a)
				v[nv++] = e[0]->x[r];
		if (a < 0)
			for (int i = 0; i < AGENT_SLOTS; i++)
				b->rate_lvl[i] = bisect_upper_centre(v, nv);
		else if (nv >= 2)
			b->rate_lvl[a] = bisect_upper_centre(v, nv);
	}
	for (int r = 0; r < e[0]->nx; r++)
		v[r] = fabs(rate_below(b, e[0], r));
	s = 1.4826 * bisect_median(v, e[0]->nx);
	far = FAR_SIGMAS * s;
	nv = 0;
	for (int i = 0; i < 2; i++)
		for (int r = 0; r < e[i]->nx; r++) {
			double depth = rate_below(b, e[i], r);

			if (depth < -far)
				above++;
			else if (i && depth > far)
				v[nv++] = depth;
		}
	/*
	 * Runs far above an agent's level: its level is a slow one (a hog
	 * through all of its good-end runs), unless they are a lab's few.
	 */
	nfar = above > RATE_ABOVE_MOST && above * 20 > e[0]->nx + e[1]->nx ? 0 : nv;
	b->rate_depth = b->rate_band = 0;
	if (nfar >= 3 && s > 0) {
		/*
		 * Two modes, not one wide spread: the far runs' band (their
		 * median depth less RATE_GAP of their spread or s, the wider)
		 * lies RATE_GAP s and s more below the level, and a tenth of
		 * the ends' runs at most fall between (on the local lab a hog
		 * that came on mid-run put 6% there). A steady change at a
		 * noisier bad end (a CV twice the good end's), or a lab whose
		 * level moved, spreads its runs over the gap instead.
		 */
		double d = bisect_median(v, nv), w, lo = RATE_GAP * s, hi;
		int between = 0;

		for (int i = 0; i < nv; i++)
			v[i] = fabs(v[i] - d);
		w = fmax(1.4826 * bisect_median(v, nv), s);
		hi = d - RATE_GAP * w;
		for (int i = 0; i < 2; i++)
			for (int r = 0; r < e[i]->nx; r++)
				between += rate_below(b, e[i], r) > lo && rate_below(b, e[i], r) < hi;
		if (hi - lo >= s && between * RATE_BETWEEN_SHARE <= e[0]->nx + e[1]->nx) {
			b->rate_depth = fmax(d / 2, RATE_MIN_SIGMAS * s);
			b->rate_band = hi;
		}
	}
	free(v);
	if (b->rate_band <= 0)
		return 0;
	/*
	 * Each end's runs against their agents' levels, and those not slow,
	 * shifted above 0 for stats_welch_t_test() (which keeps values above 0
	 * only; a run not slow lies less than rate_depth below its level).
	 */
	for (int i = 0; i < 2; i++) {
		res[i] = xmalloc((size_t)e[i]->nx * sizeof(double));
		fast[i] = xmalloc((size_t)e[i]->nx * sizeof(double));
		for (int r = 0; r < e[i]->nx; r++) {
			res[i][r] = -rate_below(b, e[i], r);
			if (bisect_rate_slow(b, e[i], r))
				slow[i]++;
			else
				fast[i][nf[i]++] = res[i][r] + b->rate_depth + 1;
		}
	}
	if (fisher_upper(slow[1], e[1]->nx, slow[0] + slow[1], e[0]->nx + e[1]->nx) > alpha)
		goto out;
	/*
	 * Too few runs of the bad end at the good level to test for a
	 * steady change beside the slow runs: its ends are measured on
	 * (bisect_next()) where two of them lie within RATE_NEAR_SIGMAS of
	 * it, which a steady change FAR_SIGMAS deep does once in 10^5 jobs.
	 */
	if (nf[0] < RATE_MIN_FAST || nf[1] < RATE_MIN_FAST) {
		int near = 0;

		for (int r = 0; r < e[1]->nx; r++)
			near += fabs(res[1][r]) < RATE_NEAR_SIGMAS * s;
		b->rate_maybe = near >= 2;
		goto out;
	}
	/*
	 * The bad end's other runs shown worse or better than the good end's
	 * by more than half of min_effect: a steady change, which the model
	 * of two levels bisects. Shown apart by any amount, a job on 60 runs
	 * an end left the mode for a shift of +1.6% at a min_effect of 3%
	 * (the fast runs' mean 3.4 standard errors above the good end's, by
	 * chance), and bisect_change_set_aside() then ended it undecided, 32
	 * of the bad end's 60 runs slow and none of the good end's. Welch's t
	 * against a null shifted by h is t + h / se: one test, read twice.
	 */
	{
		double half = log1p(b->o.min_effect) / 2;

		stats_welch_t_test(&t, fast[1], (size_t)nf[1], fast[0], (size_t)nf[0], ALT_LESS);
		if (isnan(t.stat) || stats_t_cdf(t.stat + half / t.se, t.df) < RATE_STEADY_P ||
		    stats_t_cdf(-(t.stat - half / t.se), t.df) < RATE_STEADY_P)
			goto out;
	}
	b->rate = mode = 1;
	b->rate_eg = (slow[0] + RATE_PRIOR) / (e[0]->nx + 2 * RATE_PRIOR);
	b->rate_eb = (slow[1] + RATE_PRIOR) / (e[1]->nx + 2 * RATE_PRIOR);
	/* The effect over all the ends' runs, slow and fast: what the change costs on average. */
	for (int i = 0; i < 2; i++)
		mean_se(res[i], e[i]->nx, &m[i], &se[i]);
	b->delta = m[1] - m[0];
	b->delta_sd = sqrt(se[0] * se[0] + se[1] * se[1]);
out:
	for (int i = 0; i < 2; i++) {
		free(res[i]);
		free(fast[i]);
	}
	return mode;
}

/*
 * Whether commit i's slow runs lie in the slow mode's band (their median
 * depth below their agents' levels at least rate_band): a commit whose
 * runs merely spread wider than its parent's (a CV twice the lab's) has
 * more runs past the cut, but they lie near it, not at the slow mode, and
 * a sign test of the pairs would read that as the change.
 */
int bisect_rate_in_band(const struct bisect *b, int i)
{
	const struct cdata *c = &b->c[i];
	double *v = xmalloc(((size_t)c->nx + 1) * sizeof(double)), d;
	int n = 0;

	for (int r = 0; r < c->nx; r++)
		if (bisect_rate_slow(b, c, r))
			v[n++] = rate_below(b, c, r);
	d = n ? bisect_median(v, n) : 0;
	free(v);
	return n > 0 && d >= b->rate_band;
}

/* log P(qb > qg) for the groups' shares of slow runs, their Beta posteriors taken as normal. */
static double rate_order(double sb, double nb, double sg, double ng)
{
	double mb = (sb + RATE_PRIOR) / (nb + 2 * RATE_PRIOR), mg = (sg + RATE_PRIOR) / (ng + 2 * RATE_PRIOR);
	double v = mb * (1 - mb) / (nb + 2 * RATE_PRIOR + 1) + mg * (1 - mg) / (ng + 2 * RATE_PRIOR + 1);

	return log(fmax(0.5 * erfc(-(mb - mg) / sqrt(2 * v)), 1e-300));
}

/*
 * The posterior over splits on the runs' shares of slow runs: each
 * group's share has Jeffreys' prior and is integrated out (a Beta-binomial
 * marginal), the bad group's the larger. Every run counts, the ends' and
 * the confirmation's too. Leaves b->map and the groups' shares there.
 */
void bisect_rate_posterior(struct bisect *b)
{
	int *s = xcalloc((size_t)b->nr_measured, sizeof(int)), S = 0, N = 0, map = -1;
	double best = -INFINITY, z = 0;

	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];

		for (int r = 0; r < c->nx; r++)
			s[k] += bisect_rate_slow(b, c, r);
		S += s[k];
		N += c->nx;
	}
	for (int j = 1; j < b->n; j++) {
		int sb = 0, nb = 0;
		double l;

		b->logl[j] = -INFINITY;
		if (b->prior[j] <= 0)
			continue;
		for (int k = 0; k < b->nr_measured; k++)
			if (has_anc(&b->c[b->measured[k]], j)) {
				sb += s[k];
				nb += b->c[b->measured[k]].nx;
			}
		if (nb == 0 || nb == N)
			continue;
		l = lgamma(sb + RATE_PRIOR) + lgamma(nb - sb + RATE_PRIOR) - lgamma(nb + 2 * RATE_PRIOR) +
		    lgamma(S - sb + RATE_PRIOR) + lgamma(N - nb - (S - sb) + RATE_PRIOR) - lgamma(N - nb + 2 * RATE_PRIOR) -
		    rate_order(sb, nb, S - sb, N - nb) + log(b->prior[j]);  /* up to a constant every split shares */
		b->logl[j] = l;
		if (l > best) {
			best = l;
			map = j;
			b->rate_b = (sb + RATE_PRIOR) / (nb + 2 * RATE_PRIOR);
			b->rate_g = (S - sb + RATE_PRIOR) / (N - nb + 2 * RATE_PRIOR);
		}
	}
	for (int j = 1; j < b->n; j++) {
		b->post[j] = isfinite(b->logl[j]) && isfinite(best) ? exp(b->logl[j] - best) : 0;
		z += b->post[j];
	}
	for (int j = 1; j < b->n; j++)
		b->post[j] = z > 0 ? b->post[j] / z : 1.0 / (b->n - 1);
	b->map = map;
	free(s);
}

/* Bits of r runs at a commit bad with probability p, each slow with probability qb if bad, qg if good. */
double bisect_rate_info(double p, int r, double qg, double qb)
{
	double h = 0, hb = 0, hg = 0;

	if (p <= 1e-12 || p >= 1 - 1e-12)
		return 0;
	for (int k = 0; k <= r; k++) {
		double c = exp(lchoose(r, k)), fb = c * pow(qb, k) * pow(1 - qb, r - k), fg = c * pow(qg, k) * pow(1 - qg, r - k);
		double f = p * fb + (1 - p) * fg;

		h -= f > 0 ? f * log2(f) : 0;
		hb -= fb > 0 ? fb * log2(fb) : 0;
		hg -= fg > 0 ? fg * log2(fg) : 0;
	}
	h -= p * hb + (1 - p) * hg;
	return h > 0 ? h : 0;
}
