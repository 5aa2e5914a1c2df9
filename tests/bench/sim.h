/*
 * sim: a synthetic lab for the bisection benchmark. It makes commit
 * histories (linear, or a main line with side branches merged back), plants
 * a culprit, and answers "run the benchmark once at commit m" with a value
 * drawn from one of the noise models below. Policies (five of them, behind
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
 * The mass of b's ancestors-or-self, from S, the prefix sums of a weight
 * per commit (S[i] = w[0] + ... + w[i]): O(1) by the closed form.
 */
static inline double sim_dag_mass(const struct sim_dag *g, const double *S, int b)
{
	if (g->lo[b] <= g->pre[b] + 1)
		return S[b];
	return S[g->pre[b]] + S[b] - S[g->lo[b] - 1];
}
/*
 * Compares the closed form with policy.h's ancestry bitsets over all
 * pairs; 0 when they agree, -1 (with a message in err_msg()) otherwise.
 */
int sim_dag_check(const struct sim_dag *g);

/*
 * Noise on a metric of base 1000, higher is better; commits at or after
 * the culprit measure 1000 * (1 - d). With z standard normal, fresh for
 * every run:
 *   normal:    mu * (1 + cv z)
 *   lognormal: exp(ln mu + s z), s = sqrt(ln(1 + cv^2)) (the cv of the
 *              log-normal is exactly cv; its median is mu)
 *   bimodal:   normal, and with probability 0.05 the run is an outlier,
 *              25-40% (uniform) slower
 *   drift:     normal times (1 + sign * cv * t / SIM_DRIFT_ROUNDS), t the
 *              round the run happens in (0 for the first), sign +-1 drawn
 *              per trial: the machine drifts by one cv every
 *              SIM_DRIFT_ROUNDS rounds, whichever policy runs on it
 * Those four are the independent models (a run knows nothing of the runs
 * before it, bar drift's slope). The others put the structure of a real
 * shared lab in (STATISTICS.md, "What a real lab's noise looks like"):
 *   ar1:       mu * (1 + e), e AR(1) over each agent's own runs, phi
 *              SIM_AR1_PHI, marginal sd cv (its first value drawn from
 *              the stationary law)
 *   bursts:    normal times 1 - s while the lab is slow: one lab clock for
 *              all agents, slow periods entered with probability
 *              SIM_BURST_ENTER per run, left with SIM_BURST_LEAVE (a
 *              geometric length of 20 runs on average), s uniform in
 *              15-25% per period; the lab starts in its stationary state
 *              (slow 29% of the time). A CPU hog switched on and off.
 *   shift:     normal, and from the trial's run number T (uniform in
 *              20..60, counting every agent's runs) on, the whole lab
 *              times 1 +- 2 cv
 *   agents:    normal times 1 + o_a, agent a's fixed offset o_a uniform in
 *              1-5% with a random sign
 *   percommit: mu * (1 + f_m cv z), commit m's factor f_m uniform in
 *              [0.5, 2] (per trial and commit)
 *   tasks:     mu * (1 + l_t) * (1 + cv z / 2), task t's level l_t ~ N(0,
 *              cv): the runs of one task sit together
 *   trace:     a recorded trace replayed (trace.h): sim agent a takes the
 *              runs of trace agent a mod A in time order, from the first
 *              run at or after a time drawn per trial (so agents see the
 *              trace's lab-wide bursts together; a sim agent beyond the
 *              trace's A starts at a random run of its own), wrapping at
 *              the end; mu times value / the trace's median. cv is not
 *              used.
 * The lab clock: each agent's runs follow one another, and a round starts
 * when the longest batch of the one before it has ended.
 */
enum sim_noise {
	NOISE_NORMAL, NOISE_LOGNORMAL, NOISE_BIMODAL, NOISE_DRIFT,
	NOISE_AR1, NOISE_BURSTS, NOISE_SHIFT, NOISE_AGENTS, NOISE_PERCOMMIT, NOISE_TASKS, NOISE_INTERMITTENT, NOISE_TRACE,
	NOISE_MAX
};
#define SIM_DRIFT_ROUNDS 40
#define SIM_BASE 1000.0
#define SIM_OUTLIER_P 0.05
#define SIM_AR1_PHI 0.8
#define SIM_BURST_ENTER 0.02
#define SIM_BURST_LEAVE 0.05
#define SIM_BURST_LO 0.15
#define SIM_BURST_HI 0.25
#define SIM_SHIFT_FIRST 20
#define SIM_SHIFT_LAST 60
#define SIM_SHIFT_CVS 2.0
#define SIM_AGENT_LO 0.01
#define SIM_AGENT_HI 0.05
#define SIM_PERCOMMIT_LO 0.5
#define SIM_PERCOMMIT_HI 2.0
#define SIM_AGENTS_MAX 16   /* agents a lab keeps apart; agent ids wrap beyond it */

struct trace;

