/*
 * bisect_internal: what the engine's rooms share (bisect.c and
 * bisect_*.c): its struct and constants, a few small helpers, and the
 * calls one room makes into another. Only the engine includes it; its
 * contract with the rest of bisectd is bisect.h. The rooms stand in
 * layers, each calling only those below it: the model, the slow runs,
 * the search, the confirmation, the budget, the ends, and bisect.c.
 */
#ifndef BISECT_INTERNAL_H
#define BISECT_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "err.h"
#include "rng.h"
#include "stats.h"
#include "util.h"

#define FAR_SIGMAS 5.0     /* runs this far from both groups are set aside */
#define SLOW_MIN_SIGMAS 2.5 /* however many slow runs, one this close to its group is a normal run */
#define OFFSET_ROUNDS 3    /* the agents' levels and the groups' centres, each taken again with the other */
#define TOPLIST 16        /* the most probable commits are always looked at too */
#define SHORTLIST 12       /* exact ancestor masses computed per quantile target */
#define MIN_GAIN 1e-3      /* bits: below this nothing left is worth measuring */
#define NR_LAMBDA 4
#define NV (3 * NR_LAMBDA)  /* per commit and agent: the tasks' W, S, T at each lambda */
#define AGENT_SLOTS 16      /* agents with a level of their own; more share the last slot */
#define STOP_MARGIN 0.75  /* search until the error left is this share of what the job allows */
#define ENDS_DOUBT 0.1      /* the ends' runs kept this likely to show min_effect: measure the ends, not the search */
#define ENDS_DOUBT_RUNS 6    /* ... up to this many times end_runs_max an end */
#define ENDS_NEAR 20         /* the ends' pairs kept show them equal, every pair at this many times the error: */
#define ENDS_NEAR_RUNS 2     /* ... measure them on, up to this many times end_runs_max an end */
#define REFRESH_RUNS 25   /* an end not measured for this many runs gets one more */
#define SPECULATE 0.5     /* with 3+ agents, pair the likely culprit with its parent from here */
#define CONFIRM_START 0.9 /* confirm the most probable commit from here on */
#define CONFIRM_TWO_CHAINS 2 /* with this many agents or more the pairs come in two chains, one an agent */
#define CONFIRM_ALPHA 0.02 /* the paired test of the confirmation, over all its looks */
#define CONFIRM_MIN_PAIRS BISECT_PAIRS_FIRST_LOOK /* two rounds of A B B A or B A A B: a level
						   moving within pairs cancels */
#define CONFIRM_MAX_PAIRS 24
#define FLIP_HALF (CONFIRM_MAX_PAIRS / 2) /* the sign-flip test enumerates 2^FLIP_HALF sums a half */
#define LEVELS_APART 6.0    /* two groups this many sigmas apart: a commit with runs near each is in both */
#define FLIP_STRICT 4.0     /* ... at this fraction of each look's boundary */
#define MIXED_BAD 0.99      /* ... a commit at least this likely to measure bad */
#define MIXED_TWICE_APART 3.5 /* ... or any commit with two runs near each of two groups this many sigmas apart */
#define NOISIER_P 0.001     /* the bad end's runs spread beyond the good end's at this p: the sign-flip test too */
#define NOISIER_DOF 5
#define MODES_APART 4.5   /* the bad end's two modes this many sds apart: the sign-flip test too, */
#define MODES_SHARE_P 0.05 /* ... its share of runs in the lower one above the good end's at this p */
#define FLIP_WHY ", t and sign-flip tests: the runs show two modes"
#define CONFIRM_ASIDE_FACTOR 4 /* the confirmation ends when its pairs, kept and left out, reach this many times its last look */
#define CONFIRM_LAST_MIN 12  /* the last look at no fewer pairs: one slow run must not decide eight */
#define CONFIRM_OWN_MIN 4    /* a side's confirmation runs before one FAR_SIGMAS below their median is set aside */
/*
 * The confirmation looks at its pairs after every round (4, 6, ... pairs)
 * and passes at the first look whose one-sided p is below
 * CONFIRM_LOOK_P, or at its last (twice the pairs a fixed test's power
 * needs, 24 at most) below CONFIRM_LAST_P: a Haybittle-Peto boundary, at
 * CONFIRM_ALPHA overall for any last look up to 24 pairs (found by
 * 200,000 simulated sequences of normal differences; docs/ENGINE.md).
 * At 7% / 4% it passes after 6.8 pairs on average against 9.7 for the
 * two looks at 0.01 it replaces (the first at the pairs 0.9 power needs,
 * the second at twice those), with the power of those at the effect seen
 * and more than a constant boundary's below it.
 */
