/* sim: synthetic histories, planted culprits and lab noise. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "policy.h"
#include "sim.h"
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

const char *sim_noise_name(enum sim_noise noise)
{
	static const char *const names[NOISE_MAX] = { "normal", "lognormal", "bimodal", "drift" };

	return names[noise];
}

const char *sim_shape_name(enum sim_shape shape)
{
	return shape == SHAPE_LINEAR ? "linear" : "merges";
}

void sim_lab_init(struct sim_lab *lab, const struct sim_dag *g, enum sim_noise noise,
		  double d, double cv, uint64_t seed)
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
}

void sim_lab_release(struct sim_lab *lab)
{
	free(lab->measured);
	lab->measured = NULL;
}

double sim_lab_run(struct sim_lab *lab, int m)
{
	double mu = SIM_BASE * (sim_lab_is_bad(lab, m) ? 1 - lab->d : 1);
	double z = rng_normal(&lab->rng), v;

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
	default:
		v = mu * (1 + lab->cv * z);
		break;
	}
	lab->runs++;
	if (m == 0 || m == lab->dag->n - 1)
		lab->runs_ends++;
	if (!lab->measured[m]) {
		lab->measured[m] = 1;
		lab->builds++;
	}
	return v;
}
