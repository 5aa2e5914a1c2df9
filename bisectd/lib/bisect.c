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
 *
 * This room holds the engine's life, the runs it is told, bisect_next()
 * (which phase asks next) and the result; the model, the slow runs, the
 * search, the confirmation, the budget and the ends have a room each
 * (bisect_*.c, sharing bisect_internal.h; docs/ENGINE.md).
 */
#include "bisect_internal.h"

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
	if (b->o.end_runs_max < b->o.equal_runs)
		b->o.end_runs_max = b->o.equal_runs;
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
	b->c = xcalloc((size_t)n, sizeof(*b->c));
	b->measured = xcalloc((size_t)n, sizeof(int));
	b->set = xcalloc((size_t)n, sizeof(int));
	b->scratch = xcalloc(b->words, sizeof(uint64_t));
	for (int i = 1; i < n; i++)
		b->post[i] = 1.0 / (n - 1);
	b->state = BISECT_ENDS;
	b->culprit = -1;
	b->failed_confirm = -1;
	b->map = -1;
	b->ends_p = 1;
	b->more_runs = -1;
	b->next_own_task = -1;
	b->last_commit = -1;
	snprintf(b->why, sizeof(b->why), "measuring both ends first");
	*out = b;
	return 0;
}

void bisect_job_opts(struct bisect_opts *o, double confidence, double alpha, double min_effect, long budget_runs,
		     long budget_builds, int higher_is_better, int runs)
{
	struct bisect_opts d = BISECT_OPTS_INIT;

	/* Field by field into zeroes: the engine cache compares options with memcmp(), padding too. */
	memset(o, 0, sizeof(*o));
	o->build_cost = d.build_cost;
	o->run_cost = d.run_cost;
	o->drift = d.drift;
	o->confidence = confidence;
	o->alpha = alpha;
	o->min_effect = min_effect;
	o->budget_runs = budget_runs;
	o->budget_builds = budget_builds;
	o->higher_is_better = higher_is_better;
	o->runs_min = 1;
	o->runs_max = runs;
	o->end_runs = runs < 5 ? 5 : runs;
	o->end_runs_max = 6 * o->end_runs;
}

void bisect_free(struct bisect *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->n; i++) {
		free(b->par[i]);
		free(b->c[i].x);
		free(b->c[i].t);
		free(b->c[i].task);
		free(b->c[i].v);
		free(b->c[i].anc);
	}
	free(b->par);
	free(b->npar);
	free(b->prior);
	free(b->logl);
	free(b->post);
	free(b->sp);
	free(b->c);
	free(b->measured);
	free(b->set);
	free(b->scratch);
	free(b->tasks);
	free(b->task_hash);
	free(b);
}

static void *dup_mem(const void *p, size_t used, size_t cap)
{
	void *q;

	if (!p)
		return NULL;
	q = xcalloc(cap ? cap : 1, 1);
	memcpy(q, p, used);
	return q;
}

struct bisect *bisect_clone(const struct bisect *b)
{
	struct bisect *d = xmalloc(sizeof(*d));

	*d = *b;
	d->par = xcalloc((size_t)b->n, sizeof(*d->par));
	d->npar = dup_mem(b->npar, (size_t)b->n * sizeof(int), (size_t)b->n * sizeof(int));
	for (int i = 0; i < b->n; i++)
		d->par[i] = dup_mem(b->par[i], (size_t)b->npar[i] * sizeof(int), ((size_t)b->npar[i] + 1) * sizeof(int));
	d->prior = dup_mem(b->prior, (size_t)b->n * sizeof(double), (size_t)b->n * sizeof(double));
	d->logl = dup_mem(b->logl, (size_t)b->n * sizeof(double), (size_t)b->n * sizeof(double));
	d->post = dup_mem(b->post, (size_t)b->n * sizeof(double), (size_t)b->n * sizeof(double));
	d->sp = dup_mem(b->sp, b->sp_cap * sizeof(double), b->sp_cap * sizeof(double));
	d->c = dup_mem(b->c, (size_t)b->n * sizeof(*d->c), (size_t)b->n * sizeof(*d->c));
	for (int i = 0; i < b->n; i++) {
		const struct cdata *c = &b->c[i];
		struct cdata *e = &d->c[i];
		size_t cap = (size_t)c->cap;

		e->x = dup_mem(c->x, (size_t)c->nx * sizeof(double), cap * sizeof(double));
		e->t = dup_mem(c->t, (size_t)c->nx * sizeof(double), cap * sizeof(double));
		e->task = dup_mem(c->task, (size_t)c->nx * sizeof(int), cap * sizeof(int));
		e->anc = dup_mem(c->anc, b->words * sizeof(uint64_t), b->words * sizeof(uint64_t));
		e->v = dup_mem(c->v, AGENT_SLOTS * NV * sizeof(double), AGENT_SLOTS * NV * sizeof(double));
	}
	d->measured = dup_mem(b->measured, (size_t)b->n * sizeof(int), (size_t)b->n * sizeof(int));
	d->set = dup_mem(b->set, (size_t)b->n * sizeof(int), (size_t)b->n * sizeof(int));
	d->scratch = dup_mem(b->scratch, b->words * sizeof(uint64_t), b->words * sizeof(uint64_t));
	d->tasks = dup_mem(b->tasks, (size_t)b->nr_tasks * sizeof(*d->tasks), (size_t)b->tasks_cap * sizeof(*d->tasks));
	d->task_hash = dup_mem(b->task_hash, (size_t)b->task_hash_size * sizeof(int),
			       (size_t)b->task_hash_size * sizeof(int));
	return d;
}

