/*
 * bisect_model: the engine's model of the runs. A task's runs share a
 * level, each agent has its own, and the lab may drift; from them the
 * marginal likelihood of every split, the posterior over culprits, the
 * fit of the most probable split (levels, noise, shift, the slow runs' cut).
 */
#include "bisect_internal.h"

/* Drift scales averaged over (sd of the drift per run, in task sigmas): none, one over 200 runs, over 40. */
static const double drift_taus[] = { 0, 0.005, 0.025 };
#define NR_TAUS 3
/*
 * The ratio lambda = (between-task variance) / (within-task variance)
 * is not known: the marginal is averaged over these, with equal prior
 * weight. 0 is the independent-runs model; at 20 a task's runs say
 * little more than one of them.
 */
static const double lambdas[] = { 0, 0.5, 3, 20 };

/* Ancestors-or-self of i into bits, by a walk over the parents. */
void bisect_ancestors(uint64_t *bits, const struct bisect *b, int i)
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

double bisect_median(const double *x, int n)
{
	double *t = xmalloc((size_t)(n ? n : 1) * sizeof(double)), m;

	memcpy(t, x, (size_t)n * sizeof(double));
	qsort(t, (size_t)n, sizeof(double), cmp_dbl);
	m = n == 0 ? 0 : n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	free(t);
	return m;
}

/* The robust sd of x[0..n) about med: 1.4826 times the median absolute deviation. */
double bisect_robust_sd(const double *x, int n, double med)
{
	double *dev = xmalloc((size_t)(n ? n : 1) * sizeof(double)), s;

	for (int i = 0; i < n; i++)
		dev[i] = fabs(x[i] - med);
	s = 1.4826 * bisect_median(dev, n);
	free(dev);
	return s;
}

/*
 * The centre of x[0..n) where its lower part may be a slow mode (runs are
 * logs, worse is lower, and load only makes runs worse): a CPU hog on an
 * agent's core halves its runs for seconds at a time, a third to a half
 * of an agent's runs in a minute on the local lab. The median of the runs
 * above a fence set from the upper quantiles alone, q75 - (z75 +
 * FAR_SIGMAS) s with s = (q90 - q75) / (z90 - z75), which stands while
 * under about 70% of the runs are slow; where there is no slow mode the
 * fence keeps every run and this is their median. (The median alone fell
 * between the two speeds where an agent's runs were near half slow.)
 */

double bisect_upper_centre(const double *x, int n)
{
	double *t, m, fence, h75 = 0.75 * (n - 1), h90 = 0.90 * (n - 1), q75, q90;
	int i0 = 0, a = (int)h75, c = (int)h90, k;

	if (n < UPPER_MIN_RUNS)
		return bisect_median(x, n);
	t = xmalloc((size_t)n * sizeof(double));
	memcpy(t, x, (size_t)n * sizeof(double));
	qsort(t, (size_t)n, sizeof(double), cmp_dbl);
	q75 = t[a] + (h75 - a) * (t[a + 1] - t[a]);
	q90 = t[c] + (h90 - c) * (t[c + 1 < n ? c + 1 : c] - t[c]);
	fence = q75 - (0.6745 + FAR_SIGMAS) * (q90 - q75) / 0.6071;
	while (t[i0] < fence)
		i0++;
	/* t[i0..n) is sorted already: its median without bisect_median()'s copy and sort. */
	k = n - i0;
	m = k % 2 ? t[i0 + k / 2] : (t[i0 + k / 2 - 1] + t[i0 + k / 2]) / 2;
	free(t);
	return m;
}

/*
 * Each agent's level against the others: the centre (bisect_upper_centre()) of
 * its runs' residuals from their group's centre (map > 0: the groups of
 * split map; else the two ends, each its own group), the groups' centres
 * taken again with the agents' levels out, OFFSET_ROUNDS times: an agent
 * that measured one group more than the others then does not pull that
 * group's centre to its own level. Without it a slower agent's runs lie
 * far from a group the other agent's runs make, and the rules below set
 * them aside: at the ends of a job on the local lab, with a CPU hog
 * halving one agent, each end kept only one agent's runs, and a 15%
 * regression came out as a 70% improvement, "shown" not to be a
 * regression.
 */
