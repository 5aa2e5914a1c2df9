/* sim: synthetic histories, planted culprits and lab noise. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "policy.h"
#include "sim.h"
#include "trace.h"
#include "util.h"

static void add_commit(struct sim_dag *g, int i, int p1, int p2, int pre, int lo)
{
	int nr = p2 >= 0 ? 2 : 1;

	g->parents[i] = xmalloc((size_t)nr * sizeof(int));
	g->parents[i][0] = p1;
	if (p2 >= 0)
		g->parents[i][1] = p2;
	g->nr_parents[i] = nr;
	g->pre[i] = pre;
	g->lo[i] = lo;
}

struct sim_dag *sim_dag_new(int n_cand, enum sim_shape shape, uint64_t seed)
{
	struct sim_dag *g = xcalloc(1, sizeof(*g));
	struct rng r;
	int n = n_cand + 1, i = 1, tip = 0;

	rng_seed(&r, seed);
	g->n = n;
	g->parents = xcalloc((size_t)n, sizeof(int *));
	g->nr_parents = xcalloc((size_t)n, sizeof(int));
	g->pre = xcalloc((size_t)n, sizeof(int));
	g->lo = xcalloc((size_t)n, sizeof(int));
	while (i < n) {
		int main_run = shape == SHAPE_LINEAR ? n : 4 + (int)rng_below(&r, 9);
		int side = 1 + (int)rng_below(&r, 4), len = 2 + (int)rng_below(&r, 11);
		int fork, start;

		for (int j = 0; j < main_run && i < n; j++, i++) {
			add_commit(g, i, tip, -1, i, i);
			tip = i;
		}
		if (shape == SHAPE_LINEAR || n - i < side + len + 1)
			continue;
		/*
		 * Main-line commits first, then the branch, then the merge:
		 * the branch's commits come after the main line's in index
		 * order, so every main-line commit's ancestors are a prefix.
		 */
		fork = tip;
		for (int j = 0; j < side; j++, i++) {
			add_commit(g, i, tip, -1, i, i);
			tip = i;
		}
		start = i;
		for (int j = 0; j < len; j++, i++)
			add_commit(g, i, j ? i - 1 : fork, -1, fork, start);
		add_commit(g, i, tip, i - 1, i, i);
		tip = i++;
		g->nr_merges++;
	}
	return g;
}

void sim_dag_free(struct sim_dag *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->n; i++)
		free(g->parents[i]);
	free(g->parents);
	free(g->nr_parents);
	free(g->pre);
	free(g->lo);
	free(g);
}

int sim_dag_check(const struct sim_dag *g)
{
	struct policy *p;
	int rc = policy_new(&p, g->n, g->parents, g->nr_parents);

	if (rc < 0)
		return rc;
	for (int b = 0; b < g->n && rc == 0; b++)
		for (int a = 0; a < g->n; a++)
			if (sim_dag_is_ancestor(g, a, b) != policy_is_ancestor(p, a, b)) {
				rc = err_set(ERR_FAIL, "sim: ancestry of %d and %d disagrees with policy.h", a, b);
				break;
			}
	policy_free(p);
	return rc;
}

static const char *const noise_names[NOISE_MAX] = {
	"normal", "lognormal", "bimodal", "drift", "ar1", "bursts", "shift", "agents", "percommit", "tasks", "intermittent",
	"trace",
};

const char *sim_noise_name(enum sim_noise noise)
{
	return noise_names[noise];
}

int sim_noise_parse(const char *name)
{
	if (!strncmp(name, "trace:", 6))
		return NOISE_TRACE;
	for (int i = 0; i < NOISE_MAX; i++)
		if (!strcmp(name, noise_names[i]))
			return i;
	return -1;
}

int sim_noise_independent(enum sim_noise noise)
{
	return noise <= NOISE_DRIFT;
}

/* E[u^2] for u uniform in [lo, hi]. */
static double uniform_sq(double lo, double hi)
{
	return (hi * hi * hi - lo * lo * lo) / (3 * (hi - lo));
}

double sim_task_noise(enum sim_noise noise, double d, double cv, const struct trace *tr)
{
	double pi, es;

	switch (noise) {
	case NOISE_BURSTS:
		/* A level of 1 - s for the stationary share pi of the time. */
		pi = SIM_BURST_ENTER / (SIM_BURST_ENTER + SIM_BURST_LEAVE);
		es = (SIM_BURST_LO + SIM_BURST_HI) / 2;
		return sqrt(cv * cv + pi * uniform_sq(SIM_BURST_LO, SIM_BURST_HI) - pi * pi * es * es);
	case NOISE_SHIFT:
		/* Before or after a shift of 2 cv, half the job each at most. */
		return sqrt(cv * cv + SIM_SHIFT_CVS * SIM_SHIFT_CVS * cv * cv / 4);
	case NOISE_AGENTS:
		return sqrt(cv * cv + uniform_sq(SIM_AGENT_LO, SIM_AGENT_HI));
	case NOISE_PERCOMMIT:
		return cv * sqrt(uniform_sq(SIM_PERCOMMIT_LO, SIM_PERCOMMIT_HI));
	case NOISE_TASKS:
		return cv * sqrt(1 + 0.25);
	case NOISE_INTERMITTENT:
		/* A bad commit's runs: 1 or 1 - 2d, half each, so d about their mean. */
		return sqrt(cv * cv + d * d);
	case NOISE_TRACE:
		return tr ? tr->task_noise : NAN;
	default:
		return cv;
	}
}