void bisect_weight_prior(struct bisect *b, int i, double w)
{
	if (i > 0 && i < b->n && w > 0 && isfinite(w))
		b->prior[i] *= w;
}

static uint64_t hash_long(long v)
{
	uint64_t h = (uint64_t)v * 0x9e3779b97f4a7c15ULL;

	return h ^ (h >> 29);
}

/* The index of the task with this id; a new task of commit i on agent slot `slot` when unknown. */
static int task_of(struct bisect *b, long id, int i, int slot, int kind)
{
	int mask, at;

	if (2 * (b->nr_tasks + 1) > b->task_hash_size) {
		int size = b->task_hash_size ? 2 * b->task_hash_size : 64;

		free(b->task_hash);
		b->task_hash = xcalloc((size_t)size, sizeof(int));
		b->task_hash_size = size;
		for (int k = 0; k < b->nr_tasks; k++) {
			at = (int)(hash_long(b->tasks[k].id) & (uint64_t)(size - 1));
			while (b->task_hash[at])
				at = (at + 1) & (size - 1);
			b->task_hash[at] = k + 1;
		}
	}
	mask = b->task_hash_size - 1;
	at = (int)(hash_long(id) & (uint64_t)mask);
	while (b->task_hash[at]) {
		int k = b->task_hash[at] - 1;

		if (b->tasks[k].id == id)
			return k;
		at = (at + 1) & mask;
	}
	if (b->nr_tasks == b->tasks_cap) {
		b->tasks_cap = b->tasks_cap ? 2 * b->tasks_cap : 64;
		b->tasks = xrealloc(b->tasks, (size_t)b->tasks_cap * sizeof(*b->tasks));
	}
	b->tasks[b->nr_tasks] = (struct task){ .id = id, .commit = i, .agent = slot, .kind = kind };
	b->task_hash[at] = b->nr_tasks + 1;
	return b->nr_tasks++;
}

/* An agent's slot: its own for the first AGENT_SLOTS - 1 agents seen, then one for the rest. */
static int slot_of(struct bisect *b, int agent)
{
	for (int k = 0; k < b->nr_slots; k++)
		if (b->agent_id[k] == agent)
			return k;
	if (b->nr_slots == AGENT_SLOTS)
		return AGENT_SLOTS - 1;
	b->agent_id[b->nr_slots] = agent;
	return b->nr_slots++;
}

void bisect_add_run(struct bisect *b, int i, double value, long task, int agent, int kind)
{
	struct cdata *c;
	int slot, unit;

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
		bisect_ancestors(c->anc, b, i);
		c->v = xcalloc(AGENT_SLOTS * NV, sizeof(double));
		b->measured[b->nr_measured++] = i;
	}
	if (c->nx == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 8;
		c->x = xrealloc(c->x, (size_t)c->cap * sizeof(double));
		c->t = xrealloc(c->t, (size_t)c->cap * sizeof(double));
		c->task = xrealloc(c->task, (size_t)c->cap * sizeof(int));
	}
	slot = slot_of(b, agent < 0 ? 0 : agent);
	/*
	 * Runs taken one after the other at one commit on one agent share the
	 * lab's level of that stretch of time, whatever the tasks: they are
	 * one unit. A commit measured twenty times in a row during a burst of
	 * load is one observation of the burst, not twenty of the commit
	 * (merging only by task, a search that re-measured one commit in
	 * one-run tasks through a burst named it at 0.994 on a two-state lab).
	 */
	if (b->last_commit == i && b->last_slot == slot && b->tasks[b->last_unit].kind == kind)
		unit = b->last_unit;
	else
		unit = task_of(b, task, i, slot, kind);
	c->task[c->nx] = unit;
	b->last_commit = i;
	b->last_slot = slot;
	b->last_unit = unit;
	c->t[c->nx] = (double)b->runs;
	c->x[c->nx++] = b->o.higher_is_better ? log(value) : -log(value);
	if (kind == BISECT_Q_CONFIRM)
		c->nconfirm++;
}