#define CONFIRM_LOOK_P 0.003
#define CONFIRM_LAST_P 0.011
#define BUDGET_FACTOR 4.0 /* the derived budget: this many times what the noise needs at the least */
#define BUDGET_MIN 60
#define BUDGET_KEPT_MIN (1.0 / 3) /* runs set aside grow the budget up to 3x, no further */
#define BUDGET_MAX 5000
#define RATE_MIN_RUNS 8      /* runs at each end before their shares of slow runs may set the mode */
#define RATE_MIN_SIGMAS 3.0  /* a slow run lies at least this far below its agent's level */
#define RATE_PRIOR 0.5       /* Jeffreys' Beta(1/2, 1/2) on a group's share of slow runs */
#define RATE_MIN_FAST 6      /* runs not slow at each end: the test of a steady change has power, and the bad end is in two modes */
#define RATE_NEAR_SIGMAS 2.0 /* ... and where two of the bad end's runs lie this near the good level, the ends are measured on */
#define RATE_GAP 3.0         /* the slow band: this many of its sds (or s) above its median depth; the gap to it from this many s */
#define RATE_BETWEEN_SHARE 10 /* at most one in this many of the ends' runs between the modes */
#define RATE_ABOVE_MOST 2     /* runs far above their level the ends may have, or 5% of them */
#define RATE_ENDS_RUNS 2     /* the ends measured on to tell a change in the slow runs: to this many end_runs_max */
#define RATE_STEADY_P 0.01   /* the bad end's other runs shown apart from the good end's at this p (by half min_effect): a steady change */
#define UPPER_MIN_RUNS 8     /* bisect_upper_centre() of fewer runs is their median */

/* A task: runs that were taken together, on one agent, and share a level. */
struct task {
	long id;
	int commit, agent, kind;  /* agent: its slot */
	int n;                    /* runs kept */
	double s, q, t;           /* their sum, sum of squares, sum of times */
};

struct cdata {
	double *x;          /* log values of successful runs, sign-flipped so lower is worse */
	double *t;          /* when each was taken: the engine's run counter */
	int *task;          /* the task of each run (index into b->tasks) */
	int nx, cap;
	int failures;
	int skipped;
	uint64_t *anc;      /* ancestors-or-self, once measured */
	double *v;          /* [AGENT_SLOTS][NV]: its tasks' sums, over the runs kept */
	uint32_t agents;    /* slots with runs kept here */
	double kept;        /* runs kept */
	int nconfirm;       /* runs from confirmation queries */
};

/* Sums over a set of tasks, per agent and lambda, that every split shares. */
struct totals {
	double a[AGENT_SLOTS][NR_LAMBDA][6]; /* W, S, Q, T, TT, XT */
	double logw[NR_LAMBDA];              /* sum of log w over the tasks */
	double ssw, dofw;                    /* within-task sum of squares and its degrees of freedom */
	int m, nagents;                      /* tasks, agents with runs */
};

