/*
 * policies: the four bisection policies the benchmark compares, and an
 * oracle to measure them by. The three baselines split the remaining
 * candidates as git bisect does (by ancestor count, policy.h's rule,
 * computed here in O(n) per step from the closed form of ancestry) and
 * differ in how they classify a commit; bisectd drives the engine in
 * bisect.h; the oracle is told the lab (its comment below).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "err.h"
#include "policy.h"
#include "sim.h"
#include "stats.h"
#include "trace.h"
#include "util.h"

enum { UNKNOWN, GOOD, BAD };

/* The candidate set of a classic bisection on the DAG. */
struct split {
	const struct sim_dag *g;
	unsigned char *cls;
	unsigned char *cand;
	int *prefix;      /* prefix[i]: candidates among 0..i-1 */
	int *mass;
	int total;
};

static void split_init(struct split *s, const struct sim_dag *g)
{
	s->g = g;
	s->cls = xcalloc((size_t)g->n, 1);
	s->cand = xcalloc((size_t)g->n, 1);
	s->prefix = xcalloc((size_t)g->n + 1, sizeof(int));
	s->mass = xcalloc((size_t)g->n, sizeof(int));
	s->cls[0] = GOOD;
	s->cls[g->n - 1] = BAD;
	memset(s->cand + 1, 1, (size_t)g->n - 1);
	s->total = g->n - 1;
}

static void split_release(struct split *s)
{
	free(s->cls);
	free(s->cand);
	free(s->prefix);
	free(s->mass);
}

/* Commit m measured bad (its ancestors keep the culprit) or good. */
static void split_mark(struct split *s, int m, int bad)
{
	const struct sim_dag *g = s->g;

	s->cls[m] = bad ? BAD : GOOD;
	s->total = 0;
	for (int i = 0; i < g->n; i++) {
		if (s->cand[i] && sim_dag_is_ancestor(g, i, m) != bad)
			s->cand[i] = 0;
		s->total += s->cand[i];
	}
}

/* Candidates among the ancestors-or-self of m. */
static int split_count(const struct split *s, int m)
{
	int pre = s->g->pre[m], lo = s->g->lo[m];
	int c = s->prefix[pre + 1];

	if (lo > pre)
		c += s->prefix[m + 1] - s->prefix[lo];
	return c;
}

/*
 * Up to k unclassified commits closest to the quantiles 1/(k+1) ..
 * k/(k+1) of the candidates by ancestor count, ties to the lower index:
 * the same choice as policy_next() (sim_policy_selftest() checks it).
 */
static int split_next(struct split *s, int k, int *out)
{
	const struct sim_dag *g = s->g;
	int picked = 0;

	for (int i = 0; i < g->n; i++)
		s->prefix[i + 1] = s->prefix[i] + s->cand[i];
	for (int m = 0; m < g->n; m++) {
		int a = s->cls[m] == UNKNOWN ? split_count(s, m) : 0;

		s->mass[m] = a > 0 && a < s->total ? a : -1;
	}
	for (int j = 1; j <= k; j++) {
		double target = (double)s->total * j / (k + 1), best_d = 0;
		int best = -1;

		for (int m = 0; m < g->n; m++) {
			double d;

			if (s->mass[m] < 0)
				continue;
			d = fabs(s->mass[m] - target);
			if (best < 0 || d < best_d) {
				best = m;
				best_d = d;
			}
		}
		if (best < 0)
			break;
		s->mass[best] = -1;
		out[picked++] = best;
	}
	return picked;
}

static int split_answer(const struct split *s)
{
	if (s->total != 1)
		return -1;
	for (int i = 0; i < s->g->n; i++)
		if (s->cand[i])
			return i;
	return -1;
}

/* The runs of one commit, kept on the log scale. */
#define SAMPLES_MAX 64
struct samples {
	int commit;
	int n;
	double v[SAMPLES_MAX];
	double lv[SAMPLES_MAX];
};

/*
 * One or more synchronous rounds: query i gets runs[i] more runs on agent
 * i % k, in round base + i / k, as one task.
 */
static void run_batch(struct sim_lab *lab, int k, struct samples **q, const int *runs, int nq)
{
	int base = lab->round;

	for (int i = 0; i < nq; i++) {
		long task = sim_lab_task(lab);

		lab->round = base + i / k;
		for (int r = 0; r < runs[i] && q[i]->n < SAMPLES_MAX; r++) {
			double v = sim_lab_run(lab, q[i]->commit, i % k, task);

			q[i]->v[q[i]->n] = v;
			q[i]->lv[q[i]->n++] = log(v);
		}
	}
	lab->round = base + (nq + k - 1) / k;
}