void bisect_add_stored_run(struct bisect *b, int i, double value, long long task, long long agent, long long kind)
{
	if (kind != BISECT_Q_CONFIRM && kind != BISECT_Q_EARLY)
		kind = BISECT_Q_SEARCH;
	bisect_add_run(b, i, value, (long)task, agent >= 0 && agent <= 0x7fffffff ? (int)agent : 0, (int)kind);
}

/* The engine's own task ids count down from -1, so that they never meet a caller's (>= 0). */
void bisect_add_sample(struct bisect *b, int i, double value)
{
	bisect_add_run(b, i, value, b->next_own_task--, 0, BISECT_Q_SEARCH);
}

void bisect_add_confirm_sample(struct bisect *b, int i, double value)
{
	bisect_add_run(b, i, value, b->next_own_task--, 0, BISECT_Q_CONFIRM);
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

int bisect_next(struct bisect_query *out, struct bisect *b, int k, const unsigned char *busy)
{
	int got = 0, top, two_modes;
	double p_top, stop = 1 - (1 - b->o.confidence) * STOP_MARGIN;

	if (b->state == BISECT_DONE || k <= 0)
		return 0;
	if (b->state == BISECT_ENDS) {
		got = bisect_ends_step(out, b, k, busy);
		if (got >= 0)
			return got;
		got = 0;
	}

	if (b->c[0].nx > 0 && b->c[b->n - 1].nx > 0)
		bisect_ends_test(b);  /* the ends' numbers for the report, as they stand */
	bisect_update_posterior(b);
	if (bisect_rate_mode(b))
		bisect_rate_posterior(b);
	bisect_set_budget(b);
	bisect_estimate_more(b);
	p_top = best_post(b, &top);

	/*
	 * A derived budget does not cut a confirmation short: the pairs have
	 * their own bound (twice what the power needs), and the budget, made
	 * again at each step from the noise as it is now, can shrink under a
	 * confirmation that a burst of load made long (a 15% culprit at
	 * 1.0000 ended undecided at 156 runs on the local lab). A job's own
	 * budget holds whatever the phase, and so does the derived one of a
	 * job on the share of slow runs: there pairs that passed with the
	 * posterior short of the stop sent the search on, and a job that
	 * counted a lab's slow runs as evidence ran 1,039 runs on the local
	 * lab with no change to find (docs/HISTORY.md, "An intermittent
	 * culprit").
	 */
	two_modes = !b->rate && bisect_bad_end_two_modes(b) == 2 && b->c[b->n - 1].nx < RATE_ENDS_RUNS * b->o.end_runs_max;
	if (bisect_budget_spent(b) && !(b->o.budget_runs == 0 && p_top >= CONFIRM_START && !b->rate)) {
		char why[200];

		/*
		 * The runs in hand first: the pairs whose runs spent the budget
		 * may be the ones that pass the confirmation, and a job given
		 * exactly the runs it takes ended undecided (then a resume
		 * named the culprit without a run more). The queries the step
		 * asks for are dropped: what it decides is final, the rest is
		 * the budget's.
		 */
		if (p_top >= stop && !two_modes) {
			got = bisect_confirm_step(out, b, k, busy, top, p_top, stop);
			if (b->state == BISECT_DONE)
				return got;
		}
		b->culprit = top;
		if (p_top >= stop)
			snprintf(why, sizeof(why), "the budget is spent (%ld runs) while commit %d, at %.4f, was being "
				 "confirmed against its parent: undecided", b->runs, top, p_top);
		else
			snprintf(why, sizeof(why), "the budget is spent (%ld runs) with commit %d at %.4f, short of "
				 "%.4g: undecided", b->runs, top, p_top, b->o.confidence);
		return bisect_finish(b, VERDICT_UNDECIDED, why);
	}
	/*
	 * The bad end's runs may lie in two modes, on too few runs to tell
	 * from one level's (bisect_bad_end_two_modes() 2): measured on before any
	 * confirmation, which takes the sign-flip test where they do.
	 */
	if (two_modes && !bisect_ends_busy(b, busy)) {
		b->state = BISECT_SEARCH;
		b->culprit = -1;
		snprintf(b->why, sizeof(b->why), "the bad end's runs may lie in two modes, one at the good end's level: "
			 "more runs at both, to tell");
		return bisect_ends_round(out, b, k);
	}
	if (p_top >= CONFIRM_START)
		return bisect_confirm_step(out, b, k, busy, top, p_top, stop);
	b->state = BISECT_SEARCH;
	b->culprit = -1;
	if (b->rate_maybe && b->c[b->n - 1].nx < RATE_ENDS_RUNS * b->o.end_runs_max && !bisect_ends_busy(b, busy)) {
		snprintf(b->why, sizeof(b->why), "the bad end's runs lie in two modes, one at the good end's level: "
			 "more runs at both, to tell a change in the slow runs");
		return bisect_ends_round(out, b, k);
	}
	if (b->map > 0 && b->sigma > 0 && !b->rate) {
		double worse, better;

		int aside;

		bisect_ends_kept_shift(b, &worse, &better);
		aside = bisect_change_set_aside(b, top, worse, better);
		if (aside == 1)
			return 0;
		if (aside == 2 && !bisect_ends_busy(b, busy)) {
			snprintf(b->why, sizeof(b->why), "the change is in the slow runs: more runs at both ends, to "
				 "tell it by their shares");
			return bisect_ends_round(out, b, k);
		}
		/*
		 * The ends' runs the search keeps doubt the change the ends
		 * showed: settle that at the ends first, where the groups are
		 * certain, not at commits whose runs cannot show it (up to
		 * ENDS_DOUBT_RUNS end_runs_max an end).
		 */
		if (worse < ENDS_DOUBT && b->c[b->n - 1].nx < ENDS_DOUBT_RUNS * b->o.end_runs_max && !bisect_ends_busy(b, busy)) {
			snprintf(b->why, sizeof(b->why), "the ends differ by %+.2f%%, but their runs kept do not show it "
				 "(P(worse by %.1f%%)=%.4f): more runs at both", 100 * b->ends_change,
				 100 * b->o.min_effect, worse);
			return bisect_ends_round(out, b, k);
		}
	}
	/*
	 * With three agents or more, measure the likely culprit and its parent
	 * as a pair, interleaved, while the others search: those runs are
	 * informative either way. They are not the confirmation: that takes
	 * runs asked for once the posterior holds CONFIRM_START, or a pair
	 * measured early, when the posterior was far from it, would confirm
	 * with no new evidence. (Counted as the confirmation, they named a
	 * good neighbour of the culprit in 1.0% of the trials at N = 16384,
	 * 7% / 4%, 4 agents, against none with 1 agent.)
	 */
	if (k >= 3 && p_top >= SPECULATE && !(busy && (busy[top] || busy[parent_of(b, top)])) &&
	    !b->c[top].skipped && !b->c[parent_of(b, top)].skipped) {
		int parent = parent_of(b, top), r = bisect_pairs_needed(b);
		unsigned char *busy2 = xcalloc((size_t)b->n, 1);

		r = r > 4 ? 4 : r;
		out[0] = (struct bisect_query){ parent, r, BISECT_Q_EARLY, bisect_anc_mass(b, parent), 0, 0, 1 };
		out[1] = (struct bisect_query){ top, r, BISECT_Q_EARLY, bisect_anc_mass(b, top), 0, 0, 1 };
		for (int i = 0; i < b->n; i++)
			busy2[i] = busy && busy[i];
		busy2[top] = busy2[parent] = 1;
		got = 2 + bisect_choose_search(out + 2, b, k - 1, busy2);
		free(busy2);
		snprintf(b->why, sizeof(b->why), "best commit %d at %.4f: measuring it and its parent early on one "
			 "agent, searching on %d", top, p_top, got - 2);
		return got;
	}
	got = bisect_choose_search(out, b, k, busy);
	if (got == 0) {
		int pending = 0, skipped = 0;
		char why[200];

		for (int i = 0; busy && i < b->n; i++)
			pending += busy[i];
		if (pending)
			return 0;
		b->culprit = top;
		bisect_smallest_set(b);
		for (int i = 0; i < b->nr_set; i++)
			skipped += b->c[b->set[i]].skipped || b->c[parent_of(b, b->set[i])].skipped;
		if (skipped && b->set_mass >= b->o.confidence)
			return bisect_finish(b, VERDICT_RANGE, "nothing measurable separates the most probable commits "
					     "(skipped neighbours)");
		snprintf(why, sizeof(why), "no commit left is worth measuring: the effect is %.2f sigmas of a "
			 "task's noise, and commit %d holds %.4f: undecided", bisect_task_sigmas(b, b->o.runs_max, 0), top, p_top);
		return bisect_finish(b, VERDICT_UNDECIDED, why);
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
		int e = b->c[0].kept <= b->c[b->n - 1].kept ? 0 : b->n - 1;

		for (int i = 0; i < b->nr_measured; i++)
			if (b->measured[i] != 0 && b->measured[i] != b->n - 1 && b->c[b->measured[i]].kept > most)
				most = b->c[b->measured[i]].kept;
		if (most >= 6 && most > 2 * b->c[e].kept && !(busy && busy[e])) {
			if (got == k)
				got = drop_least(out, got);
			out[got++] = (struct bisect_query){ e, b->o.end_runs, 0, e ? 1.0 : 0.0, 0, 0, 0 };
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
				out[got++] = (struct bisect_query){ stale, 1, 0, stale ? 1.0 : 0.0, 0, 0, 0 };
			}
		}
	}
	snprintf(b->why, sizeof(b->why), "best commit %d at %.4f; measuring %d commit%s, the first at %.2f "
		 "of the mass%s", top, p_top, got, got > 1 ? "s" : "", out[0].mass,
		 b->rate ? " (the change is in the slow runs: bisecting their share)" : "");
	return got;
}