/* The group of commit i for bisect_agent_offsets(): 1 bad, 0 good, -1 neither (not an end, with no split). */
static int offset_group(const struct bisect *b, int i, int map)
{
	if (map > 0)
		return has_bit(b->c[i].anc, map);
	return i == b->n - 1 ? 1 : i == 0 ? 0 : -1;
}

void bisect_agent_offsets(struct bisect *b, int map)
{
	int m = 0;
	double *gx, *bx, *res, med[2];

	memset(b->off, 0, sizeof(b->off));
	b->off_map = map;
	if (b->nr_slots < 2)
		return;
	for (int k = 0; k < b->nr_measured; k++)
		m += b->c[b->measured[k]].nx;
	gx = xmalloc((size_t)(m + 1) * sizeof(double));
	bx = xmalloc((size_t)(m + 1) * sizeof(double));
	res = xmalloc((size_t)(m + 1) * sizeof(double));
	for (int it = 0; it < OFFSET_ROUNDS; it++) {
		double off[AGENT_SLOTS] = { 0 };
		int ng = 0, nb = 0;

		for (int k = 0; k < b->nr_measured; k++) {
			const struct cdata *c = &b->c[b->measured[k]];
			int g = offset_group(b, b->measured[k], map);

			for (int r = 0; g >= 0 && r < c->nx; r++) {
				if (g)
					bx[nb++] = ax(b, c, r);
				else
					gx[ng++] = ax(b, c, r);
			}
		}
		med[0] = bisect_upper_centre(gx, ng);
		med[1] = bisect_upper_centre(bx, nb);
		for (int a = 0; a < b->nr_slots; a++) {
			int n = 0;

			for (int k = 0; k < b->nr_measured; k++) {
				const struct cdata *c = &b->c[b->measured[k]];
				int g = offset_group(b, b->measured[k], map);

				for (int r = 0; g >= 0 && r < c->nx; r++)
					if (b->tasks[c->task[r]].agent == a)
						res[n++] = c->x[r] - med[g];
			}
			off[a] = bisect_upper_centre(res, n);
		}
		memcpy(b->off, off, sizeof(off));
	}
	free(gx);
	free(bx);
	free(res);
}

/* Runs per agent slot, over every measured commit. */
static void slot_runs(int *n, const struct bisect *b)
{
	memset(n, 0, AGENT_SLOTS * sizeof(*n));
	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];

		for (int r = 0; r < c->nx; r++)
			n[b->tasks[c->task[r]].agent]++;
	}
}

static int reference_slot(const struct bisect *b)
{
	int n[AGENT_SLOTS], ref = 0, with = 0;

	slot_runs(n, b);
	for (int a = 0; a < b->nr_slots; a++) {
		with += n[a] > 0;
		if (n[a] > n[ref] || (n[a] == n[ref] && b->agent_id[a] < b->agent_id[ref]))
			ref = a;
	}
	return with < 2 ? -1 : ref;
}

long long bisect_reference_agent(const struct bisect *b)
{
	int ref = reference_slot(b);

	return ref < 0 ? -1 : b->agent_id[ref];
}

/* A difference of two agents' runs at one commit, and its weight. */
struct shared {
	double d, w;
};

static int cmp_shared(const void *a, const void *b)
{
	const struct shared *x = a, *y = b;

	return x->d < y->d ? -1 : x->d > y->d;
}

/*
 * Slot a's level against slot ref (log units, worse is lower) from the
 * commits both measured: at each, the median of a's runs less the median
 * of ref's, weighted n_a n_ref / (n_a + n_ref); their weighted median.
 * One commit is one code, so no change enters it, whatever the split.
 * NAN where the two share no commit.
 */