/* Measures the two ends with `runs` each. */
static void measure_ends(struct sim_lab *lab, int k, struct samples *good, struct samples *bad,
			 int runs)
{
	struct samples *q[2] = { good, bad };
	int r[2] = { runs, runs };

	good->commit = 0;
	good->n = 0;
	bad->commit = lab->dag->n - 1;
	bad->n = 0;
	run_batch(lab, k, q, r, 2);
}

/*
 * The skeleton the three baselines share: each round asks the split for up
 * to k commits (k-section: a person with k machines splits into k + 1
 * parts at once), classifies them with decide(), and marks them all. A
 * contradictory round (the candidates run out) names nothing.
 */
struct baseline {
	struct samples good, bad;
	struct samples picks[8];
	double thresh;
	/* Classifies picks[0..np): writes bad[i]; may run more rounds. */
	void (*decide)(struct baseline *bl, struct sim_lab *lab, int k, int np, int *bad);
	int runs;
};

static int baseline_bisect(struct baseline *bl, struct sim_lab *lab, int k)
{
	struct split s;
	int picks[8], bad[8], answer;

	if (k > 8)
		k = 8;
	split_init(&s, lab->dag);
	while (s.total > 1) {
		int np = split_next(&s, k, picks);
		struct samples *q[8];
		int r[8];

		if (np == 0)
			break;
		for (int i = 0; i < np; i++) {
			bl->picks[i].commit = picks[i];
			bl->picks[i].n = 0;
			q[i] = &bl->picks[i];
			r[i] = bl->runs;
		}
		run_batch(lab, k, q, r, np);
		bl->decide(bl, lab, k, np, bad);
		for (int i = 0; i < np && s.total > 0; i++)
			split_mark(&s, picks[i], bad[i]);
	}
	answer = split_answer(&s);
	split_release(&s);
	return answer;
}

/* (a) git bisect run, one run per step: bad when nearer the bad end's run. */
static void decide_git(struct baseline *bl, struct sim_lab *lab, int k, int np, int *bad)
{
	double g = bl->good.v[0], b = bl->bad.v[0];

	(void)lab;
	(void)k;
	for (int i = 0; i < np; i++)
		bad[i] = fabs(bl->picks[i].v[0] - b) < fabs(bl->picks[i].v[0] - g);
}

/* A baseline names one commit or, when its split ran out, nothing; it claims no confidence. */
static void baseline_answer(struct sim_answer *ans, int answer)
{
	ans->culprit = answer;
	ans->verdict = answer >= 0 ? SIM_CULPRIT : SIM_UNDECIDED;
}

static int trial_git(struct sim_answer *ans, struct sim_lab *lab, int k, const struct sim_limits *lim)
{
	struct baseline bl = { .decide = decide_git, .runs = 1 };

	(void)lim;
	measure_ends(lab, k, &bl.good, &bl.bad, 1);
	baseline_answer(ans, baseline_bisect(&bl, lab, k));
	return 0;
}

const struct sim_policy sim_policy_git = {
	"git-bisect-1run",
	"1 run per commit, the ends included; bad when below the midpoint of the ends' runs",
	trial_git,
	0,
};

/* (b) fixed 5 runs: Welch t on the logs against the good end, one-sided 0.05. */
#define FIXED_RUNS 5
#define FIXED_ALPHA 0.05

static void decide_fixed(struct baseline *bl, struct sim_lab *lab, int k, int np, int *bad)
{
	(void)lab;
	(void)k;
	for (int i = 0; i < np; i++)
		bad[i] = stats_welch_t(bl->picks[i].lv, (size_t)bl->picks[i].n, bl->good.lv,
				       (size_t)bl->good.n, ALT_LESS) < FIXED_ALPHA;
}

static int trial_fixed(struct sim_answer *ans, struct sim_lab *lab, int k, const struct sim_limits *lim)
{
	struct baseline bl = { .decide = decide_fixed, .runs = FIXED_RUNS };

	(void)lim;
	measure_ends(lab, k, &bl.good, &bl.bad, FIXED_RUNS);
	baseline_answer(ans, baseline_bisect(&bl, lab, k));
	return 0;
}

const struct sim_policy sim_policy_fixed5 = {
	"fixed-5",
	"5 runs per commit, the ends included; bad when Welch t on ln(value) against the good end "
	"is significant, one-sided, 0.05",
	trial_fixed,
	0,
};

