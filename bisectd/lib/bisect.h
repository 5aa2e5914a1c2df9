/*
 * bisect: the probabilistic bisection engine. Pure C, no I/O: the
 * coordinator and the simulation benchmark drive the same code.
 *
 * Commits are 0..n-1 in topological order (parents first): 0 is the good
 * end, n-1 the bad end, and the culprit is one of 1..n-1 (the first commit
 * that measures like bad; the bad end itself can be it). Samples are
 * metric values (> 0; <= 0 is a failed run, counted apart); the engine
 * works on their logarithm, so effects are relative.
 *
 * The posterior over the culprit integrates the unknown good and bad
 * means and the common noise scale out (flat priors on the means,
 * Jeffreys on the scale: a closed-form marginal per split), after setting
 * aside runs that lie far from both ends (a bimodal machine's slow runs).
 * The unit of evidence is a task, not a run: the runs of one task share a
 * level (a burst of load shifts them together), each agent has a level of
 * its own, and the ratio of between-task to within-task variance is
 * averaged over rather than assumed. See docs/ENGINE.md.
 */
#ifndef BISECT_BISECT_H
#define BISECT_BISECT_H

#include <stddef.h>

struct bisect_opts {
	double confidence;   /* stop when one commit holds this much posterior (0.99) */
	double alpha;        /* the ends must differ at this level (0.01) */
	double min_effect;   /* ... and by at least this fraction (0.01) */
	int higher_is_better;/* 1: a regression lowers the metric (throughput) */
	int runs_min;        /* smallest batch of runs per query (1) */
	int runs_max;        /* largest batch (10) */
	int end_runs;        /* first batch at each end (5) */
	int end_runs_max;    /* the ends get topped up to at most this before not-reproduced (30) */
	long budget_runs;    /* stop (undecided) after this many runs in all; 0: derived from the range's
				size and the noise the ends show (bisect_result().budget_runs); < 0: none */
	long budget_builds;  /* stop after this many distinct commits measured; 0: none */
	double build_cost;   /* seconds to build and boot a commit not measured yet (measured: bisect_set_costs) */
	double run_cost;     /* seconds per run */
	int drift;           /* 1: allow a common linear drift of the lab over the job (time = run order) */
	int equal_runs;      /* not-reproduced on no fewer runs of each end than this (0: the engine's
				own, 8 at 0.99): a change that shows in some runs only must have had
				the chance to show (bisect_result().rare_share) */
	unsigned long long coin_seed; /* the confirmation's coin for the order of its pairs (0: the
				engine's own draws; bench-bisect --coin-seed turns it, to tell a
				figure from the coin's luck) */
};
#define BISECT_OPTS_INIT { 0.99, 0.01, 0.01, 1, 1, 10, 5, 30, 0, 0, 60.0, 10.0, 1, 0, 0 }

/*
 * The options a job of these settings runs the engine with (bisectd, and
 * the replay of a kept job): its confidence, alpha, min_effect, budgets
 * and direction; batches of 1 to `runs` a query; the ends' first batch
 * `runs` and at least 5, up to six batches an end.
 */
void bisect_job_opts(struct bisect_opts *o, double confidence, double alpha, double min_effect, long budget_runs,
		     long budget_builds, int higher_is_better, int runs);

struct bisect;

/*
 * parents[i][0..nr_parents[i]) are the parents of i inside 0..n-1, each
 * < i; a commit with none has the good end as its parent. n >= 2.
 * ERR_INVALID for a malformed DAG.
 */
int bisect_new(struct bisect **out, int n, int *const *parents, const int *nr_parents,
	       const struct bisect_opts *opts);
void bisect_free(struct bisect *b);
/*
 * A deep copy of b, independent of it: what b would do next, the copy
 * does too, given the same calls. The coordinator keeps a job's engine
 * with its runs added and steps a copy, so a step costs no rebuild.
 */
struct bisect *bisect_clone(const struct bisect *b);

/* Multiplies commit i's prior by w (> 0), e.g. for commits touching named paths. */
void bisect_weight_prior(struct bisect *b, int i, double w);

/*
 * One run's value at commit i, from task `task` (any id unique in the job:
 * runs with the same id belong to one task and share its level), measured
 * by agent `agent` (any id >= 0: each agent has a level of its own, learnt
 * from the commits it shares with others, the ends above all), answering
 * a query of kind `kind` (BISECT_Q_SEARCH, _CONFIRM or _EARLY: a
 * confirmation run is a sample and evidence for the paired test of the
 * confirmation). Runs are added in the order they were taken.
 */
