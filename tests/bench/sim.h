/*
 * sim: a synthetic lab for the bisection benchmark. It makes commit
 * histories (linear, or a main line with side branches merged back), plants
 * a culprit, and answers "run the benchmark once at commit m" with a value
 * drawn from one of the noise models below. Policies (four of them, behind
 * struct sim_policy) drive a lab and name a commit; the harness counts.
 */
#ifndef BENCH_SIM_H
#define BENCH_SIM_H

#include <stdint.h>

#include "rng.h"

/*
 * Commits 0..n-1 in topological order, parents first, as in bisect.h: 0 is
 * the good end, n-1 the bad end. Ancestry is kept in closed form: the
 * ancestors-or-self of i are [0, pre[i]] and [lo[i], i] (a main-line
 * commit has pre[i] = lo[i] = i; a commit on a side branch has pre[i] =
 * the fork point and lo[i] = the branch's first commit). The generators
 * lay commits out so this holds; sim_dag_check() verifies it.
 */
struct sim_dag {
	int n;
	int **parents;       /* parents[i][0..nr_parents[i]), each < i */
	int *nr_parents;
	int *pre, *lo;
	int nr_merges;
};

enum sim_shape { SHAPE_LINEAR, SHAPE_MERGES, SHAPE_MAX };

/*
 * A history of n_cand candidates (n = n_cand + 1 commits). SHAPE_MERGES:
 * every 4-12 main-line commits a side branch of 2-12 commits forks, 1-4
 * more commits land on the main line, and a merge commit joins the two
 * (about one commit in 18 is a merge, 7 in 18 are on a branch). Seeded:
 * the same arguments give the same history. Caller frees.
 */
struct sim_dag *sim_dag_new(int n_cand, enum sim_shape shape, uint64_t seed);
void sim_dag_free(struct sim_dag *g);
/* 1 when a is an ancestor-or-self of b. */
static inline int sim_dag_is_ancestor(const struct sim_dag *g, int a, int b)
{
	return a <= g->pre[b] || (a >= g->lo[b] && a <= b);
}
/*
 * Compares the closed form with policy.h's ancestry bitsets over all
 * pairs; 0 when they agree, -1 (with a message in err_msg()) otherwise.
 */
int sim_dag_check(const struct sim_dag *g);

/*
 * Noise on a metric of base 1000, higher is better; commits at or after
 * the culprit measure 1000 * (1 - d). With z standard normal:
 *   normal:    mu * (1 + cv z)
 *   lognormal: exp(ln mu + s z), s = sqrt(ln(1 + cv^2)) (the cv of the
 *              log-normal is exactly cv; its median is mu)
 *   bimodal:   normal, and with probability 0.05 the run is an outlier,
 *              25-40% (uniform) slower
 *   drift:     normal times (1 + sign * cv * t / SIM_DRIFT_ROUNDS), t the
 *              round the run happens in (0 for the first), sign +-1 drawn
 *              per trial: the machine drifts by one cv every
 *              SIM_DRIFT_ROUNDS rounds, whichever policy runs on it
 */
enum sim_noise { NOISE_NORMAL, NOISE_LOGNORMAL, NOISE_BIMODAL, NOISE_DRIFT, NOISE_MAX };
#define SIM_DRIFT_ROUNDS 40
#define SIM_BASE 1000.0
#define SIM_OUTLIER_P 0.05

const char *sim_noise_name(enum sim_noise noise);
const char *sim_shape_name(enum sim_shape shape);

/* One trial: a job on a history with a planted culprit, and its counters. */
struct sim_lab {
	const struct sim_dag *dag;
	enum sim_noise noise;
	double d, cv;
	int culprit;         /* 1..n-1, uniform */
	double drift_sign;   /* +-1 */
	struct rng rng;      /* the noise */
	int round;           /* the round runs happen in now; policies advance it */
	long runs;           /* all runs */
	long runs_ends;      /* of them, at commit 0 or n-1 */
	long builds;         /* distinct commits measured, the ends included */
	unsigned char *measured;
};

/*
 * Sets up trial `seed`: the culprit and drift direction come from the seed
 * alone, so every policy and agent count sees the same trials.
 */
void sim_lab_init(struct sim_lab *lab, const struct sim_dag *g, enum sim_noise noise,
		  double d, double cv, uint64_t seed);
void sim_lab_release(struct sim_lab *lab);
/* One run at commit m in the current round; counted. */
double sim_lab_run(struct sim_lab *lab, int m);
/* Does commit m measure like the bad end (the culprit is an ancestor-or-self)? */
static inline int sim_lab_is_bad(const struct sim_lab *lab, int m)
{
	return sim_dag_is_ancestor(lab->dag, lab->culprit, m);
}

/* Limits on one trial; a trial that hits one names no culprit. */
struct sim_limits {
	long max_runs;
	int max_rounds;
	double build_cost, run_cost;   /* for bisectd's engine */
};

/*
 * A bisection policy (iperf3's struct protocol): trial() bisects lab's job
 * with k agents in synchronous rounds (each round hands out at most k
 * commits, one per agent, each with a batch of runs; all finish before the
 * next round) and sets *answer to the commit it names, or -1. *capped is
 * set to 1 when a limit stopped it. Returns 0, or -1 when the code under
 * test failed (message in err_msg()).
 */
struct sim_policy {
	const char *name;
	const char *about;   /* one line for the report's header */
	int (*trial)(int *answer, int *capped, struct sim_lab *lab, int k,
		     const struct sim_limits *lim);
};

extern const struct sim_policy sim_policy_git;
extern const struct sim_policy sim_policy_fixed5;
extern const struct sim_policy sim_policy_pinpoint;
extern const struct sim_policy sim_policy_bisectd;

/* NULL-terminated, in report order. */
extern const struct sim_policy *const sim_policies[];

/*
 * Checks the baselines' O(n) split against policy.h's policy_next() on
 * random histories and noisy answers; 0 when they always agree.
 */
int sim_policy_selftest(void);

#endif