/*
 * (c) Pinpoint's compare: p = min(p_MW, p_KS), both two-sided; different
 * below 0.01, same above 0.1 (the floor Pinpoint puts under its high
 * thresholds; its performance mode derives a threshold per sample size
 * and magnitude, not modelled), else unknown: 10 more runs on each side,
 * up to 40, and then same.
 */
#define PP_RUNS 10
#define PP_MAX 40
#define PP_LOW 0.01
#define PP_HIGH 0.1

enum { PP_SAME, PP_DIFFERENT, PP_UNKNOWN };

static int pp_compare(const struct samples *a, const struct samples *b)
{
	double p_mw = stats_mann_whitney(a->v, (size_t)a->n, b->v, (size_t)b->n, ALT_TWO_SIDED);
	double p_ks = stats_ks_2samp(a->v, (size_t)a->n, b->v, (size_t)b->n);
	double p = fmin(p_mw, p_ks);

	if (p < PP_LOW)
		return PP_DIFFERENT;
	if (p > PP_HIGH)
		return PP_SAME;
	return PP_UNKNOWN;
}

/*
 * Compares picks (or the bad end) against the good end, adding rounds of
 * 10 more runs to the unknown ones and topping the good end up to the
 * largest of them, until each is decided.
 */
static void pp_resolve(struct baseline *bl, struct sim_lab *lab, int k, struct samples **x, int nx,
		       int *res)
{
	for (;;) {
		struct samples *q[9];
		int r[9], nq = 0, need = 0;

		for (int i = 0; i < nx; i++) {
			res[i] = pp_compare(x[i], &bl->good);
			if (res[i] == PP_UNKNOWN && x[i]->n >= PP_MAX)
				res[i] = PP_SAME;
			if (res[i] == PP_UNKNOWN) {
				q[nq] = x[i];
				r[nq++] = PP_RUNS;
				if (x[i]->n + PP_RUNS > need)
					need = x[i]->n + PP_RUNS;
			}
		}
		if (nq == 0)
			return;
		if (bl->good.n < need) {
			q[nq] = &bl->good;
			r[nq++] = need - bl->good.n;
		}
		run_batch(lab, k, q, r, nq);
	}
}

static void decide_pp(struct baseline *bl, struct sim_lab *lab, int k, int np, int *bad)
{
	struct samples *x[8];
	int res[8];

	for (int i = 0; i < np; i++)
		x[i] = &bl->picks[i];
	pp_resolve(bl, lab, k, x, np, res);
	for (int i = 0; i < np; i++)
		bad[i] = res[i] == PP_DIFFERENT;
}

static int trial_pp(struct sim_answer *ans, struct sim_lab *lab, int k, const struct sim_limits *lim)
{
	struct baseline bl = { .decide = decide_pp, .runs = PP_RUNS };
	struct samples *x[1] = { &bl.bad };
	int res[1];

	(void)lim;
	measure_ends(lab, k, &bl.good, &bl.bad, PP_RUNS);
	/* Pinpoint first checks that the ends differ. */
	pp_resolve(&bl, lab, k, x, 1, res);
	if (res[0] == PP_DIFFERENT)
		baseline_answer(ans, baseline_bisect(&bl, lab, k));
	else
		ans->verdict = SIM_NOT_REPRODUCED;
	return 0;
}

const struct sim_policy sim_policy_pinpoint = {
	"pinpoint",
	"compare with the good end: 10 runs each, min(p_MW, p_KS) < 0.01 bad, > 0.1 good, "
	"else 10 more each up to 40 then good; the ends must differ first",
	trial_pp,
	0,
};

#define MAX_QUERIES BISECT_MAX_QUERIES(16)

/*
 * The chain a query belongs to: > 0, the queries of one bisect_next() that
 * go to one agent, their runs interleaved (the ends, every pair); -1 the
 * same for a pair the engine named no chain for; 0 a task of its own.
 */
static int query_chain(const struct bisect_query *q)
{
	if (q->chain)
		return q->chain;
	return q->confirm ? -1 : 0;
}

static const char *verdict_name(enum bisect_verdict v)
{
	static const char *const names[] = { "none", "culprit", "range", "not-reproduced", "undecided" };

	return v <= VERDICT_UNDECIDED ? names[v] : "?";
}

/*
 * BENCH_WHY=1: why a wrong answer came out; BENCH_WHY=2: also why nothing
 * was named, capped or not (to study the engine).
 */