void bisect_add_run(struct bisect *b, int i, double value, long task, int agent, int kind);
/*
 * bisect_add_run() for a run as the store keeps it (its task's id, agent
 * id and query kind): an agent id out of int's range is agent 0, and a
 * kind other than _CONFIRM or _EARLY a search run. bisectd's engine and
 * the replay of a kept job both add runs this way.
 */
void bisect_add_stored_run(struct bisect *b, int i, double value, long long task, long long agent, long long kind);
/* One run at commit i in a task of its own, on agent 0 (a search query). */
void bisect_add_sample(struct bisect *b, int i, double value);
/* The same, as part of a confirmation (a task of its own, agent 0). */
void bisect_add_confirm_sample(struct bisect *b, int i, double value);
/* Commit i cannot be measured (build or boot failed). */
void bisect_mark_skipped(struct bisect *b, int i);
/*
 * The ends were found to differ before (an engine rebuilt from stored
 * samples): go on searching even if later runs at the ends blur the
 * difference, rather than measuring them again from the start.
 */
void bisect_assume_reproduced(struct bisect *b);
/* The measured mean costs; <= 0 keeps the current value. */
void bisect_set_costs(struct bisect *b, double build_cost, double run_cost);

enum bisect_state {
	BISECT_ENDS,            /* measuring the two ends */
	BISECT_SEARCH,          /* narrowing the posterior */
	BISECT_CONFIRM,         /* interleaved runs of culprit and parent */
	BISECT_DONE,            /* see verdict */
};

enum bisect_verdict {
	VERDICT_NONE,           /* still running */
	VERDICT_CULPRIT,        /* one commit, confirmed, at the asked confidence */
	VERDICT_RANGE,          /* the smallest set holding the confidence, where skipped commits stand
				   between its members */
	VERDICT_NOT_REPRODUCED, /* the bad end is shown not to be worse by min_effect or more, at the
				   job's confidence (a one-sided equivalence, not merely no significant
				   difference) */
	VERDICT_UNDECIDED,      /* the data cannot decide within the budget: no commit holds the
				   confidence, or its confirmation failed, or the ends neither differ
				   nor are shown equal; see the result's numbers */
};

enum { BISECT_Q_SEARCH, BISECT_Q_CONFIRM, BISECT_Q_EARLY };

struct bisect_query {
	int commit;
	int runs;
	int confirm;            /* BISECT_Q_CONFIRM: part of the confirmation, which comes as a pair (parent,
				   culprit), or for a merge three (parent, merge, other parent), each chain
				   to run on one agent, interleaved; with k >= 2, two such chains (chain 1
				   and 2), one an agent. Add its runs with bisect_add_confirm_sample().
				   BISECT_Q_EARLY: a pair run the same way while others search, before the
				   posterior holds the confidence; its runs are plain samples
				   (bisect_add_sample()): the confirmation counts only runs taken once
				   the posterior holds it. 0: a search query. */
	double mass;            /* posterior mass at or before it (P(it measures bad)) */
	double gain;            /* expected information, bits */
	double cost;            /* expected seconds */
	int chain;              /* 0: a task of its own, any agent. > 0: the queries of one bisect_next()
				   with the same chain go to one agent, one run a task, the queries
				   in turn (A B A B ..., or A B B A where a commit comes twice), so
				   that the agent's level and the lab's level at the time cancel
				   between them: the ends, and every pair */
};

/*
 * Updates the posterior and chooses up to k queries (k idle agents),
 * skipping commits marked in busy (n bytes, may be NULL: commits being
 * measured now). Returns how many it wrote to out (which has room for
 * BISECT_MAX_QUERIES(k)); a chain of queries takes one agent. 0 with the state DONE
 * means the job is over; 0 otherwise means wait for the busy ones.
 */
int bisect_next(struct bisect_query *out, struct bisect *b, int k, const unsigned char *busy);

/* The most queries one bisect_next() with k agents may write: out needs this much room. */
#define BISECT_MAX_QUERIES(k) (2 * (k) + 6)