static double shared_level(const struct bisect *b, int a, int ref)
{
	struct shared *sh = xmalloc(((size_t)b->nr_measured + 1) * sizeof(*sh));
	double total = 0, acc = 0, level = NAN;
	int nsh = 0;

	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];
		double *xa = xmalloc(((size_t)c->nx + 1) * sizeof(double)), *xr = xmalloc(((size_t)c->nx + 1) * sizeof(double));
		int na = 0, nr = 0;

		for (int r = 0; r < c->nx; r++) {
			int slot = b->tasks[c->task[r]].agent;

			if (slot == a)
				xa[na++] = c->x[r];
			else if (slot == ref)
				xr[nr++] = c->x[r];
		}
		if (na && nr) {
			sh[nsh].d = bisect_median(xa, na) - bisect_median(xr, nr);
			sh[nsh].w = (double)na * nr / (na + nr);
			total += sh[nsh++].w;
		}
		free(xa);
		free(xr);
	}
	qsort(sh, (size_t)nsh, sizeof(*sh), cmp_shared);
	for (int i = 0; i < nsh && isnan(level); i++)
		if ((acc += sh[i].w) >= total / 2)
			level = sh[i].d;
	free(sh);
	return level;
}

/*
 * 1 when slots a and ref both have runs on one side of the split the
 * offsets were taken against (the ends, before there is one): only then
 * do the offsets say how the two compare; an agent that ran only good
 * commits and one that ran only bad ones differ by the change as much
 * as by their levels.
 */
static int share_group(const struct bisect *b, int a, int ref)
{
	int seen[2][2] = { { 0 } };

	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];
		int g = offset_group(b, b->measured[k], b->off_map);

		for (int r = 0; g >= 0 && r < c->nx; r++) {
			int slot = b->tasks[c->task[r]].agent;

			seen[g][0] |= slot == a;
			seen[g][1] |= slot == ref;
		}
	}
	return (seen[0][0] && seen[0][1]) || (seen[1][0] && seen[1][1]);
}

double bisect_agent_level(const struct bisect *b, long long agent)
{
	int ref = reference_slot(b), slot = -1;
	double d;

	if (ref < 0)
		return 0;
	for (int a = 0; a < b->nr_slots && slot < 0; a++)
		if (b->agent_id[a] == agent)
			slot = a;
	if (slot < 0 && b->nr_slots == AGENT_SLOTS)
		slot = AGENT_SLOTS - 1;  /* slot_of(): the agents past the slots share the last */
	if (slot < 0 || slot == ref)
		return 0;
	d = shared_level(b, slot, ref);
	if (isnan(d) && !share_group(b, slot, ref))
		return NAN;
	if (isnan(d))  /* no commit measured by both: the offsets against the groups' centres */
		d = b->off[slot] - b->off[ref];
	return b->o.higher_is_better ? expm1(d) : expm1(-d);
}

/*
 * A run of commit c is kept unless it is far from both groups of the
 * most probable split (sigma > 0), or, with three runs or more, far from
 * its own commit's centre: by sigma, or (sigma < 0, the ends phase, when
 * there are no groups yet) by 5 of its commit's own robust sigmas. A
 * bimodal machine can put four slow runs in twenty at one end. In the
 * search that centre is bisect_upper_centre(): a commit measured while a hog came
 * and went on its agent's core has its runs in two modes, their median
 * fell between them, and every run of the commit, clean or slow, was set
 * aside (test_commit_half_hogged_still_counts).
 */