static void why(const struct sim_lab *lab, int k, const struct sim_answer *ans, const struct bisect_result *r,
		const char *how)
{
	const char *env = getenv("BENCH_WHY");
	int named = ans->verdict == SIM_CULPRIT || ans->verdict == SIM_RANGE;

	if (!env || sim_answer_right(ans, lab->culprit) || (!named && atoi(env) < 2))
		return;
	fprintf(stderr, "why: %s N=%d %.0f%%/%.0f%% k=%d culprit %d: %s %s %d (%.4f; set of %d, mass %.4f), "
		"%ld runs, effect %.4f [%.4f, %.4f], task_cv %.4f run_cv %.4f, budget %ld, more %ld, "
		"failed confirm %d: %s\n",
		lab->trace ? lab->trace->name : sim_noise_name(lab->noise), lab->dag->n - 1, lab->d * 100, lab->cv * 100, k, lab->culprit, how,
		verdict_name(r->verdict), r->culprit, r->confidence, r->nr_set, r->set_mass, lab->runs, r->effect,
		r->effect_lo, r->effect_hi, r->task_cv, r->run_cv, r->budget_runs, r->more_runs, r->failed_confirm,
		r->why ? r->why : "");
}

/* The engine's final word as the benchmark's answer. */
static void engine_answer(struct sim_answer *ans, const struct bisect_result *r, const struct sim_limits *lim)
{
	switch (r->verdict) {
	case VERDICT_CULPRIT:
		ans->verdict = SIM_CULPRIT;
		ans->culprit = r->culprit;
		ans->confidence = r->confidence;
		break;
	case VERDICT_RANGE:
		ans->verdict = SIM_RANGE;
		ans->nr_set = r->nr_set;
		ans->set = xmalloc((size_t)(r->nr_set ? r->nr_set : 1) * sizeof(int));
		memcpy(ans->set, r->set, (size_t)r->nr_set * sizeof(int));
		ans->confidence = r->set_mass;
		break;
	case VERDICT_NOT_REPRODUCED:
		ans->verdict = SIM_NOT_REPRODUCED;
		break;
	default:
		ans->verdict = SIM_UNDECIDED;
		break;
	}
	if (lim->max_runs && r->runs >= lim->max_runs)
		ans->capped = 1;
}

/*
 * (d) bisectd: the engine decides everything; one round per bisect_next().
 * Query i of a round is a task of its own on agent i; the pair (the
 * confirmation, or an early pair) takes one agent, its runs interleaved
 * ABAB, each run a one-run task, as the coordinator queues them.
 */
/* BENCH_TRACE=C also prints every run of the trials whose culprit is C. */
static void add_run(struct bisect *b, struct sim_lab *lab, const struct bisect_query *q, int agent, long task)
{
	double v = sim_lab_run(lab, q->commit, agent, task);

	if (getenv("BENCH_TRACE") && (atoi(getenv("BENCH_TRACE")) == lab->culprit || atoi(getenv("BENCH_TRACE")) < 0))
		fprintf(stderr, "run %ld: commit %d agent %d task %ld kind %d: %.2f\n", lab->runs, q->commit, agent,
			task, q->confirm, v);
	bisect_add_run(b, q->commit, v, task, agent, q->confirm);
}