/* The engine's shift delta (log, lower is worse) as the metric's relative change, bad against good. */
static double as_change(const struct bisect *b, double delta)
{
	return b->o.higher_is_better ? expm1(delta) : expm1(-delta);
}

void bisect_result(struct bisect_result *r, const struct bisect *b)
{
	int top;
	double lo, hi;

	memset(r, 0, sizeof(*r));
	r->state = b->state;
	r->verdict = b->verdict;
	r->confidence = best_post(b, &top);
	r->culprit = b->culprit >= 0 ? b->culprit : (b->state == BISECT_ENDS ? -1 : top);
	if (r->culprit >= 0)
		r->confidence = b->post[r->culprit];
	r->posterior = r->confidence;
	if (b->verdict == VERDICT_CULPRIT && b->two_modes && r->confidence > b->o.confidence)
		r->confidence = b->o.confidence;
	r->set = b->set;
	r->nr_set = b->nr_set;
	r->set_mass = b->set_mass;
	r->ends_change = b->ends_change;
	r->ends_p = b->ends_p;
	r->runs = b->runs;
	r->builds = b->builds;
	r->outliers = b->outliers;
	r->why = b->why;
	r->effect = as_change(b, b->delta);
	lo = as_change(b, b->delta - 1.96 * b->delta_sd);
	hi = as_change(b, b->delta + 1.96 * b->delta_sd);
	r->effect_lo = fmin(lo, hi);
	r->effect_hi = fmax(lo, hi);
	r->run_cv = expm1(sqrt(b->scale2));
	r->task_cv = expm1(sqrt(b->task_var));
	r->budget_runs = b->budget;
	r->more_runs = b->more_runs;
	r->failed_confirm = b->failed_confirm;
	if (b->verdict == VERDICT_NOT_REPRODUCED)
		r->rare_share = bisect_rare_share(b);
	if (b->rate || b->rate_aside) {
		r->slow_good = b->rate_g;
		r->slow_bad = b->rate_b;
	}
}

double bisect_bad_mass(struct bisect *b, int i)
{
	return i >= 0 && i < b->n ? bisect_anc_mass(b, i) : 0;
}

int bisect_skipped(const struct bisect *b, int i)
{
	return i >= 0 && i < b->n && b->c[i].skipped;
}

double bisect_posterior(const struct bisect *b, int i)
{
	return i > 0 && i < b->n ? b->post[i] : 0;
}