int bisect_kept_runs(unsigned char *keep, const struct bisect *b, const struct cdata *c, double sigma)
{
	double lo = fmin(b->mu_g, b->mu_b) - FAR_SIGMAS * sigma;
	double hi = fmax(b->mu_g, b->mu_b) + FAR_SIGMAS * sigma;
	double *adj = xmalloc((size_t)(c->nx + 1) * sizeof(double)), med, own = sigma;
	int out = 0;

	for (int r = 0; r < c->nx; r++)
		adj[r] = ax(b, c, r);
	med = c->nx < 3 ? 0 : sigma > 0 ? bisect_upper_centre(adj, c->nx) : bisect_median(adj, c->nx);
	if (sigma < 0 && c->nx >= 3)
		own = bisect_robust_sd(adj, c->nx, med);
	for (int r = 0; r < c->nx; r++) {
		double x = adj[r];

		keep[r] = 1;
		if (sigma > 0 && (x < lo || x > hi || (c->nx >= 3 && fabs(x - med) > FAR_SIGMAS * sigma)))
			keep[r] = 0;
		if (sigma < 0 && c->nx >= 3 && own > 0 && fabs(x - med) > FAR_SIGMAS * own)
			keep[r] = 0;
		out += !keep[r];
	}
	free(adj);
	/*
	 * Slow runs are a few: where a fifth of an end's runs lie that far, the
	 * lab has more than one level (a CPU hog on and off), and setting one
	 * level aside would keep only what the other saw. (In the search the
	 * rules stay: there they set aside a burst's runs, and with this guard
	 * there too the local lab's 15% case went from 8 of 10 exact to 1 of 3
	 * with two undecided.) At the ends of
	 * a job on the local lab, with a hog halving one agent for part of
	 * the time, each end kept one agent's runs and a 15% regression came
	 * out as a 70% improvement, "shown" not to be a regression.
	 * The lab's levels are both ends' (bisect_task_sums() keeps every run of
	 * both when either has them): kept at one end and set aside at the
	 * other, a hog's slow runs made a no-change job's ends "differ" by
	 * 35%, its bad end's tasks on one agent all slow and its good end's
	 * one slow task set aside (test_lab_ends_keep_the_labs_levels_alike).
	 * Returns whether c's runs lie in more than one level so.
	 */
	return sigma < 0 && out > 1 && out > c->nx / 5;
}

/* Whether either end's runs lie in more than one level by the ends' rules (bisect_kept_runs() at sigma < 0). */
static int ends_in_levels(const struct bisect *b)
{
	int lv = 0;

	for (int e = 0; e < 2 && !lv; e++) {
		const struct cdata *c = &b->c[e ? b->n - 1 : 0];
		unsigned char *keep = xmalloc((size_t)c->nx + 1);

		lv = bisect_kept_runs(keep, b, c, -1);
		free(keep);
	}
	return lv;
}

/* Adds task k's kept runs to the totals and to its commit's sums (when v is not NULL). */
void bisect_add_task(struct totals *T, const struct task *tk, double *v)
{
	double ybar = tk->s / tk->n, tbar = tk->t / tk->n;

	T->ssw += fmax(tk->q - tk->s * ybar, 0);
	T->dofw += tk->n - 1;
	T->m++;
	for (int l = 0; l < NR_LAMBDA; l++) {
		double w = tk->n / (1 + lambdas[l] * tk->n), *a = T->a[tk->agent][l];

		if (a[0] == 0)
			T->nagents += l == 0;
		a[0] += w;
		a[1] += w * ybar;
		a[2] += w * ybar * ybar;
		a[3] += w * tbar;
		a[4] += w * tbar * tbar;
		a[5] += w * ybar * tbar;
		T->logw[l] += 0.5 * log(w);
		if (v) {
			double *cv = v + tk->agent * NV + 3 * l;

			cv[0] += w;
			cv[1] += w * ybar;
			cv[2] += w * tbar;
		}
	}
}

/*
 * The tasks' sums over the runs kept (see bisect_kept_runs()): per commit and
 * agent into c->v, and over all measured commits into b->tot; with
 * only_ends, over the two ends alone into T (and no c->v).
 */