static int trial_bisectd(struct sim_answer *ans, struct sim_lab *lab, int k, const struct sim_limits *lim)
{
	struct bisect_opts opts = BISECT_OPTS_INIT;
	struct bisect_query q[MAX_QUERIES];
	struct bisect_result r;
	struct bisect *b;
	int rc;

	if (k > 16)
		k = 16;
	opts.build_cost = lim->build_cost;
	opts.run_cost = lim->run_cost;
	opts.budget_runs = lim->max_runs;
	opts.coin_seed = lim->coin_seed;
	rc = bisect_new(&b, lab->dag->n, lab->dag->parents, lab->dag->nr_parents, &opts);
	if (rc < 0)
		return rc;
	for (;;) {
		int nq = bisect_next(q, b, k, NULL), agent[MAX_QUERIES], link[MAX_QUERIES], nlinks[MAX_QUERIES];
		int next_agent = 0, most = 0, links = 0;

		/* BENCH_TRACE=C: each decision of the trials whose culprit is C (to study the engine). */
		if (getenv("BENCH_TRACE") && (atoi(getenv("BENCH_TRACE")) == lab->culprit || atoi(getenv("BENCH_TRACE")) < 0)) {
			bisect_result(&r, b);
			fprintf(stderr, "trace k=%d round %d, %ld runs: %s |", k, lab->round, lab->runs, r.why);
			for (int i = 0; i < nq; i++) {
				fprintf(stderr, " %d x%d%s", q[i].commit, q[i].runs,
					q[i].confirm == BISECT_Q_CONFIRM ? "c" : q[i].confirm ? "e" : "");
				if (query_chain(&q[i]))
					fprintf(stderr, "@%d", query_chain(&q[i]));
			}
			fprintf(stderr, "\n");
		}

		if (nq == 0) {
			bisect_result(&r, b);
			if (r.state != BISECT_DONE) {
				rc = err_set(ERR_FAIL, "bisect_next gave no query with no agent busy");
				goto out;
			}
			engine_answer(ans, &r, lim);
			/* "A regression of min_effect or more is ruled out at confidence": a claim, right or wrong. */
			if (ans->verdict == SIM_NOT_REPRODUCED)
				ans->confidence = opts.confidence, ans->ruled_out = opts.min_effect;
			why(lab, k, ans, &r, "answer");
			break;
		}
		if (lab->round >= lim->max_rounds || (lim->max_runs && lab->runs >= lim->max_runs)) {
			ans->capped = 1;
			bisect_result(&r, b);
			why(lab, k, ans, &r, "capped, best");
			break;
		}
		/*
		 * Agents in the order the queries come: one a task, one a chain;
		 * link: a query's place in its chain (nlinks: the chain's members
		 * so far, kept at its first).
		 */
		for (int i = 0; i < nq; i++) {
			int c = query_chain(&q[i]), j;

			for (j = 0; c && j < i && query_chain(&q[j]) != c; j++)
				;
			if (c && j < i) {
				agent[i] = agent[j];
				link[i] = nlinks[j]++;
			} else {
				agent[i] = next_agent++ % k;
				link[i] = 0;
				nlinks[i] = 1;
			}
			links = link[i] + 1 > links ? link[i] + 1 : links;
		}
		for (int i = 0; i < nq; i++) {
			long task;

			if (query_chain(&q[i])) {
				most = q[i].runs > most ? q[i].runs : most;
				continue;
			}
			task = sim_lab_task(lab);
			for (int j = 0; j < q[i].runs; j++)
				add_run(b, lab, &q[i], agent[i], task);
		}
		/*
		 * The chains: each on its agent, runs interleaved A B A B, each run
		 * a task of its own, and the agents in step, as the coordinator
		 * takes their runs: every chain's first link, then every chain's
		 * second (A's good end, B's good end, A's bad end, B's bad end).
		 */
		for (int j = 0; j < most; j++)
			for (int e = 0; e < links; e++)
				for (int i = 0; i < nq; i++)
					if (query_chain(&q[i]) && link[i] == e && j < q[i].runs)
						add_run(b, lab, &q[i], agent[i], sim_lab_task(lab));
		lab->round++;
	}
out:
	bisect_free(b);
	return rc;
}

const struct sim_policy sim_policy_bisectd = {
	"bisectd",
	"bisect.h's engine, one bisect_next() per round handing out up to k queries",
	trial_bisectd,
	0,
};

/*
 * (e) oracle: probabilistic bisection told what no real policy knows, the
 * lab's true levels (1000 at good commits, 1000 (1 - d) at bad ones) and
 * its noise (a run's log is normal with sd sqrt(ln(1 + cv^2))). It is not
 * a baseline to beat but a yardstick: the runs the search alone needs with
 * nothing to learn, no ends measured, no model of a lab's structure and no
 * confirmation. Each round puts one run at the commit whose ancestor mass
 * is nearest each quantile 1/(k+1) .. k/(k+1), and it names the most
 * probable commit once it holds ORACLE_STOP, bisectd's stop at a
 * confidence of 0.99. It believes the independent models; under any other
 * it is wrong more often than it claims. Run it by name (--policy oracle).
 */
#define ORACLE_STOP 0.9925