struct bisect_result {
	enum bisect_state state;
	enum bisect_verdict verdict;
	int culprit;            /* best commit, -1 when none */
	double confidence;      /* its posterior probability; for a culprit confirmed with its runs in two
				   modes (a change in some runs only), at most opts.confidence: capped,
				   less than posterior, where the model's two levels do not hold */
	double posterior;       /* its posterior probability under the model, capped or not */
	int *set;               /* smallest set of commits holding opts.confidence (or all mass when less); owned by b */
	int nr_set;
	double set_mass;
	double ends_change;     /* bad end against good end, fraction (hmeans) */
	double ends_p;          /* one-sided Mann-Whitney p of the ends */
	long runs, builds;      /* so far: all runs, distinct commits measured */
	int outliers;           /* runs set aside as far from both ends */
	const char *why;        /* a sentence on the last decision; borrowed */
	/* The numbers an undecided (or any) answer is read with. */
	double effect;          /* bad group against good on the most probable split, fraction (< 0: worse
				   for a higher-is-better metric), agents' levels taken out */
	double effect_lo, effect_hi; /* its 95% interval */
	double task_cv;         /* noise of one task's mean between tasks of a commit (level and runs), as
				   a fraction; 0 until two tasks of a commit were seen */
	double run_cv;          /* noise between the runs of one task, as a fraction */
	long budget_runs;       /* the budget in force: the job's, or the one derived; 0 none yet */
	long more_runs;         /* undecided: about how many more runs at this noise would decide it
				   (-1: no estimate: the effect does not show at all) */
	int failed_confirm;     /* the commit whose confirmation failed last, -1 none: never the answer */
	double rare_share;      /* not-reproduced: a change that shows in fewer than this share of runs
				   could have missed every run of the bad end (at the claim's error); else 0 */
	double slow_good, slow_bad; /* a change in the slow runs only, bisected on their share: the shares
				   of slow runs in the good and the bad group (most probable split), or
				   the good and bad end's where it ended undecided on them set aside; else 0 */
};

/* The state after the last bisect_next(); pointers inside are valid until the next call. */
void bisect_result(struct bisect_result *r, const struct bisect *b);

/*
 * The confirmation's sequential paired test on d[0..np), the differences
 * of neighbouring parent and culprit runs (log units, worse is lower, so
 * a true culprit gives d > 0): a one-sided paired t test at 4, 6, ...
 * pairs, passing at a look below 0.003 or at `last` pairs below 0.011
 * (0.02 of false passes over all looks for any last up to 24). unit1_var,
 * the variance of a one-run task's mean the model sees, is its prior (5
 * degrees of freedom at 2 unit1_var), 0 for none; pairs noisier than the
 * prior are read at their own variance. Returns 1 when a look passes; *p
 * is the least p of the looks made.
 */
int bisect_pairs_pass(double *p, const double *d, int np, int last, double unit1_var);

/*
 * The one-sided p of an exact sign-flip test of d[0..n) (n <= 24): the
 * share of the 2^n ways of giving the |d| signs whose sum is at least
 * the sum of d. It assumes nothing of the differences' distribution,
 * only that a pair of two equal commits is as likely either way round;
 * it is never below 2^-n. The confirmation requires it beside the t test
 * once a commit has been measured at both groups' levels (a change that
 * shows in some runs only).
 */
double bisect_pairs_flip_p(const double *d, int n);

/* That test's first look, and the degrees of freedom its variance prior is given. */
#define BISECT_PAIRS_FIRST_LOOK 4
#define BISECT_PAIRS_PRIOR_DOF 5

/* The p a look at n pairs must be below, the last look at `last` pairs. */
double bisect_pairs_boundary(int n, int last);

/* Posterior probability that commit i measures bad (the culprit is an ancestor-or-self of it). */
double bisect_bad_mass(struct bisect *b, int i);
/* 1 when commit i cannot be measured: marked skipped, or only failed runs so far (three or more). */
int bisect_skipped(const struct bisect *b, int i);
/* Posterior probability that commit i is the culprit. */
double bisect_posterior(const struct bisect *b, int i);
/* The k most probable commits into idx/p (sorted); returns how many. */
int bisect_top(int *idx, double *p, const struct bisect *b, int k);
/* How many candidates hold commit i's posterior (i included): more than 1 where no run tells them apart. */
int bisect_alike(const struct bisect *b, int i);

/*
 * The agents' levels, for the report's table: a commit's pooled hmean
 * mixes its agents' levels in the share of its runs each took. The
 * reference agent is the one with the most runs (of equals, the least
 * id); -1 with fewer than two.
 */
long long bisect_reference_agent(const struct bisect *b);
/*
 * Agent `agent`'s level against the reference, as the metric's relative
 * change: -0.12 where its runs of a commit read 12% lower than the
 * reference's. Read from the commits both ran (the weighted median of the
 * differences of their runs' medians there, which no change enters);
 * where they share none, from the engine's offsets against the groups'
 * centres of its most probable split, if both ran commits of one side of
 * it; else NAN: not known (one ran only good commits, the other only bad
 * ones, and the change and their levels cannot be told apart). 0 for the
 * reference, an agent without runs, or one agent. Agents past the
 * model's slots share the last slot's level.
 */
double bisect_agent_level(const struct bisect *b, long long agent);

#endif