void bisect_task_sums(struct bisect *b, double sigma, int only_ends, struct totals *T)
{
	unsigned char *keep = NULL;
	int cap = 0, levels = sigma < 0 && ends_in_levels(b);

	memset(T, 0, sizeof(*T));
	b->outliers = 0;
	for (int k = 0; k < b->nr_tasks; k++)
		b->tasks[k].n = 0, b->tasks[k].s = b->tasks[k].q = b->tasks[k].t = 0;
	for (int k = 0; k < b->nr_measured; k++) {
		int i = b->measured[k];
		struct cdata *c = &b->c[i];

		if (only_ends && i != 0 && i != b->n - 1)
			continue;
		if (c->nx > cap) {
			cap = c->nx;
			keep = xrealloc(keep, (size_t)cap);
		}
		if (bisect_kept_runs(keep, b, c, sigma) || levels)
			memset(keep, 1, (size_t)c->nx);
		for (int r = 0; r < c->nx; r++) {
			struct task *tk = &b->tasks[c->task[r]];

			if (!keep[r]) {
				b->outliers++;
				continue;
			}
			tk->n++;
			tk->s += c->x[r];
			tk->q += c->x[r] * c->x[r];
			tk->t += c->t[r];
		}
		if (!only_ends) {
			memset(c->v, 0, AGENT_SLOTS * NV * sizeof(double));
			c->agents = 0;
			c->kept = 0;
		}
	}
	free(keep);
	for (int k = 0; k < b->nr_tasks; k++) {
		struct task *tk = &b->tasks[k];
		struct cdata *c = &b->c[tk->commit];

		if (tk->n == 0)
			continue;
		bisect_add_task(T, tk, only_ends ? NULL : c->v);
		if (!only_ends) {
			c->agents |= 1u << tk->agent;
			c->kept += tk->n;
		}
	}
}

/*
 * One lambda's fit of the task means: a shift delta of the bad group
 * (whose per-agent sums are vb, [slot][NV]), a level per agent (flat
 * priors: an agent's level is learnt only from what it shares with
 * others, so a commit measured on a slower agent alone cannot look bad),
 * and, with P > 0, a drift over time with prior precision P; the common
 * scale integrated out with Jeffreys' prior. lm is the log marginal up to
 * a constant shared by every split and lambda; -INFINITY when the data
 * say nothing about delta (every agent saw one side only).
 */
static void lambda_fit(struct lfit *f, const struct totals *T, int nslots, int l, const double *vb, double P)
{
	double syy = 0, stt = 0, sty = 0, sxx = 0, sxy = 0, sxt = 0, logdet = 0, wall = 0, ss, m00, ldet;

	f->lm = -INFINITY;
	f->dof = T->dofw + T->m - T->nagents - 1;
	for (int a = 0; a < nslots; a++) {
		const double *t = T->a[a][l], *x = vb + a * NV + 3 * l;
		double W = t[0];

		if (W <= 0)
			continue;
		syy += t[2] - t[1] * t[1] / W;
		stt += t[4] - t[3] * t[3] / W;
		sty += t[5] - t[3] * t[1] / W;
		sxx += x[0] - x[0] * x[0] / W;
		sxy += x[1] - x[0] * t[1] / W;
		sxt += x[2] - x[0] * t[3] / W;
		logdet += log(W);
		wall += W;
	}
	if (f->dof < 1 || sxx <= 1e-9 * wall)
		return;
	if (P > 0) {
		double det = sxx * (stt + P) - sxt * sxt, b0, b1;

		if (det <= 0)
			return;
		b0 = ((stt + P) * sxy - sxt * sty) / det;
		b1 = (sxx * sty - sxt * sxy) / det;
		ss = syy - (sxy * b0 + sty * b1);
		m00 = (stt + P) / det;
		ldet = log(det) - log(P);
		f->delta = b0;
	} else {
		f->delta = sxy / sxx;
		ss = syy - sxy * f->delta;
		m00 = 1 / sxx;
		ldet = log(sxx);
	}
	ss = fmax(T->ssw + ss, 1e-300 + 1e-12 * wall);
	f->lm = T->logw[l] - 0.5 * logdet - 0.5 * ldet - 0.5 * f->dof * log(ss);
	f->var = ss / f->dof * m00;
	f->scale2 = ss / f->dof;
}