const char *sim_noise_name(enum sim_noise noise);
/* The model called name ("trace" for every trace:NAME), or -1. */
int sim_noise_parse(const char *name);
/* normal, lognormal, bimodal, drift: the models the first targets judge. */
int sim_noise_independent(enum sim_noise noise);
/*
 * The noise one task shows under a model: the sd of a run's relative
 * value over a job, every level in it (lab, agent, task, commit) as the
 * model's parameters give it; for a trace, its task_noise. cv for the
 * independent models, where the first targets keep change / cv. d, the
 * change, for intermittent, whose bad runs spread by it.
 */
double sim_task_noise(enum sim_noise noise, double d, double cv, const struct trace *tr);
const char *sim_shape_name(enum sim_shape shape);

/* One trial: a job on a history with a planted culprit, and its counters. */
struct sim_lab {
	const struct sim_dag *dag;
	enum sim_noise noise;
	double d, cv;
	int culprit;         /* 1..n-1, uniform */
	double drift_sign;   /* +-1 */
	struct rng rng;      /* the noise of each run */
	int round;           /* the round runs happen in now; policies advance it */
	long runs;           /* all runs */
	long runs_ends;      /* of them, at commit 0 or n-1 */
	long builds;         /* distinct commits measured, the ends included */
	unsigned char *measured;
	long next_task;      /* sim_lab_task() */

	/* The lab clock (see above). */
	int clock_round;
	long t_start, t_max;
	long clock[SIM_AGENTS_MAX];

	/* The structured models' state, drawn at init or from the streams below. */
	struct rng rng_lab;  /* the lab's own course: bursts */
	uint64_t seed_levels;/* percommit's factors, tasks' levels: hashed per commit or task */
	double ar[SIM_AGENTS_MAX];
	double offset[SIM_AGENTS_MAX];
	long shift_at;
	double shift;        /* the level from shift_at on: 1 +- 2 cv */
	double *level;       /* bursts: the lab's factor at each time, drawn as far as needed */
	long nr_level, alloc_level;
	int burst_slow;
	double burst_s;
	const struct trace *trace;
	int trace_agent[SIM_AGENTS_MAX];
	long trace_pos[SIM_AGENTS_MAX];
};

/*
 * Sets up trial `seed`: the culprit and drift direction come from the seed
 * alone, so every policy and agent count sees the same trials; so do the
 * structured models' lab course, offsets and levels. tr: the trace for
 * NOISE_TRACE (borrowed, outlives the lab), else NULL.
 */
void sim_lab_init(struct sim_lab *lab, const struct sim_dag *g, enum sim_noise noise,
		  double d, double cv, uint64_t seed, const struct trace *tr);
void sim_lab_release(struct sim_lab *lab);
/* A task id not used before in this trial (0, 1, ...). */
long sim_lab_task(struct sim_lab *lab);
/*
 * One run at commit m in the current round, by agent `agent` (0-based)
 * as part of task `task` (a task's runs are taken together, on one
 * agent); counted.
 */
double sim_lab_run(struct sim_lab *lab, int m, int agent, long task);
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
	uint64_t coin_seed;            /* ... and its confirmation's coin (bisect_opts.coin_seed) */
};

/* What a policy names at the end of a trial. */
enum sim_verdict {
	SIM_UNDECIDED,       /* nothing: the policy gave up, or the data could not decide */
	SIM_CULPRIT,         /* one commit */
	SIM_RANGE,           /* a set of commits, right when it holds the culprit */
	SIM_NOT_REPRODUCED,  /* nothing: the ends were not found to differ */
};

struct sim_answer {
	enum sim_verdict verdict;
	int culprit;         /* SIM_CULPRIT: the commit; else -1 */
	int *set, nr_set;    /* SIM_RANGE: the set (owned, sim_answer_release()) */
	double confidence;   /* claimed: the culprit's posterior, or the set's mass; NAN when the policy
				claims none */
	int capped;          /* a limit (the trial's or the policy's budget) stopped it */
	double ruled_out;    /* SIM_NOT_REPRODUCED: the regression (a fraction) the policy claims ruled out at
				confidence; 0 when it claims none */
};

void sim_answer_release(struct sim_answer *a);
/* 1 when the answer names the culprit or a set holding it. */
int sim_answer_right(const struct sim_answer *a, int culprit);

/*
 * A bisection policy (iperf3's struct protocol): trial() bisects lab's job
 * with k agents in synchronous rounds (each round hands out at most k
 * queries, one per agent, each a task of runs; all finish before the next
 * round) and fills *ans (which it starts with nothing named). Returns 0,
 * or -1 when the code under test failed (message in err_msg()).
 */
struct sim_policy {
	const char *name;
	const char *about;   /* one line for the report's header */
	int (*trial)(struct sim_answer *ans, struct sim_lab *lab, int k, const struct sim_limits *lim);
	int by_name;         /* run only when --policy names it */
};

extern const struct sim_policy sim_policy_git;
extern const struct sim_policy sim_policy_fixed5;
extern const struct sim_policy sim_policy_pinpoint;
extern const struct sim_policy sim_policy_bisectd;
extern const struct sim_policy sim_policy_oracle;

/* NULL-terminated, in report order. */
extern const struct sim_policy *const sim_policies[];

/*
 * Checks the baselines' O(n) split against policy.h's policy_next() on
 * random histories and noisy answers; 0 when they always agree.
 */
int sim_policy_selftest(void);

#endif