const char *sim_shape_name(enum sim_shape shape)
{
	return shape == SHAPE_LINEAR ? "linear" : "merges";
}

/* A draw of its own for each key (a commit, a task): the same whatever asks first. */
static struct rng keyed(uint64_t seed, uint64_t key)
{
	struct rng r;

	rng_seed(&r, seed ^ (key * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL));
	rng_next(&r);
	return r;
}

/* First run of a trace agent at or after time t0; 0 when there is none (wrap). */
static long trace_at(const struct trace *tr, int ta, double t0)
{
	long lo = 0, hi = tr->n[ta];

	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;

		if (tr->t[ta][mid] < t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < tr->n[ta] ? lo : 0;
}

static void trace_start(struct sim_lab *lab, const struct trace *tr)
{
	int used[SIM_AGENTS_MAX], nu = 0;
	double t0 = rng_uniform(&lab->rng_lab) * tr->duration;

	for (int ta = 0; ta < tr->nr_agents && nu < SIM_AGENTS_MAX; ta++)
		if (tr->n[ta] > 0)
			used[nu++] = ta;
	for (int a = 0; a < SIM_AGENTS_MAX; a++) {
		int ta = used[a % nu];

		lab->trace_agent[a] = ta;
		lab->trace_pos[a] = a < nu ? trace_at(tr, ta, t0) : (long)rng_below(&lab->rng_lab, (uint64_t)tr->n[ta]);
	}
}

void sim_lab_init(struct sim_lab *lab, const struct sim_dag *g, enum sim_noise noise,
		  double d, double cv, uint64_t seed, const struct trace *tr)
{
	struct rng r;

	memset(lab, 0, sizeof(*lab));
	rng_seed(&r, seed);
	lab->dag = g;
	lab->noise = noise;
	lab->d = d;
	lab->cv = cv;
	lab->culprit = 1 + (int)rng_below(&r, (uint64_t)g->n - 1);
	lab->drift_sign = rng_below(&r, 2) ? 1.0 : -1.0;
	rng_seed(&lab->rng, rng_next(&r));
	lab->measured = xcalloc((size_t)g->n, 1);
	/* Drawn after the first models' state, which so stays as it was. */
	rng_seed(&lab->rng_lab, rng_next(&r));
	lab->seed_levels = rng_next(&r);
	for (int a = 0; a < SIM_AGENTS_MAX; a++) {
		lab->ar[a] = cv * rng_normal(&lab->rng_lab);
		lab->offset[a] = (rng_below(&lab->rng_lab, 2) ? 1 : -1) *
				 (SIM_AGENT_LO + (SIM_AGENT_HI - SIM_AGENT_LO) * rng_uniform(&lab->rng_lab));
	}
	lab->shift_at = SIM_SHIFT_FIRST + (long)rng_below(&lab->rng_lab, SIM_SHIFT_LAST - SIM_SHIFT_FIRST + 1);
	lab->shift = 1 + (rng_below(&lab->rng_lab, 2) ? 1 : -1) * SIM_SHIFT_CVS * cv;
	lab->burst_slow = rng_uniform(&lab->rng_lab) < SIM_BURST_ENTER / (SIM_BURST_ENTER + SIM_BURST_LEAVE);
	lab->burst_s = SIM_BURST_LO + (SIM_BURST_HI - SIM_BURST_LO) * rng_uniform(&lab->rng_lab);
	lab->trace = tr;
	if (noise == NOISE_TRACE && tr)
		trace_start(lab, tr);
}

void sim_lab_release(struct sim_lab *lab)
{
	free(lab->measured);
	free(lab->level);
	lab->measured = NULL;
	lab->level = NULL;
}

long sim_lab_task(struct sim_lab *lab)
{
	return lab->next_task++;
}

/* The bursty lab's factor at time t: its two-state chain, drawn as far as t. */
static double burst_level(struct sim_lab *lab, long t)
{
	while (lab->nr_level <= t) {
		if (lab->nr_level > 0) {
			if (lab->burst_slow) {
				lab->burst_slow = rng_uniform(&lab->rng_lab) >= SIM_BURST_LEAVE;
			} else if (rng_uniform(&lab->rng_lab) < SIM_BURST_ENTER) {
				lab->burst_slow = 1;
				lab->burst_s = SIM_BURST_LO + (SIM_BURST_HI - SIM_BURST_LO) * rng_uniform(&lab->rng_lab);
			}
		}
		if (lab->nr_level == lab->alloc_level) {
			lab->alloc_level = lab->alloc_level ? 2 * lab->alloc_level : 256;
			lab->level = xrealloc(lab->level, (size_t)lab->alloc_level * sizeof(double));
		}
		lab->level[lab->nr_level++] = lab->burst_slow ? 1 - lab->burst_s : 1;
	}
	return lab->level[t];
}

/* The time of agent a's next run on the lab clock. */
static long tick(struct sim_lab *lab, int a)
{
	long t;

	if (lab->round != lab->clock_round) {
		lab->clock_round = lab->round;
		lab->t_start = lab->t_max;
	}
	if (lab->clock[a] < lab->t_start)
		lab->clock[a] = lab->t_start;
	t = lab->clock[a]++;
	if (lab->clock[a] > lab->t_max)
		lab->t_max = lab->clock[a];
	return t;
}

double sim_lab_run(struct sim_lab *lab, int m, int agent, long task)
{
	double mu = SIM_BASE * (sim_lab_is_bad(lab, m) ? 1 - lab->d : 1);
	double z = rng_normal(&lab->rng), v, phi = SIM_AR1_PHI;
	int a = agent < 0 ? 0 : agent % SIM_AGENTS_MAX;
	long t = tick(lab, a);
	struct rng kr;

	switch (lab->noise) {
	case NOISE_LOGNORMAL:
		v = exp(log(mu) + sqrt(log1p(lab->cv * lab->cv)) * z);
		break;
	case NOISE_BIMODAL:
		v = mu * (1 + lab->cv * z);
		if (rng_uniform(&lab->rng) < SIM_OUTLIER_P)
			v *= 1 - (0.25 + 0.15 * rng_uniform(&lab->rng));
		break;
	case NOISE_DRIFT:
		v = mu * (1 + lab->cv * z) *
		    (1 + lab->drift_sign * lab->cv * lab->round / SIM_DRIFT_ROUNDS);
		break;
	case NOISE_AR1:
		lab->ar[a] = phi * lab->ar[a] + sqrt(1 - phi * phi) * lab->cv * z;
		v = mu * (1 + lab->ar[a]);
		break;
	case NOISE_BURSTS:
		v = mu * (1 + lab->cv * z) * burst_level(lab, t);
		break;
	case NOISE_SHIFT:
		v = mu * (1 + lab->cv * z) * (lab->runs >= lab->shift_at ? lab->shift : 1);
		break;
	case NOISE_AGENTS:
		v = mu * (1 + lab->offset[a]) * (1 + lab->cv * z);
		break;
	case NOISE_PERCOMMIT:
		kr = keyed(lab->seed_levels, (uint64_t)m);
		v = mu * (1 + (SIM_PERCOMMIT_LO + (SIM_PERCOMMIT_HI - SIM_PERCOMMIT_LO) * rng_uniform(&kr)) *
			      lab->cv * z);
		break;
	case NOISE_INTERMITTENT:
		/* The change in half the bad commits' runs, at random, at twice its size: d on average. */
		v = mu * (1 + lab->cv * z);
		if (sim_lab_is_bad(lab, m))
			v *= (rng_uniform(&lab->rng) < 0.5 ? 1 - 2 * lab->d : 1) / (1 - lab->d);
		break;
	case NOISE_TASKS:
		kr = keyed(lab->seed_levels, (uint64_t)task);
		v = mu * (1 + lab->cv * rng_normal(&kr)) * (1 + lab->cv / 2 * z);
		break;
	case NOISE_TRACE: {
		int ta = lab->trace_agent[a];

		v = mu * lab->trace->v[ta][lab->trace_pos[a]];
		lab->trace_pos[a] = (lab->trace_pos[a] + 1) % lab->trace->n[ta];
		break;
	}
	default:
		v = mu * (1 + lab->cv * z);
		break;
	}
	/* A run is a positive number; a normal draw 1/cv sigmas out is not a run but a model's edge. */
	if (v <= 0)
		v = mu * 1e-3;
	lab->runs++;
	if (m == 0 || m == lab->dag->n - 1)
		lab->runs_ends++;
	if (!lab->measured[m]) {
		lab->measured[m] = 1;
		lab->builds++;
	}
	return v;
}

void sim_answer_release(struct sim_answer *a)
{
	free(a->set);
	a->set = NULL;
	a->nr_set = 0;
}

int sim_answer_right(const struct sim_answer *a, int culprit)
{
	if (a->verdict == SIM_CULPRIT)
		return a->culprit == culprit;
	if (a->verdict == SIM_RANGE)
		for (int i = 0; i < a->nr_set; i++)
			if (a->set[i] == culprit)
				return 1;
	return 0;
}