static double logaddexp(double a, double b)
{
	if (!isfinite(a))
		return b;
	if (!isfinite(b))
		return a;
	return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

/*
 * The log marginal of the split whose bad group's sums are vb, averaged
 * over lambda and (with drift) the drift's scale; -INFINITY when either
 * group is empty.
 */
static double split_loglik(const struct totals *T, int nslots, const double *vb, double w0, int drift)
{
	double nb = 0, l = -INFINITY;

	for (int a = 0; a < nslots; a++)
		nb += vb[a * NV];
	if (nb <= 0.5 || w0 - nb <= 0.5)
		return -INFINITY;
	for (int li = 0; li < NR_LAMBDA; li++)
		for (int m = 0; m < (drift ? NR_TAUS : 1); m++) {
			double tau = drift_taus[m], P = tau > 0 ? 1 / (tau * tau * (1 + lambdas[li])) : 0;
			struct lfit f;

			lambda_fit(&f, T, nslots, li, vb, P);
			if (!isfinite(f.lm))
				continue;
			/* The bad group must be the worse one: P(delta < 0 | data). */
			f.lm += log(fmax(0.5 * erfc(f.delta / sqrt(2 * f.var)), 1e-300));
			l = logaddexp(l, f.lm);
		}
	return l;
}

/*
 * The bad group's sums at split j into vb (nslots * NV): those of every
 * measured commit that has j among its ancestors, in measured order.
 */
static void bad_sums(double *vb, const struct bisect *b, int j, int nslots)
{
	memset(vb, 0, (size_t)nslots * NV * sizeof(double));
	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];

		if (c->kept == 0 || !has_anc(c, j))
			continue;
		for (int a = 0; a < nslots; a++)
			if (c->agents >> a & 1)
				for (int q = 0; q < NV; q++)
					vb[a * NV + q] += c->v[a * NV + q];
	}
}

/* Whether splits i and j put the same measured commits in the bad group. */
static int same_bad_group(const struct bisect *b, int i, int j)
{
	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];

		if (c->kept > 0 && has_anc(c, i) != has_anc(c, j))
			return 0;
	}
	return 1;
}

/*
 * Log marginal likelihood of every split into b->logl (and the posterior
 * into b->post), averaged over lambda and the drift's scale; returns the
 * most probable split, whose bad group's sums are left in b->sp.
 *
 * Splits with the same measured commits in their bad group have the same
 * sums, bit for bit, and so the same likelihood: it is computed once for
 * each such group (between two measured commits of a line every split is
 * in one) and the rest look it up, by a hash of the group's members and a
 * check that the members are the same. A decision at N = 1024 on a
 * recorded trace spent 80% of its time computing every split's.
 */