static int trial_oracle(struct sim_answer *ans, struct sim_lab *lab, int k, const struct sim_limits *lim)
{
	const struct sim_dag *g = lab->dag;
	double *lp = xcalloc((size_t)g->n, sizeof(double)), *post = xcalloc((size_t)g->n, sizeof(double));
	double *S = xcalloc((size_t)g->n, sizeof(double));
	double sd = sqrt(log1p(lab->cv * lab->cv)), lg = log(SIM_BASE), lb = log(SIM_BASE * (1 - lab->d));
	int *q = xcalloc((size_t)k, sizeof(int));

	for (;;) {
		double m = -INFINITY, z = 0, top = -1;
		int best = -1, nq = 0;

		for (int j = 1; j < g->n; j++)
			m = fmax(m, lp[j]);
		for (int j = 1; j < g->n; j++)
			z += post[j] = exp(lp[j] - m);
		for (int j = 1; j < g->n; j++) {
			post[j] /= z;
			S[j] = S[j - 1] + post[j];
			if (post[j] > top) {
				top = post[j];
				best = j;
			}
		}
		if (top >= ORACLE_STOP) {
			ans->verdict = SIM_CULPRIT;
			ans->culprit = best;
			ans->confidence = top;
			break;
		}
		if (lab->round >= lim->max_rounds || (lim->max_runs && lab->runs >= lim->max_runs)) {
			ans->capped = 1;
			break;
		}
		for (int t = 1; t <= k; t++) {
			double target = (double)t / (k + 1), near = INFINITY;
			int at = -1;

			for (int i = 1; i < g->n - 1; i++) {
				double e = fabs(sim_dag_mass(g, S, i) - target);
				int dup = 0;

				for (int u = 0; u < nq; u++)
					dup |= q[u] == i;
				if (e < near && !dup) {
					near = e;
					at = i;
				}
			}
			if (at >= 0)
				q[nq++] = at;
		}
		for (int u = 0; u < nq; u++) {
			double x = log(sim_lab_run(lab, q[u], u, sim_lab_task(lab)));
			double good = -(x - lg) * (x - lg) / (2 * sd * sd), bad = -(x - lb) * (x - lb) / (2 * sd * sd);

			for (int j = 1; j < g->n; j++)
				lp[j] += sim_dag_is_ancestor(g, j, q[u]) ? bad : good;
		}
		lab->round++;
	}
	free(lp);
	free(post);
	free(S);
	free(q);
	return 0;
}

const struct sim_policy sim_policy_oracle = {
	"oracle",
	"probabilistic bisection told the true levels and noise: the runs the search alone needs (by name only)",
	trial_oracle,
	1,
};

const struct sim_policy *const sim_policies[] = {
	&sim_policy_git, &sim_policy_fixed5, &sim_policy_pinpoint, &sim_policy_bisectd, &sim_policy_oracle, NULL,
};

/* The O(n) split against policy_next() on random runs of both shapes. */
int sim_policy_selftest(void)
{
	struct rng r;
	int rc = 0;

	rng_seed(&r, 42);
	for (int t = 0; t < 200 && rc == 0; t++) {
		struct sim_dag *g = sim_dag_new(8 + (int)rng_below(&r, 300), t % 2 ? SHAPE_MERGES : SHAPE_LINEAR,
						(uint64_t)t);
		int k = 1 + (int)rng_below(&r, 4), culprit = 1 + (int)rng_below(&r, (uint64_t)g->n - 1);
		enum commit_class *cls = xcalloc((size_t)g->n, sizeof(*cls));
		unsigned char *in_c = xcalloc((size_t)g->n, 1);
		struct policy *p;
		struct split s;

		if ((rc = policy_new(&p, g->n, g->parents, g->nr_parents)) < 0)
			break;
		split_init(&s, g);
		cls[0] = CLASS_GOOD;
		cls[g->n - 1] = CLASS_BAD;
		for (;;) {
			int a[8], b[8], na, nb;
			int total = policy_candidates(in_c, p, cls);

			na = split_next(&s, k, a);
			nb = policy_next(b, p, cls, NULL, k);
			if (total != s.total || na != nb || memcmp(a, b, (size_t)na * sizeof(int))) {
				rc = err_set(ERR_FAIL, "split disagrees with policy_next (trial %d)", t);
				break;
			}
			if (na == 0)
				break;
			/* A noisy oracle: one answer in five is flipped. */
			for (int i = 0; i < na && s.total > 0; i++) {
				int bad = sim_dag_is_ancestor(g, culprit, a[i]) ^ (rng_below(&r, 5) == 0);

				split_mark(&s, a[i], bad);
				cls[a[i]] = bad ? CLASS_BAD : CLASS_GOOD;
			}
			if (s.total == 0)
				break;
		}
		split_release(&s);
		policy_free(p);
		free(cls);
		free(in_c);
		sim_dag_free(g);
	}
	return rc;
}