/* One lambda's fit of a split: the log marginal and the shift of the bad group. */
struct lfit {
	double lm, delta, var, dof, scale2;
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
	double *sp;          /* the bad group's sums at the most probable split, [nslots * NV] */
	size_t sp_cap;
	struct cdata *c;
	int *measured;       /* commits with samples, in first-measured order */
	int nr_measured;
	uint64_t *scratch;   /* one bitset */
	struct task *tasks;
	int nr_tasks, tasks_cap;
	int *task_hash;      /* open addressing over task ids: index + 1, 0 empty */
	int task_hash_size;
	int agent_id[AGENT_SLOTS];
	int nr_slots;
	long next_own_task;  /* bisect_add_sample()'s tasks */
	int last_commit, last_slot, last_unit; /* the last run's: a stretch of runs at one commit is one unit */
	struct totals tot;

	enum bisect_state state;
	enum bisect_verdict verdict;
	int culprit, confirm_parent, failed_confirm;
	int two_modes;            /* the culprit confirmed with the runs in two modes: its claim capped */
	int *set;
	int nr_set;
	double set_mass;
	double ends_change, ends_p;
	int ends_known;            /* the last bisect_ends_test() compared the ends (ends_change, ends_p are its) */
	int ends_pairs;            /* the ends were decided on this many of their chains' pairs, 0: by the model */
	int ends_near_equal;       /* their pairs kept show them equal, every pair nearly (bisect_ends_test()) */
	double mu_g, mu_b, sigma;  /* of the most probable split (run level, robust, agents' levels out) */
	double off[AGENT_SLOTS];   /* each agent's level against the others, for the outlier rules (ax()) */
	int off_map;               /* the split off was taken against (bisect_agent_offsets()); <= 0: the ends */
	double scale2, unit1_var;  /* the model's s^2, and the variance of a one-run task's mean */
	double task_var;           /* ... and of a task of runs_max runs */
	double lambda;             /* posterior mean of lambda at the most probable split */
	double delta, delta_sd;    /* the bad group's shift there, log units (lower is worse) */
	double slow_rate, slow_depth; /* the lab's slow runs: how often, how deep (see bisect_slow_cut()) */
	int rate;                  /* the change is in the slow runs, whose share it bisects (bisect_rate_mode()) */
	int rate_maybe;            /* ... it may be: the ends are measured on to tell */
	int rate_aside;            /* ended undecided, the change in the slow runs set aside (bisect_change_set_aside()) */
	double rate_lvl[AGENT_SLOTS], rate_depth; /* a run this far below its agent's level is slow */
	double rate_band;          /* ... and one this far below lies in the slow mode's band */
	double rate_g, rate_b;     /* the shares of slow runs of the good and bad groups, most probable split */
	double rate_eg, rate_eb;   /* ... and of the good and bad ends, which set the derived budget */
	int map;
	int outliers;
	long runs, builds;
	long budget;               /* the runs budget in force, 0 none yet */
	long more_runs;
	char why[320];
};

enum { ENDS_UNCLEAR, ENDS_DIFFER, ENDS_EQUAL };

/* bisect_model.c: the model of the runs and the posterior over culprits */
void bisect_ancestors(uint64_t *bits, const struct bisect *b, int i);
double bisect_median(const double *x, int n);
double bisect_robust_sd(const double *x, int n, double med);
double bisect_upper_centre(const double *x, int n);
void bisect_agent_offsets(struct bisect *b, int map);
int bisect_kept_runs(unsigned char *keep, const struct bisect *b, const struct cdata *c, double sigma);
void bisect_add_task(struct totals *T, const struct task *tk, double *v);
void bisect_task_sums(struct bisect *b, double sigma, int only_ends, struct totals *T);
double bisect_shift_of(struct bisect *b, const struct totals *T, const double *vb, const double *xs, int nx,
		       double *p_below);
double bisect_slow_cut(const struct bisect *b);
void bisect_update_posterior(struct bisect *b);
double bisect_anc_mass(struct bisect *b, int q);
void bisect_smallest_set(struct bisect *b);

/* bisect_slow.c: runs in two modes, and a change in the share of slow runs */
int bisect_levels_mixed(struct bisect *b);
int bisect_bad_end_noisier(const struct bisect *b);
int bisect_bad_end_two_modes(const struct bisect *b);
int bisect_rate_slow(const struct bisect *b, const struct cdata *c, int r);
int bisect_rate_mode(struct bisect *b);
int bisect_rate_in_band(const struct bisect *b, int i);
void bisect_rate_posterior(struct bisect *b);
double bisect_rate_info(double p, int r, double qg, double qb);