static int split_posterior(struct bisect *b)
{
	const struct totals *T = &b->tot;
	int nslots = b->nr_slots ? b->nr_slots : 1, map = -1, drift = b->o.drift;
	size_t stride = (size_t)nslots * NV, hsize = 64;
	double best = -INFINITY, z = 0, w0 = 0, stt0 = 0, *raw, *vb;
	uint64_t *key = xcalloc((size_t)b->n, sizeof(uint64_t));
	int *seen;  /* open addressing over the keys: the first split of a bad group, + 1 */

	if (b->sp_cap < stride) {
		free(b->sp);
		b->sp_cap = stride;
		b->sp = xmalloc(b->sp_cap * sizeof(double));
	}
	vb = xmalloc(stride * sizeof(double));
	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];
		uint64_t m = rng_mix64((uint64_t)k);

		if (c->kept == 0)
			continue;
		for (size_t w = 0; w < b->words; w++)
			for (uint64_t bits = c->anc[w]; bits; bits &= bits - 1)
				key[w * 64 + (size_t)__builtin_ctzll(bits)] ^= m;
	}
	for (int a = 0; a < nslots; a++) {
		w0 += T->a[a][0][0];
		if (T->a[a][0][0] > 0)
			stt0 += T->a[a][0][4] - T->a[a][0][3] * T->a[a][0][3] / T->a[a][0][0];
	}
	if (T->m < 8 || stt0 <= 0)
		drift = 0;  /* too few tasks to spend a degree of freedom on drift */
	while (hsize < 2 * (size_t)b->n)
		hsize <<= 1;
	seen = xcalloc(hsize, sizeof(int));
	raw = xmalloc((size_t)b->n * sizeof(double));
	for (int j = 1; j < b->n; j++) {
		double l;
		size_t h;

		if (b->prior[j] <= 0) {
			b->logl[j] = -INFINITY;
			continue;
		}
		for (h = rng_mix64(key[j]) & (hsize - 1); seen[h]; h = (h + 1) & (hsize - 1))
			if (key[seen[h] - 1] == key[j] && same_bad_group(b, seen[h] - 1, j))
				break;
		if (seen[h]) {
			l = raw[seen[h] - 1];
		} else {
			seen[h] = j + 1;
			bad_sums(vb, b, j, nslots);
			l = raw[j] = split_loglik(T, nslots, vb, w0, drift);
		}
		if (!isfinite(l)) {
			b->logl[j] = -INFINITY;
			continue;
		}
		l += log(b->prior[j]);
		b->logl[j] = l;
		if (l > best) {
			best = l;
			map = j;
		}
	}
	for (int j = 1; j < b->n; j++) {
		b->post[j] = isfinite(b->logl[j]) && isfinite(best) ? exp(b->logl[j] - best) : 0;
		z += b->post[j];
	}
	for (int j = 1; j < b->n; j++)
		b->post[j] = z > 0 ? b->post[j] / z : 1.0 / (b->n - 1);
	if (map > 0)
		bad_sums(b->sp, b, map, nslots);
	free(seen);
	free(raw);
	free(vb);
	free(key);
	return map;
}

/*
 * The shift of the bad group at split vb over the lambdas (no drift), as
 * a mixture of their fits: its mean and sd into b->delta and
 * b->delta_sd, lambda's posterior mean into b->lambda; returns the log of
 * the total weight (-INFINITY when nothing is known). With p_below, also
 * P(delta < x) for x in xs[0..nx).
 */
double bisect_shift_of(struct bisect *b, const struct totals *T, const double *vb, const double *xs, int nx,
		       double *p_below)
{
	struct lfit f[NR_LAMBDA];
	double top = -INFINITY, z = 0, mean = 0, sq = 0, lam = 0, s2 = 0, u1 = 0, tv = 0;
	int nslots = b->nr_slots ? b->nr_slots : 1;

	for (int l = 0; l < NR_LAMBDA; l++) {
		lambda_fit(&f[l], T, nslots, l, vb, 0);
		top = fmax(top, f[l].lm);
	}
	for (int i = 0; i < nx; i++)
		p_below[i] = 0;
	if (!isfinite(top))
		return -INFINITY;
	for (int l = 0; l < NR_LAMBDA; l++) {
		double w = isfinite(f[l].lm) ? exp(f[l].lm - top) : 0;

		if (w == 0)
			continue;
		z += w;
		mean += w * f[l].delta;
		sq += w * (f[l].var + f[l].delta * f[l].delta);
		lam += w * lambdas[l];
		s2 += w * f[l].scale2;
		u1 += w * f[l].scale2 * (lambdas[l] + 1);
		tv += w * f[l].scale2 * (lambdas[l] + 1.0 / b->o.runs_max);
		for (int i = 0; i < nx; i++)
			p_below[i] += w * stats_t_cdf((xs[i] - f[l].delta) / sqrt(f[l].var), f[l].dof);
	}
	for (int i = 0; i < nx; i++)
		p_below[i] /= z;
	b->delta = mean / z;
	b->delta_sd = sqrt(fmax(sq / z - b->delta * b->delta, 0));
	b->lambda = lam / z;
	b->scale2 = s2 / z;
	b->unit1_var = u1 / z;
	b->task_var = tv / z;
	return top + log(z);
}

/*
 * The means of the two groups of split j, over the runs kept, with each
 * agent's level taken out as the runs the confirmation's pairs and
 * bisect_slow_cut() compare with them are (ax()). (With the levels left in, a
 * group measured mostly on a slower agent had its mean below every run of
 * the faster one, and the pairs of a culprit 30% worse were set aside
 * round after round as lying far above both groups.)
 */
static void group_means(struct bisect *b, int j)
{
	double wt = 0, st = 0, sb = 0, nb = 0;

	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];
		double w = 0, sum = 0;

		/* At lambda 0 a task's weight is its runs, and weight times mean their sum. */
		for (int a = 0; a < AGENT_SLOTS; a++) {
			w += c->v[a * NV];
			sum += c->v[a * NV + 1] - c->v[a * NV] * b->off[a];
		}
		wt += w;
		st += sum;
		if (has_bit(c->anc, j)) {
			nb += w;
			sb += sum;
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
			if (ax(b, c, r) < lo - far) {
				nf++;
				depth += lo - ax(b, c, r);
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
double bisect_slow_cut(const struct bisect *b)
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
void bisect_update_posterior(struct bisect *b)
{
	double *res, *gx, *bx;
	int map, m = 0, ng = 0, nb = 0;

	bisect_task_sums(b, 0, 0, &b->tot);
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
	/*
	 * The groups' centres robust to a slow mode below (bisect_upper_centre()):
	 * slow runs must not drag them, or sigma with them; and the agents'
	 * levels out first.
	 */
	bisect_agent_offsets(b, map);
	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];

		for (int r = 0; r < c->nx; r++) {
			if (has_bit(c->anc, map))
				bx[nb++] = ax(b, c, r);
			else
				gx[ng++] = ax(b, c, r);
		}
	}
	b->mu_g = bisect_upper_centre(gx, ng);
	b->mu_b = bisect_upper_centre(bx, nb);
	m = 0;
	for (int k = 0; k < b->nr_measured; k++) {
		const struct cdata *c = &b->c[b->measured[k]];
		double mu = has_bit(c->anc, map) ? b->mu_b : b->mu_g;

		for (int r = 0; r < c->nx; r++)
			res[m++] = fabs(ax(b, c, r) - mu);
	}
	/* Sigma from the median absolute residual, so the runs to be set aside cannot inflate it. */
	b->sigma = 1.4826 * bisect_median(res, m);
	free(res);
	free(gx);
	free(bx);
	if (b->sigma > 0) {
		slow_model(b);
		bisect_task_sums(b, b->sigma, 0, &b->tot);
		if (b->outliers)
			map = split_posterior(b);
	}
	/* With the far runs set aside no split may be left that both groups hold runs of. */
	if (map <= 0) {
		b->map = map;
		return;
	}
	group_means(b, map);
	b->map = map;
	if (map > 0)
		bisect_shift_of(b, &b->tot, b->sp, NULL, 0, NULL);
}

/* Posterior mass of the ancestors-or-self of q. */
double bisect_anc_mass(struct bisect *b, int q)
{
	const uint64_t *bits = b->c[q].anc;
	double m = 0;

	if (!bits) {
		bisect_ancestors(b->scratch, b, q);
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

static int cmp_by_post(const void *x, const void *y, void *arg)
{
	const double *post = arg;
	double a = post[*(const int *)x], b = post[*(const int *)y];

	return (a < b) - (a > b);
}

/* The smallest set of commits holding the confidence, most probable first. */
void bisect_smallest_set(struct bisect *b)
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

/*
 * The candidates whose posterior is commit i's (to 1e-9 of it), i among
 * them: commits no run has told apart yet (a stretch between two measured
 * commits, or every candidate before the first search) share one value,
 * and a list of the most probable shows some of them where any of the
 * rest is as likely.
 */
int bisect_alike(const struct bisect *b, int i)
{
	double p = b->post[i];
	int m = 0;

	for (int j = 1; j < b->n; j++)
		m += fabs(b->post[j] - p) <= 1e-9 * p;
	return m;
}

int bisect_top(int *idx, double *p, const struct bisect *b, int k)
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