/* bisect_search.c: what to measure next */
double bisect_task_sigmas(const struct bisect *b, int r, int n0);
void bisect_best_batch(struct bisect_query *q, const struct bisect *b, double p, int built, int n0);
int bisect_choose_search(struct bisect_query *out, struct bisect *b, int k, const unsigned char *busy);

/* bisect_confirm.c: the confirmation's interleaved pairs */
#define PAIRS_OWN_CUT 2 /* bisect_neighbour_pairs()'s confirm: the confirmation's pairs, own_cuts() too */
int bisect_neighbour_pairs(double *d, int *aside, int *agent, const struct bisect *b, int a, int c, int confirm);
int bisect_pairs_needed(const struct bisect *b);
int bisect_confirm_last(const struct bisect *b);
int bisect_confirm_step(struct bisect_query *out, struct bisect *b, int k, const unsigned char *busy, int top,
			double p_top, double stop);

/* bisect_budget.c: the derived budget of runs, and what more would decide */
void bisect_set_budget(struct bisect *b);
void bisect_estimate_more(struct bisect *b);
long bisect_ends_more_runs(const struct bisect *b);
int bisect_budget_spent(const struct bisect *b);

/* bisect_ends.c: the ends, shown to differ, shown equal, or neither */
int bisect_ends_test(struct bisect *b);
double bisect_rare_share(const struct bisect *b);
int bisect_ends_round(struct bisect_query *out, const struct bisect *b, int k);
int bisect_ends_busy(const struct bisect *b, const unsigned char *busy);
int bisect_ends_step(struct bisect_query *out, struct bisect *b, int k, const unsigned char *busy);
void bisect_ends_kept_shift(struct bisect *b, double *worse, double *better);
int bisect_change_set_aside(struct bisect *b, int top, double ends_worse, double ends_better);

/* Small helpers every room uses. */
static inline int has_bit(const uint64_t *bits, int i)
{
	return (bits[i / 64] >> (i % 64)) & 1;
}

static inline int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Run r of commit c with its agent's level taken out: what the outlier rules compare. */
static inline double ax(const struct bisect *b, const struct cdata *c, int r)
{
	return c->x[r] - b->off[b->tasks[c->task[r]].agent];
}

/* Whether commit j is in c's ancestors (itself included). */
static inline int has_anc(const struct cdata *c, int j)
{
	return has_bit(c->anc, j);
}

/* The mean of x[0..n) and its standard error (n >= 2). */
static inline void mean_se(const double *x, int n, double *mean, double *se)
{
	double m = 0, ss = 0;

	for (int i = 0; i < n; i++)
		m += x[i];
	m /= n;
	for (int i = 0; i < n; i++)
		ss += (x[i] - m) * (x[i] - m);
	*mean = m;
	*se = sqrt(ss / (n - 1) / n);
}

/* Parent j of commit i (j < its parents, or 0 for a commit with none: the good end stands in). */
static inline int parent_at(const struct bisect *b, int i, int j)
{
	return b->npar[i] ? b->par[i][j] : 0;
}

static inline int parent_of(const struct bisect *b, int i)
{
	return parent_at(b, i, 0);
}

/* min_effect as a shift of the model: log units, worse is negative. */
static inline double bisect_min_shift(const struct bisect *b)
{
	return b->o.higher_is_better ? log1p(-fmin(b->o.min_effect, 0.99)) : -log1p(b->o.min_effect);
}

static inline int bisect_finish(struct bisect *b, enum bisect_verdict v, const char *why)
{
	if (b->state != BISECT_ENDS)
		bisect_smallest_set(b);
	b->state = BISECT_DONE;
	b->verdict = v;
	snprintf(b->why, sizeof(b->why), "%s", why);
	return 0;
}

#endif
