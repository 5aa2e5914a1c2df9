/*
 * bench-bisect: how often each bisection policy names the right commit,
 * and at what cost in runs, builds and rounds, over synthetic lab noise;
 * bisectd's runs against the capacity bound of STATISTICS.md. Seeded:
 * the same flags print the same figures.
 *
 *   bench-bisect [--quick] [--trials N] [--trials-big N] [--seed S]
 *                [--threads T] [--agents K] [--noise LIST] [--n LIST]
 *                [--shape LIST] [--change LIST] [--cv LIST] [--policy LIST]
 *                [--traces DIR] [--selftest]
 *   bench-bisect --pairs [--trials N] [--seed S] [--traces DIR]
 *
 * LISTs are comma-separated: noise names (trace: every trace found,
 * trace:NAME one of them), candidate counts, linear/merges, percentages,
 * policy names (git-bisect-1run fixed-5 pinpoint bisectd, and oracle,
 * run only when named: the yardstick of a search that knows the lab).
 * Results go to stdout, progress to stderr. For bisectd it
 * also prints, per noise model and trace, how often an answer given at a
 * claimed confidence was right (calibration).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bound.h"
#include "pairs.h"
#include "err.h"
#include "policy.h"
#include "bisect.h"
#include "sim.h"
#include "trace.h"
#include "util.h"

#define DELTA 0.01        /* the bound's error probability, the engine's 1 - confidence */
#define ACC_TARGET 0.99
#define RATIO_TARGET 1.75 /* change / cv from which bisectd must reach ACC_TARGET */
#define RIGHT_TARGET 0.95 /* the structured models: right this often, the rest undecided, where
			     change / task noise >= RATIO_TARGET */
#define CALIB_LEVEL 0.99  /* answers claimed at this or more must be right this often, give or take 2 se */
#define QUICK_TRIALS 30
#define QUICK_TRIALS_NEW 100
#define PAIRS_TRIALS 20000  /* --pairs: sequences a row */
#define TRACE_DIR "tests/bench/traces"
#define MAX_LIST 16
#define MAX_TRACES 64
/*
 * Trials at N=16384 unless --trials-big: the engine's decisions cost most
 * there (in the engine of late: about 22 s of CPU for one trial of each of
 * the 96 cases at that size and both agent counts, against 6 s for the 192
 * smaller cases), and 500 would take the default run past two hours on two
 * cores.
 */
#define TRIALS_BIG 100

static const int all_n[] = { 64, 1024, 16384 };
/*
 * 40% is the kernel lab's own change (its udp-rx, 37-42%): run only where
 * --change names it, so that the default grid stays as it was; beside the
 * guest traces' task noise (17.5% idle) it is the one change on the
 * decidable line.
 */
static const int all_change[] = { 2, 7, 12, 30, 40 };
#define NR_CHANGE ((int)(sizeof(all_change) / sizeof(all_change[0])))
#define CHANGE_NAMED_ONLY 40
static const int all_cv[] = { 1, 4, 13 };

struct filter {
	int nr;
	char *item[MAX_LIST];
};

struct opts {
	int trials, trials_set, trials_big, trials_big_set, threads, agents, quick, selftest, pairs;
	uint64_t seed, coin_seed;
	struct filter noise, n, shape, change, cv, policy;
	const char *traces;         /* --traces DIR, NULL: TRACE_DIR when traces are wanted */
};

/* Bins of claimed confidence: [0.5, 0.9), [0.9, 0.99), [0.99, 0.999), [0.999, 1]; below 0.5 apart. */
#define NR_BINS 4
static const double bin_lo[NR_BINS + 1] = { 0.5, 0.9, 0.99, 0.999, 1.0 };
static const char *const bin_name[NR_BINS] = { "[0.5,0.9)", "[0.9,0.99)", "[0.99,0.999)", "[0.999,1]" };

struct acc {
	long trials, correct, capped;
	long right, wrong, undecided, notrep;   /* named and right (a set holding it), named and wrong */
	long notrep_wrong;  /* of notrep: "ruled out" a regression the case has (counted in wrong too) */
	long regress;       /* trials whose change is the engine's min_effect or more */
	long bin_n[NR_BINS + 1], bin_right[NR_BINS + 1];   /* [NR_BINS]: claimed below 0.5 */
	double bin_claim[NR_BINS + 1];                     /* the claimed confidences, summed */
	double runs, runs_all, builds, rounds;
};

struct sim_case {
	enum sim_noise noise;
	const struct trace *trace;  /* NOISE_TRACE */
	int model;                  /* the calibration table it counts in: noise, or NOISE_TRACE + trace */
	char name[48];              /* noise name, trace:NAME for a trace */
	int n_cand;
	enum sim_shape shape;
	int change, cv;             /* percent; cv 0 for a trace */
	double tau;                 /* the task noise (fraction), sim_task_noise() */
	int trials;
	double bound;               /* runs at candidates, bound_runs() at tau */
	struct sim_limits lim;
	const struct sim_dag *dag;
};

/* One unit of work: all trials of one case, policy and agent count. */
struct unit {
	int c, p, ki;
};

struct bench {
	struct opts o;
	struct sim_case *cases;
	int nr_cases;
	const struct sim_policy *pol[8];
	int nr_pol;
	int ks[2];
	int name_w;                 /* the noise column's width */
	struct trace *traces[MAX_TRACES];
	int nr_traces;
	struct acc *res;            /* [case][policy][ki] */
	int *left;                  /* units not finished, per case */
	struct unit *units;
	int nr_units, next_unit, done_units;
	int failed;
	char fail_msg[256];
	int64_t t0;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static struct acc *res_at(struct bench *B, int c, int p, int ki)
{
	return &B->res[((size_t)c * (size_t)B->nr_pol + (size_t)p) * 2 + (size_t)ki];
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 29);
}

/*
 * The trial's seed depends on the case, not on the filters or the policy.
 * A trace's is keyed by 10, NOISE_TRACE's value before intermittent came
 * in before it, so that its trials, and the figures docs/TESTING.md gives
 * of them, stay as they were.
 */
#define TRACE_SEED_KEY 10
static uint64_t trial_seed(const struct bench *B, const struct sim_case *c, int t)
{
	uint64_t h = mix(B->o.seed, c->noise == NOISE_TRACE ? TRACE_SEED_KEY : (uint64_t)c->noise);

	if (c->trace)
		for (const char *s = c->trace->name; *s; s++)
			h = mix(h, (unsigned char)*s);

	h = mix(h, (uint64_t)c->n_cand);
	h = mix(h, (uint64_t)c->shape);
	h = mix(h, (uint64_t)c->change);
	h = mix(h, (uint64_t)c->cv);
	return mix(h, (uint64_t)t);
}

/* The options bisectd's trials run with (policies.c): their min_effect and confidence. */
static const struct bisect_opts engine_opts = BISECT_OPTS_INIT;

/* An answer claimed at confidence (NAN: none) into its bin of the reliability table. */
static void bin_answer(struct acc *a, double confidence, int right)
{
	int bin = NR_BINS;

	if (isnan(confidence))
		return;
	for (int i = 0; i < NR_BINS; i++)
		if (confidence >= bin_lo[i] && (confidence < bin_lo[i + 1] || i == NR_BINS - 1))
			bin = i;
	a->bin_n[bin]++;
	a->bin_right[bin] += right;
	a->bin_claim[bin] += confidence;
}

/*
 * One trial's answer into a: change is the case's (a fraction), culprit
 * the lab's. A culprit or range is right when it names the culprit or
 * holds it; a not-reproduced that rules out a regression of min_effect
 * or more where the change is that or more is wrong, and judged by its
 * rate among those trials (print_calibration()), not in the bins: its
 * confidence is a test's (how rarely it is claimed of such a change),
 * not a posterior's.
 */
static void count_answer(struct acc *a, double change, const struct sim_answer *ans, int culprit)
{
	a->trials++;
	a->regress += change >= engine_opts.min_effect;
	a->correct += ans->verdict == SIM_CULPRIT && ans->culprit == culprit;
	a->capped += ans->capped;
	if (ans->verdict == SIM_CULPRIT || ans->verdict == SIM_RANGE) {
		int right = sim_answer_right(ans, culprit);

		a->right += right;
		a->wrong += !right;
		bin_answer(a, ans->confidence, right);
	} else if (ans->verdict == SIM_NOT_REPRODUCED) {
		a->notrep++;
		if (ans->ruled_out > 0 && !isnan(ans->confidence) && change >= ans->ruled_out) {
			a->notrep_wrong++;
			a->wrong++;
		}
	} else {
		a->undecided++;
	}
}

static int run_unit(struct bench *B, const struct unit *u, struct acc *a)
{
	const struct sim_case *c = &B->cases[u->c];
	const struct sim_policy *p = B->pol[u->p];

	memset(a, 0, sizeof(*a));
	for (int t = 0; t < c->trials; t++) {
		struct sim_answer ans = { SIM_UNDECIDED, -1, NULL, 0, NAN, 0, 0 };
		struct sim_lab lab;
		int rc;

		sim_lab_init(&lab, c->dag, c->noise, c->change / 100.0, c->cv / 100.0,
			     trial_seed(B, c, t), c->trace);
		rc = p->trial(&ans, &lab, B->ks[u->ki], &c->lim);
		if (rc < 0) {
			sim_answer_release(&ans);
			sim_lab_release(&lab);
			return rc;
		}
		count_answer(a, c->change / 100.0, &ans, lab.culprit);
		sim_answer_release(&ans);
		a->runs += (double)(lab.runs - lab.runs_ends);
		a->runs_all += (double)lab.runs;
		a->builds += (double)lab.builds;
		a->rounds += lab.round;
		sim_lab_release(&lab);
	}
	return 0;
}

static void *worker(void *arg)
{
	struct bench *B = arg;

	for (;;) {
		struct unit u;
		struct acc a;
		int64_t t;
		int rc;

		pthread_mutex_lock(&B->lock);
		if (B->failed || B->next_unit >= B->nr_units) {
			pthread_mutex_unlock(&B->lock);
			return NULL;
		}
		u = B->units[B->next_unit++];
		pthread_mutex_unlock(&B->lock);

		t = now_ms();
		rc = run_unit(B, &u, &a);

		pthread_mutex_lock(&B->lock);
		if (rc < 0) {
			B->failed = 1;
			snprintf(B->fail_msg, sizeof(B->fail_msg), "%s: %s", B->pol[u.p]->name, err_msg());
		} else {
			const struct sim_case *c = &B->cases[u.c];

			*res_at(B, u.c, u.p, u.ki) = a;
			B->left[u.c]--;
			B->done_units++;
			fprintf(stderr, "[%4d/%d %6.0fs] %-9s N=%-5d %-6s %2d%%/%2d%% %-15s k=%d  %5.1fs\n",
				B->done_units, B->nr_units, (double)(now_ms() - B->t0) / 1000,
				c->name, c->n_cand, sim_shape_name(c->shape), c->change, c->cv,
				B->pol[u.p]->name, B->ks[u.ki], (double)(now_ms() - t) / 1000);
		}
		pthread_cond_broadcast(&B->cond);
		pthread_mutex_unlock(&B->lock);
	}
}

/* --- options ------------------------------------------------------------ */

/* The usage text: on stdout with status 0 for --help, on stderr with 2 for a mistake. */
static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: bench-bisect [--quick] [--trials N] [--trials-big N] [--seed S] [--coin-seed C] [--threads T]\n"
		"                    [--agents K] [--noise LIST] [--n LIST] [--shape LIST]\n"
		"                    [--change LIST] [--cv LIST] [--policy LIST] [--traces DIR] [--selftest]\n"
		"       bench-bisect --pairs [--trials N] [--seed S] [--traces DIR]\n"
		"  --n: 64 1024 16384; --shape: linear merges; --cv: 1 4 13 (%%)\n"
		"  --change: 2 7 12 30 (%%), and 40 (the kernel lab's own change; only when named)\n"
		"  --noise: normal lognormal bimodal drift (independent runs), ar1 bursts shift agents\n"
		"           percommit tasks (a real lab's structure), intermittent (a culprit that shows in\n"
		"           half its runs), trace (every " TRACE_DIR "/*.trace, or --traces DIR's), trace:NAME\n"
		"  --coin-seed: bisectd's confirmation draws the order of its pairs with this (0, the default:\n"
		"           the engine's own draws); another value tells a figure from that coin's luck\n"
		"  --policy: git-bisect-1run fixed-5 pinpoint bisectd (the default: all four), and oracle\n"
		"           (probabilistic bisection told the true levels and noise; only when named)\n"
		"  --quick: a smoke run of about a minute: normal and bimodal at four pairs, and N=64, linear,\n"
		"           %d trials, at 7%%/4%% and 30%%/4%% for every structured model, 30%% for a trace\n"
		"  --pairs: the confirmation's paired test alone against three sequential tests (%d sequences a row),\n"
		"           then on windows of the recorded traces (--traces DIR's)\n"
		"  BENCH_WHY=1 (2: also the undecided and capped) says why a wrong answer came out;\n"
		"  BENCH_TRACE=C prints every decision and run of the trials whose culprit is C\n", QUICK_TRIALS_NEW,
		PAIRS_TRIALS);
	exit(status);
}

static void split_list(struct filter *f, char *s)
{
	for (char *tok = strtok(s, ","); tok && f->nr < MAX_LIST; tok = strtok(NULL, ","))
		f->item[f->nr++] = tok;
}

static int wanted(const struct filter *f, const char *name)
{
	if (f->nr == 0)
		return 1;
	for (int i = 0; i < f->nr; i++)
		if (!strcmp(f->item[i], name))
			return 1;
	return 0;
}

static int wanted_int(const struct filter *f, int v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", v);
	return wanted(f, buf);
}

/* A value of --n, --change or --cv that is not on the grid would run no case: say so. */
static void check_ints(const struct filter *f, const int *vals, int nr, const char *opt)
{
	for (int i = 0; i < f->nr; i++) {
		struct filter one = { .nr = 1, .item = { f->item[i] } };
		int found = 0;

		for (int j = 0; j < nr; j++)
			found |= wanted_int(&one, vals[j]);
		if (!found) {
			fprintf(stderr, "bench-bisect: %s %s is not on the grid (--help lists the values)\n", opt,
				f->item[i]);
			exit(2);
		}
	}
}

/* A name in --shape or --policy that none matches would run no case: say so. */
static void check_names(const struct filter *f, const char *const *names, const char *opt)
{
	for (int i = 0; i < f->nr; i++) {
		int found = 0;

		for (int j = 0; names[j]; j++)
			found |= !strcmp(f->item[i], names[j]);
		if (!found) {
			fprintf(stderr, "bench-bisect: unknown %s '%s' (--help lists them)\n", opt, f->item[i]);
			exit(2);
		}
	}
}

static int parse_int(const char *s, int min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > 1000000000L) {
		fprintf(stderr, "bench-bisect: bad number '%s'\n", s);
		exit(2);
	}
	return (int)v;
}

static uint64_t parse_seed(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || !*s || *s == '-') {
		fprintf(stderr, "bench-bisect: bad seed '%s' (a number, decimal or 0x hex)\n", s);
		exit(2);
	}
	return v;
}

/*
 * The options, one row each: a flag sets its int to 1; the others take
 * the next argument as an int of at least min (and set set_off's int to
 * 1 where set_off is not 0), a seed, a list or a string.
 */
enum opt_kind { OPT_FLAG, OPT_INT, OPT_SEED, OPT_LIST, OPT_STR };

struct optdef {
	const char *name;
	enum opt_kind kind;
	size_t off, set_off;
	int min;
};

#define OPT(name, kind, field) { name, kind, offsetof(struct opts, field), 0, 0 }
#define OPT_MIN(name, field, min) { name, OPT_INT, offsetof(struct opts, field), 0, min }
#define OPT_COUNTED(name, field, set) { name, OPT_INT, offsetof(struct opts, field), offsetof(struct opts, set), 1 }

static const struct optdef optdefs[] = {
	OPT("--quick", OPT_FLAG, quick),
	OPT("--selftest", OPT_FLAG, selftest),
	OPT("--pairs", OPT_FLAG, pairs),
	OPT_COUNTED("--trials", trials, trials_set),
	OPT_COUNTED("--trials-big", trials_big, trials_big_set),
	OPT_MIN("--threads", threads, 1),
	OPT_MIN("--agents", agents, 2),
	OPT("--seed", OPT_SEED, seed),
	OPT("--coin-seed", OPT_SEED, coin_seed),
	OPT("--noise", OPT_LIST, noise),
	OPT("--n", OPT_LIST, n),
	OPT("--shape", OPT_LIST, shape),
	OPT("--change", OPT_LIST, change),
	OPT("--cv", OPT_LIST, cv),
	OPT("--policy", OPT_LIST, policy),
	OPT("--traces", OPT_STR, traces),
};

static void set_option(struct opts *o, const struct optdef *d, char *v)
{
	char *at = (char *)o + d->off;

	switch (d->kind) {
	case OPT_FLAG:
		*(int *)at = 1;
		break;
	case OPT_INT:
		*(int *)at = parse_int(v, d->min);
		if (d->set_off)
			*(int *)((char *)o + d->set_off) = 1;
		break;
	case OPT_SEED:
		*(uint64_t *)at = parse_seed(v);
		break;
	case OPT_LIST:
		split_list((struct filter *)at, v);
		break;
	case OPT_STR:
		*(const char **)at = v;
		break;
	}
}

static void parse_args(struct opts *o, int argc, char **argv)
{
	const char *shapes[SHAPE_MAX + 1], *policies[16];
	int np = 0;

	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(o, 0, sizeof(*o));
	o->trials = 500;
	o->trials_big = TRIALS_BIG;
	o->threads = cpus > 0 ? (int)cpus : 2;
	o->agents = 4;
	o->seed = 20240601;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *v = i + 1 < argc ? argv[i + 1] : NULL;
		const struct optdef *d = NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			usage(0);
		if (strncmp(a, "--", 2) || !strcmp(a, "--")) {
			fprintf(stderr, "bench-bisect: unexpected argument '%s'\n", a);
			usage(2);
		}
		for (size_t k = 0; k < sizeof(optdefs) / sizeof(optdefs[0]) && !d; k++)
			if (!strcmp(a, optdefs[k].name))
				d = &optdefs[k];
		if (!d) {
			fprintf(stderr, "bench-bisect: unknown option '%s'\n", a);
			usage(2);
		}
		if (d->kind != OPT_FLAG) {
			if (!v) {
				fprintf(stderr, "bench-bisect: %s needs a value\n", a);
				usage(2);
			}
			i++;
		}
		set_option(o, d, v);
	}
	if (o->agents > 16)
		o->agents = 16;
	check_ints(&o->n, all_n, 3, "--n");
	check_ints(&o->change, all_change, NR_CHANGE, "--change");
	check_ints(&o->cv, all_cv, 3, "--cv");
	for (int sh = 0; sh < SHAPE_MAX; sh++)
		shapes[sh] = sim_shape_name(sh);
	shapes[SHAPE_MAX] = NULL;
	check_names(&o->shape, shapes, "--shape");
	for (int p = 0; sim_policies[p] && np < 15; p++)
		policies[np++] = sim_policies[p]->name;
	policies[np] = NULL;
	check_names(&o->policy, policies, "--policy");
}

/* --- cases -------------------------------------------------------------- */

/*
 * A trial stops (and counts as wrong) past max(300, 4 x bound) runs, at
 * most 600, ends included, or as many rounds. Where change/cv >= 1 the
 * bound is 40 runs or less, so 300 is far beyond what a policy that names
 * the culprit needs; the hopeless cases (2% at a cv of 4% needs 265 runs
 * at N=1024 even with known distributions, 2% at 13% 2700) would
 * otherwise take most of the run time for figures nobody acts on: their
 * accuracy reads "within 600 runs".
 */
static void case_limits(struct sim_case *c, uint64_t coin_seed)
{
	double cap = fmin(fmax(300, 4 * c->bound), 600);

	c->lim.max_runs = (long)cap;
	c->lim.max_rounds = (int)cap;
	/*
	 * The bound counts runs only, as if builds were free. Here a build
	 * costs a tenth of a run (an incremental rebuild): the engine buys a
	 * second run at a commit only where that is worth it in runs too.
	 * With dear builds it trades runs for builds; the builds column
	 * shows that side.
	 */
	c->lim.build_cost = 1.0;
	c->lim.run_cost = 10.0;
	c->lim.coin_seed = coin_seed;
}

/*
 * Judged against the targets: change/cv >= 1.75 under the independent
 * models (exact, in whole percents), change / task noise under the others.
 */
static int ratio_ok(const struct sim_case *c)
{
	if (sim_noise_independent(c->noise))
		return c->change * 100 >= (int)(RATIO_TARGET * 100) * c->cv;
	return c->change / 100.0 >= RATIO_TARGET * c->tau * (1 - 1e-9);
}

/*
 * --quick: a smoke run over the cases STATISTICS.md tabulates, and 30% / 4%,
 * under normal and bimodal noise; and two cells of every structured model
 * (N=64, linear, 7%/4% and 30%/4%: at 7% only ar1 is judged, at 30% all
 * are) and one of every trace (30%), with more trials, for calibration.
 */
static const int quick_pairs[][2] = { { 2, 1 }, { 7, 4 }, { 12, 13 }, { 30, 4 } };

static int quick_case(const struct opts *o, enum sim_noise noise, int n_cand, enum sim_shape shape, int change,
		      int cv)
{
	int pair = 0;

	if (!o->quick)
		return 1;
	if (o->noise.nr == 0 && (noise == NOISE_LOGNORMAL || noise == NOISE_DRIFT))
		return 0;
	if (!sim_noise_independent(noise)) {
		if (o->n.nr == 0 && n_cand != 64)
			return 0;
		if (o->shape.nr == 0 && shape != SHAPE_LINEAR)
			return 0;
		if (noise == NOISE_TRACE)
			return o->change.nr || change == 30;
		if (o->change.nr || o->cv.nr)
			return 1;
		return (change == 7 || change == 30) && cv == 4;
	}
	if (o->n.nr == 0 && n_cand > 1024)
		return 0;
	if (o->change.nr || o->cv.nr)
		return 1;
	for (size_t i = 0; i < sizeof(quick_pairs) / sizeof(quick_pairs[0]); i++)
		pair |= quick_pairs[i][0] == change && quick_pairs[i][1] == cv;
	return pair;
}

/*
 * Is the trace called name wanted? With no --noise, or --noise trace, all
 * are; --noise trace:NAME picks some; --traces DIR adds all of DIR's to a
 * --noise that names no trace.
 */
static int trace_wanted(const struct opts *o, const char *name)
{
	char buf[64];
	int named = 0;

	for (int i = 0; i < o->noise.nr; i++)
		named |= sim_noise_parse(o->noise.item[i]) == NOISE_TRACE;
	snprintf(buf, sizeof(buf), "trace:%s", name);
	return o->noise.nr == 0 || wanted(&o->noise, "trace") || wanted(&o->noise, buf) || (o->traces && !named);
}

static void add_case(struct bench *B, struct sim_dag *dags[][SHAPE_MAX], enum sim_noise noise,
		     const struct trace *tr, int model, int ni, int sh, int change, int cv)
{
	const struct opts *o = &B->o;
	struct sim_case *c = &B->cases[B->nr_cases++];

	c->noise = noise;
	c->trace = tr;
	c->model = model;
	if (tr)
		snprintf(c->name, sizeof(c->name), "trace:%s", tr->name);
	else
		snprintf(c->name, sizeof(c->name), "%s", sim_noise_name(noise));
	c->n_cand = all_n[ni];
	c->shape = sh;
	c->change = change;
	c->cv = cv;
	c->tau = sim_task_noise(noise, change / 100.0, cv / 100.0, tr);
	c->trials = c->n_cand >= 16384 && o->trials_big > 0 ? o->trials_big : o->trials;
	if (o->quick && !o->trials_set)
		c->trials = sim_noise_independent(noise) ? QUICK_TRIALS : QUICK_TRIALS_NEW;
	c->bound = bound_runs(c->n_cand, c->change / 100.0, c->tau, DELTA);
	case_limits(c, o->coin_seed);
	if (!dags[ni][sh])
		dags[ni][sh] = sim_dag_new(all_n[ni], sh, mix(o->seed, (uint64_t)all_n[ni]));
	c->dag = dags[ni][sh];
}

/*
 * The grid: every noise, N, shape, change and cv the filters leave, the
 * structured models and the traces at N = 64 and 1024 unless --n names
 * others (their cost is the first models' again), a trace at each change
 * (its own noise stands for the cv).
 */
static void make_cases(struct bench *B, struct sim_dag *dags[][SHAPE_MAX])
{
	const struct opts *o = &B->o;

	B->cases = xcalloc((size_t)(NOISE_MAX + B->nr_traces) * 3 * SHAPE_MAX * NR_CHANGE * 3, sizeof(*B->cases));
	for (int noise = 0; noise < NOISE_MAX; noise++)
	for (int ti = 0; ti < (noise == NOISE_TRACE ? B->nr_traces : 1); ti++)
	for (int ni = 0; ni < 3; ni++)
	for (int sh = 0; sh < SHAPE_MAX; sh++)
	for (int di = 0; di < NR_CHANGE; di++)
	for (int ci = 0; ci < (noise == NOISE_TRACE ? 1 : 3); ci++) {
		const struct trace *tr = noise == NOISE_TRACE ? B->traces[ti] : NULL;
		int cv = tr ? 0 : all_cv[ci];

		if (tr ? !trace_wanted(o, tr->name) : !wanted(&o->noise, sim_noise_name(noise)))
			continue;
		if (!sim_noise_independent(noise) && o->n.nr == 0 && all_n[ni] > 1024)
			continue;
		if (all_change[di] == CHANGE_NAMED_ONLY && o->change.nr == 0)
			continue;
		if (!wanted_int(&o->n, all_n[ni]) || !wanted(&o->shape, sim_shape_name(sh)) ||
		    !wanted_int(&o->change, all_change[di]) || (!tr && !wanted_int(&o->cv, cv)) ||
		    !quick_case(o, noise, all_n[ni], sh, all_change[di], cv))
			continue;
		add_case(B, dags, noise, tr, tr ? NOISE_TRACE + ti : noise, ni, sh, all_change[di], cv);
	}
}

/* The folder of the recorded traces: --traces DIR's, else TRACE_DIR. */
static const char *traces_dir(const struct opts *o)
{
	return o->traces ? o->traces : TRACE_DIR;
}

/*
 * The traces --noise or --traces asks for, loaded; a malformed one stops
 * the benchmark (its message names the file and line). Returns 0 or -1.
 */
static int load_traces(struct bench *B)
{
	const struct opts *o = &B->o;
	const char *dir = traces_dir(o);
	char **paths;
	int n, rc = 0, want = o->traces || o->noise.nr == 0;

	for (int i = 0; i < o->noise.nr; i++) {
		if (sim_noise_parse(o->noise.item[i]) < 0) {
			fprintf(stderr, "bench-bisect: unknown noise '%s' (--help lists them)\n", o->noise.item[i]);
			return -1;
		}
		want |= sim_noise_parse(o->noise.item[i]) == NOISE_TRACE;
	}
	if (!want)
		return 0;
	if ((n = trace_list(&paths, dir)) < 0) {
		fprintf(stderr, "bench-bisect: %s\n", err_msg());
		return -1;
	}
	for (int i = 0; i < n && rc == 0; i++) {
		struct trace *tr;

		if (B->nr_traces == MAX_TRACES)
			break;
		if ((rc = trace_load(&tr, paths[i])) < 0)
			fprintf(stderr, "bench-bisect: %s\n", err_msg());
		else if (trace_wanted(o, tr->name))
			B->traces[B->nr_traces++] = tr;
		else
			trace_free(tr);
	}
	for (int i = 0; i < o->noise.nr && rc == 0; i++) {
		const char *item = o->noise.item[i];
		int found = 1;

		if (!strcmp(item, "trace"))
			found = B->nr_traces > 0;
		else if (!strncmp(item, "trace:", 6))
			for (int t = found = 0; t < B->nr_traces; t++)
				found |= !strcmp(B->traces[t]->name, item + 6);
		if (!found) {
			fprintf(stderr, "bench-bisect: no trace for '%s' in %s\n", item, dir);
			rc = -1;
		}
	}
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc < 0 ? -1 : 0;
}

/* --- report ------------------------------------------------------------- */

static double frac(const struct acc *a)
{
	return a->trials ? (double)a->correct / (double)a->trials : 0;
}

static double mean(const struct acc *a, double sum)
{
	return a->trials ? sum / (double)a->trials : 0;
}

static void print_header(const struct bench *B)
{
	const struct opts *o = &B->o;
	char acck[16], rndk[16], runsk[16];
	int big = 0;

	for (int i = 0; i < B->nr_cases; i++)
		big |= B->cases[i].n_cand >= 16384;
	printf("# bench-bisect: seed %" PRIu64 ", %d trials per case and agent count", o->seed, o->trials);
	if (o->coin_seed)
		printf(", coin seed %" PRIu64, o->coin_seed);
	if (big && o->trials_big > 0 && o->trials_big != o->trials)
		printf(" (N=16384: %d trials%s)", o->trials_big,
		       o->trials_big_set ? "" : ", fewer for the engine's cost there; --trials-big 500 for the spec");
	if (o->quick && !o->trials_set)
		printf(" (the structured models and traces: %d)", QUICK_TRIALS_NEW);
	printf(", %d cases, %d threads%s\n", B->nr_cases, o->threads, o->quick ? ", --quick" : "");
	printf("# trial t of a case: culprit uniform in 1..N and drift direction from the seed, the same for every policy and agent count\n");
	printf("# metric: base %.0f, higher is better, the culprit and its descendants lower it by d\n", SIM_BASE);
	printf("# noise: normal mu(1+cv z); lognormal exp(ln mu + s z), s = sqrt(ln(1+cv^2)); bimodal: normal and\n"
	       "#   p=%.2f of runs 25-40%% slower; drift: normal times (1 +- cv t/%d), t the round of the run\n",
	       SIM_OUTLIER_P, SIM_DRIFT_ROUNDS);
	printf("# structured: ar1: AR(1) on each agent's runs, phi %.1f, marginal cv; bursts: normal, the lab (one clock)\n"
	       "#   %.0f-%.0f%% slower in periods entered with p=%.2f a run, left with p=%.2f; shift: normal, the lab\n"
	       "#   times 1 +- %.0f cv from run %d-%d on; agents: normal times 1 + a fixed %.0f-%.0f%% +- per agent;\n"
	       "#   percommit: cv times %.1f-%.0f per commit; tasks: a level N(0, cv) per task, runs N(0, cv/2) in it;\n"
	       "#   intermittent: normal, a bad commit's run 2d slower in half its runs at random (d on average)\n"
	       "#   trace:NAME: a recorded trace replayed in time order, agent a on the trace's agent a mod A\n"
	       "# tau%%: the task noise, sd of one run with every level in it (cv for the independent models);\n"
	       "#   the structured models and traces are judged where change / tau >= %.2f\n",
	       SIM_AR1_PHI, SIM_BURST_LO * 100, SIM_BURST_HI * 100, SIM_BURST_ENTER, SIM_BURST_LEAVE, SIM_SHIFT_CVS,
	       SIM_SHIFT_FIRST, SIM_SHIFT_LAST, SIM_AGENT_LO * 100, SIM_AGENT_HI * 100, SIM_PERCOMMIT_LO,
	       SIM_PERCOMMIT_HI, RATIO_TARGET);
	for (int i = 0; i < B->nr_traces; i++) {
		const struct trace *tr = B->traces[i];

		printf("# trace:%s: condition %s, %ld runs in %ld tasks on %d agents over %.0f s, tau %.1f%%, runs in a "
		       "task %.1f%%\n", tr->name, tr->condition ? tr->condition : "-", tr->nr_runs, tr->nr_tasks,
		       tr->nr_agents, tr->duration / 1000, tr->task_noise * 100, tr->run_noise * 100);
	}
	printf("# histories: N candidates + the good end; merges: a side branch of 2-12 commits forks every 4-12\n"
	       "#   main-line commits and is merged back after 1-4 more; one history per N and shape:");
	for (int i = 0, last = -1; i < B->nr_cases; i++) {
		const struct sim_case *c = &B->cases[i];

		if (c->shape == SHAPE_MERGES && c->n_cand > last) {
			printf(" N=%d: %d merges", c->n_cand, c->dag->nr_merges);
			last = c->n_cand;
		}
	}
	printf("\n");
	for (int p = 0; p < B->nr_pol; p++)
		printf("# %-15s %s\n", B->pol[p]->name, B->pol[p]->about);
	printf("# baselines with k agents bisect k-ways (k commits at once at the quantiles 1/(k+1)..k/(k+1))\n");
	printf("# acc: exact culprit named, with 1 and %d agents; runs: at commits other than the two ends, 1 agent;\n"
	       "#   +ends: all runs; builds: distinct commits measured, ends included; rnd1/rnd%d: synchronous rounds;\n"
	       "#   runs%d: runs with %d agents; /bnd: runs and +ends over the bound log2(N)/C + log2(1/%.2f)/C1;\n"
	       "#   cap: trials stopped at min(max(300, 4 x bound), 600) runs or rounds (counted wrong), 1 and k agents;\n"
	       "#   und: trials that named nothing (undecided, not reproduced, capped), wrong: named a commit or a set\n"
	       "#   without the culprit, or not reproduced with min_effect or more ruled out where the change is\n"
	       "#   that or more, 1 and k agents\n",
	       B->ks[1], B->ks[1], B->ks[1], B->ks[1], DELTA);
	snprintf(acck, sizeof(acck), "acc%d", B->ks[1]);
	snprintf(rndk, sizeof(rndk), "rnd%d", B->ks[1]);
	snprintf(runsk, sizeof(runsk), "runs%d", B->ks[1]);
	printf("%-*s %5s %-6s %3s %3s %5s %6s  %-15s %6s %6s %7s %7s %6s %6s %6s %7s %5s %5s %4s %4s %5s\n",
	       B->name_w, "noise", "N", "dag", "d%", "cv%", "tau%", "bound", "policy", "acc1", acck, "runs", "+ends",
	       "builds", "rnd1", rndk, runsk, "/bnd", "+/bnd", "cap", "und", "wrong");
	fflush(stdout);
}

static void print_case(struct bench *B, int ci)
{
	const struct sim_case *c = &B->cases[ci];

	for (int p = 0; p < B->nr_pol; p++) {
		const struct acc *a = res_at(B, ci, p, 0), *a4 = res_at(B, ci, p, 1);

		printf("%-*s %5d %-6s %3d %3d %5.1f %6.1f  %-15s %6.3f %6.3f %7.1f %7.1f %6.1f %6.1f %6.1f %7.1f %5.2f %5.2f "
		       "%4ld %4ld %5ld\n",
		       B->name_w, c->name, c->n_cand, sim_shape_name(c->shape), c->change, c->cv, c->tau * 100, c->bound,
		       B->pol[p]->name, frac(a), frac(a4), mean(a, a->runs), mean(a, a->runs_all),
		       mean(a, a->builds), mean(a, a->rounds), mean(a4, a4->rounds), mean(a4, a4->runs),
		       mean(a, a->runs) / c->bound, mean(a, a->runs_all) / c->bound, a->capped + a4->capped,
		       a->undecided + a->notrep - a->notrep_wrong + a4->undecided + a4->notrep - a4->notrep_wrong,
		       a->wrong + a4->wrong);
	}
	fflush(stdout);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static double median(double *v, int n)
{
	if (n == 0)
		return NAN;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void print_summary(struct bench *B)
{
	double *v1 = xcalloc((size_t)B->nr_cases + 1, sizeof(double));
	double *v2 = xcalloc((size_t)B->nr_cases + 1, sizeof(double));
	double *v3 = xcalloc((size_t)B->nr_cases + 1, sizeof(double));

	printf("\n# summary over %d cases; 'solvable': change/tau >= %.2f (tau = cv under independent noise); "
	       "runs/bound medians over solvable cases\n", B->nr_cases, RATIO_TARGET);
	for (int p = 0; p < B->nr_pol; p++) {
		double amin = 1, asum = 0, smin = 1, ssum = 0, bsum = 0;
		int ns = 0;

		for (int ci = 0; ci < B->nr_cases; ci++) {
			const struct sim_case *c = &B->cases[ci];
			const struct acc *a = res_at(B, ci, p, 0), *a4 = res_at(B, ci, p, 1);
			double f = fmin(frac(a), frac(a4));

			amin = fmin(amin, f);
			asum += frac(a);
			bsum += mean(a, a->builds);
			if (!ratio_ok(c))
				continue;
			smin = fmin(smin, f);
			ssum += frac(a);
			v1[ns] = mean(a, a->runs) / c->bound;
			v2[ns] = mean(a, a->runs_all) / c->bound;
			v3[ns++] = a4->rounds > 0 ? a->rounds / a4->rounds : 0;
		}
		printf("%-15s accuracy min/mean %.3f/%.3f (solvable %.3f/%.3f), runs/bound median %.2f "
		       "(+ends %.2f), builds mean %.1f, rounds 1/%d agents median %.2fx\n",
		       B->pol[p]->name, amin, B->nr_cases ? asum / B->nr_cases : 0, ns ? smin : NAN,
		       ns ? ssum / ns : NAN, median(v1, ns), median(v2, ns),
		       B->nr_cases ? bsum / B->nr_cases : 0, B->ks[1], median(v3, ns));
	}
	free(v1);
	free(v2);
	free(v3);
}

static int find_pol(const struct bench *B, const char *name)
{
	for (int p = 0; p < B->nr_pol; p++)
		if (!strcmp(B->pol[p]->name, name))
			return p;
	return -1;
}

/*
 * bisectd's runs at candidates over the oracle's (policies.c), per case of
 * independent Gaussian noise where both ran: how far the whole engine is
 * from a search that has nothing to learn, in the same trials.
 */
static void oracle_line(struct bench *B, int bd)
{
	int or = find_pol(B, "oracle"), n = 0;
	char detail[1024] = "";

	if (or < 0 || bd < 0)
		return;
	for (int ci = 0; ci < B->nr_cases; ci++) {
		const struct sim_case *c = &B->cases[ci];
		const struct acc *a = res_at(B, ci, bd, 0), *o = res_at(B, ci, or, 0);

		if ((c->noise != NOISE_NORMAL && c->noise != NOISE_LOGNORMAL) || !(mean(o, o->runs) > 0) || n > 8)
			continue;
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail), "%s%s N=%d %s %d%%/%d%% %.1f/%.1f = %.2fx",
			 n++ ? ", " : "", c->name, c->n_cand, sim_shape_name(c->shape), c->change, c->cv,
			 mean(a, a->runs), mean(o, o->runs), mean(a, a->runs) / mean(o, o->runs));
	}
	if (n)
		printf("# bisectd's runs at candidates over the oracle's (1 agent, the same trials): %s\n", detail);
}

/* Standard error of the difference of two accuracies. */
static double se_diff(const struct acc *a, const struct acc *b)
{
	double pa = frac(a), pb = frac(b);

	return sqrt(pa * (1 - pa) / (double)(a->trials ? a->trials : 1) +
		    pb * (1 - pb) / (double)(b->trials ? b->trials : 1));
}

static void verdict(const char *what, int checked, int bad, const char *detail)
{
	if (!checked)
		printf("SKIP %s: no case of it was run\n", what);
	else
		printf("%s %s%s%s\n", bad ? "FAIL" : "PASS", what, *detail ? ": " : "", detail);
}

/* --- calibration ----------------------------------------------------- */

static int nr_models(const struct bench *B)
{
	return NOISE_TRACE + B->nr_traces;
}

static void model_name(char *buf, size_t n, const struct bench *B, int m)
{
	if (m < NOISE_TRACE)
		snprintf(buf, n, "%s", sim_noise_name(m));
	else
		snprintf(buf, n, "trace:%s", B->traces[m - NOISE_TRACE]->name);
}

static void acc_add(struct acc *sum, const struct acc *a)
{
	sum->trials += a->trials;
	sum->correct += a->correct;
	sum->capped += a->capped;
	sum->right += a->right;
	sum->wrong += a->wrong;
	sum->undecided += a->undecided;
	sum->notrep += a->notrep;
	sum->notrep_wrong += a->notrep_wrong;
	sum->regress += a->regress;
	for (int i = 0; i <= NR_BINS; i++) {
		sum->bin_n[i] += a->bin_n[i];
		sum->bin_right[i] += a->bin_right[i];
		sum->bin_claim[i] += a->bin_claim[i];
	}
}

/* Policy p's trials of model m, both agent counts; only the judged cases when judged. */
static int model_acc(struct acc *sum, struct bench *B, int p, int m, int judged)
{
	int cases = 0;

	memset(sum, 0, sizeof(*sum));
	for (int ci = 0; ci < B->nr_cases; ci++) {
		const struct sim_case *c = &B->cases[ci];

		if (c->model != m || (judged && !ratio_ok(c)))
			continue;
		cases++;
		for (int ki = 0; ki < 2; ki++)
			acc_add(sum, res_at(B, ci, p, ki));
	}
	return cases;
}

static void print_rwu(const char *label, const struct acc *a)
{
	double n = a->trials ? (double)a->trials : 1;

	long und = a->undecided + a->notrep - a->notrep_wrong;

	printf("%s right/undecided/wrong %.3f/%.3f/%.3f (%ld/%ld/%ld of %ld trials)", label, a->right / n, und / n,
	       a->wrong / n, a->right, und, a->wrong, a->trials);
}

/*
 * The reliability table of bisectd's answers per noise model and trace:
 * in each bin of claimed confidence (the culprit's posterior, a range's
 * mass), how often the answer was right. An engine whose 0.99 is 0.99
 * gets about 1 in 100 of those wrong, no more; at 0 wrong, 3/n is the
 * 95% upper bound on the error (the rule of three).
 */
static void print_calibration(struct bench *B)
{
	int bd = find_pol(B, "bisectd");

	printf("\n# calibration (bisectd): answers by claimed confidence, per noise model over all its cases and both "
	       "agent counts;\n#   right: the culprit, or a set holding it; se = sqrt(p(1-p)/n); expected: the wrong "
	       "answers the claims allow,\n#   sum of (1 - claimed); at 0 wrong, 3/n bounds the error (95%%); the 0.99+ "
	       "bins are judged pooled and each on its own\n");
	if (bd < 0) {
		printf("SKIP calibration: bisectd was not run\n");
		return;
	}
	for (int m = 0; m < nr_models(B); m++) {
		struct acc a, j;
		char name[64];
		long n99 = 0, r99 = 0;
		int bin_bad = 0;
		int cases = model_acc(&a, B, bd, m, 0), judged = model_acc(&j, B, bd, m, 1);

		if (!cases)
			continue;
		model_name(name, sizeof(name), B, m);
		printf("%-14s %-13s %7s %6s %6s %5s %8s\n", name, "claimed", "answers", "right", "se", "wrong", "expected");
		for (int i = 0; i <= NR_BINS; i++) {
			long n = a.bin_n[i], r = a.bin_right[i];
			double p = n ? (double)r / (double)n : NAN;

			if (i == NR_BINS && n == 0)
				continue;
			printf("%-14s %-13s %7ld %6.3f %6.3f %5ld %8.2f", name, i < NR_BINS ? bin_name[i] : "< 0.5", n, p,
			       n ? sqrt(p * (1 - p) / (double)n) : NAN, n - r, n - a.bin_claim[i]);
			if (n > 0 && r == n)
				printf("   wrong <= 3/n = %.4f", 3.0 / (double)n);
			if (i >= 2 && i < NR_BINS) {
				n99 += n;
				r99 += r;
				if (n > 0 && p < CALIB_LEVEL - 2 * sqrt(p * (1 - p) / (double)n)) {
					bin_bad = 1;
					printf("   below %.2f - 2 se", CALIB_LEVEL);
				}
			}
			printf("\n");
		}
		printf("%-14s undecided %ld, not-reproduced %ld (%ld wrong: a regression the case has ruled out), "
		       "capped %ld (of %ld trials in %d cases)\n", name, a.undecided, a.notrep, a.notrep_wrong, a.capped,
		       a.trials, cases);
		/*
		 * not-reproduced says a regression of min_effect or more is ruled
		 * out at the job's confidence: a test's claim, made of such a
		 * regression at most (1 - confidence) / 2 of the time (one-sided).
		 * Every simulated case has one, so every such answer is wrong and
		 * the bins would read 0 right of them whatever the test's error;
		 * they are judged by their rate among those trials.
		 */
		if (a.regress > 0) {
			double lim = (1 - engine_opts.confidence) / 2, r = (double)a.notrep_wrong / (double)a.regress;
			double se = sqrt(lim * (1 - lim) / (double)a.regress);

			printf("%s not-reproduced %s: a regression of min_effect or more ruled out in at most %.3f of the "
			       "trials that have one: %ld of %ld, %.4f %s %.3f + 2 x %.4f\n",
			       r <= lim + 2 * se ? "PASS" : "FAIL", name, lim, a.notrep_wrong, a.regress, r,
			       r <= lim + 2 * se ? "<=" : ">", lim, se);
		}
		printf("%-14s", name);
		print_rwu("", &a);
		if (judged) {
			printf("; where change/tau >= %.2f (%d cases):", RATIO_TARGET, judged);
			print_rwu("", &j);
		}
		printf("\n");
		if (n99 == 0) {
			printf("SKIP calibration %s: no answer claimed at >= %.2f\n", name, CALIB_LEVEL);
		} else {
			double p = (double)r99 / (double)n99, se = sqrt(p * (1 - p) / (double)n99);
			int ok = p >= CALIB_LEVEL - 2 * se;

			printf("%s calibration %s: no wrong answer at claimed >= %.2f beyond two standard errors: "
			       "%ld answers, %ld wrong, %.4f right %s %.2f - 2 x %.4f%s\n", ok && !bin_bad ? "PASS" : "FAIL",
			       name, CALIB_LEVEL, n99, n99 - r99, p, ok ? ">=" : "<", CALIB_LEVEL, se,
			       bin_bad ? "; a bin of them is below it on its own" : "");
		}
	}
}

/*
 * The structured models' target, per model: where change / tau >= 1.75,
 * right in 95% of the trials or more, none wrong (the rest undecided),
 * with 1 and k agents.
 */
static void print_structured_targets(struct bench *B, int bd)
{
	for (int m = 0; m < nr_models(B); m++) {
		char name[64], what[160], detail[1024] = "";
		int checked = 0, bad = 0;
		double least = 1;

		int ran = 0;

		if (m < NOISE_TRACE && sim_noise_independent(m))
			continue;
		model_name(name, sizeof(name), B, m);
		for (int ci = 0; ci < B->nr_cases; ci++) {
			const struct sim_case *c = &B->cases[ci];

			ran += c->model == m;
			if (c->model != m || !ratio_ok(c))
				continue;
			checked++;
			for (int ki = 0; ki < 2; ki++) {
				const struct acc *a = res_at(B, ci, bd, ki);
				double r = a->trials ? (double)a->right / (double)a->trials : 0;

				least = fmin(least, r);
				if ((r >= RIGHT_TARGET && a->wrong == 0) || bad++ >= 6)
					continue;
				snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
					 "%sN=%d %s %d%%/%d%% k=%d: right %.3f, %ld wrong", bad > 1 ? "; " : "", c->n_cand,
					 sim_shape_name(c->shape), c->change, c->cv, B->ks[ki], r, a->wrong);
			}
		}
		if (bad > 6)
			snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail), "; %d more", bad - 6);
		if (checked && !bad)
			snprintf(detail, sizeof(detail), "%d cases, least right %.3f", checked, least);
		snprintf(what, sizeof(what), "%s: >= %.2f right, the rest undecided, none wrong where change/tau >= %.2f "
			 "(1 and k agents)", name, RIGHT_TARGET, RATIO_TARGET);
		if (!ran)
			continue;
		if (!checked)
			printf("SKIP %s: none of its %d cases has change/tau >= %.2f\n", what, ran, RATIO_TARGET);
		else
			verdict(what, checked, bad, detail);
	}
}

static void print_targets(struct bench *B)
{
	int bd = find_pol(B, "bisectd"), pp = find_pol(B, "pinpoint");
	char detail[1024];
	int checked, bad, noisy;

	printf("\n# targets (bisectd)\n");
	if (bd < 0) {
		printf("SKIP all targets: bisectd was not run\n");
		return;
	}
	/* 1: accuracy where change/cv >= 1.75, with both agent counts */
	checked = bad = 0;
	detail[0] = 0;
	for (int ci = 0; ci < B->nr_cases; ci++) {
		const struct sim_case *c = &B->cases[ci];

		if (!sim_noise_independent(c->noise) || !ratio_ok(c))
			continue;
		checked++;
		for (int ki = 0; ki < 2; ki++) {
			const struct acc *a = res_at(B, ci, bd, ki);

			if (frac(a) < ACC_TARGET) {
				if (bad++ < 6)
					snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
						 "%s%s N=%d %s %d%%/%d%% k=%d: %.3f", bad > 1 ? "; " : "",
						 c->name, c->n_cand, sim_shape_name(c->shape),
						 c->change, c->cv, B->ks[ki], frac(a));
			}
		}
	}
	if (bad > 6)
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail), "; %d more", bad - 6);
	verdict("accuracy >= 0.99 where change/cv >= 1.75 (1 and k agents, independent noise)", checked, bad, detail);

	/* 2: never below pinpoint */
	if (pp < 0) {
		printf("SKIP accuracy never below pinpoint: pinpoint was not run\n");
	} else {
		checked = bad = noisy = 0;
		detail[0] = 0;
		for (int ci = 0; ci < B->nr_cases; ci++) {
			const struct sim_case *c = &B->cases[ci];

			if (!sim_noise_independent(c->noise))
				continue;
			checked++;
			for (int ki = 0; ki < 2; ki++) {
				const struct acc *a = res_at(B, ci, bd, ki), *b = res_at(B, ci, pp, ki);
				double diff = frac(b) - frac(a);

				if (diff <= 0)
					continue;
				if (diff <= 2 * se_diff(a, b)) {
					noisy++;
					continue;
				}
				if (bad++ < 6)
					snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
						 "%s%s N=%d %s %d%%/%d%% k=%d: %.3f < %.3f", bad > 1 ? "; " : "",
						 c->name, c->n_cand, sim_shape_name(c->shape),
						 c->change, c->cv, B->ks[ki], frac(a), frac(b));
			}
		}
		if (bad > 6)
			snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail), "; %d more", bad - 6);
		if (noisy)
			snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
				 "%s%d case(s) below by less than 2 standard errors (not counted)",
				 detail[0] ? "; " : "", noisy);
		verdict("accuracy never below pinpoint (all cases of independent noise, 1 and k agents)", checked, bad,
			detail);
	}

	/* 3 and 4: N=1024 at 7%/4% */
	checked = bad = 0;
	detail[0] = 0;
	int checked4 = 0, bad4 = 0, gaussian;
	char detail4[1024] = "";

	for (int ci = 0; ci < B->nr_cases; ci++) {
		const struct sim_case *c = &B->cases[ci];
		const struct acc *a = res_at(B, ci, bd, 0);
		double r = mean(a, a->runs) / c->bound;

		if (c->n_cand != 1024 || c->change != 7 || c->cv != 4)
			continue;
		/*
		 * The bound is the capacity of a Gaussian channel: it bounds runs
		 * under Gaussian noise on ln(metric) (normal, and log-normal which
		 * is exactly that). Slow outliers and drift are other channels; they
		 * are shown, not judged.
		 */
		gaussian = c->noise == NOISE_NORMAL || c->noise == NOISE_LOGNORMAL;
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail), "%s%s/%s %.2f (+ends %.2f)%s",
			 detail[0] ? ", " : "", c->name, sim_shape_name(c->shape), r,
			 mean(a, a->runs_all) / c->bound, gaussian ? "" : " [not judged]");
		if (!gaussian)
			continue;
		checked++;
		bad += r > 1.6;
		if (pp >= 0) {
			const struct acc *b = res_at(B, ci, pp, 0);
			double x = mean(a, a->runs) > 0 ? mean(b, b->runs) / mean(a, a->runs) : 0;
			int ok = x >= 2 && frac(a) >= frac(b);

			checked4++;
			bad4 += !ok;
			snprintf(detail4 + strlen(detail4), sizeof(detail4) - strlen(detail4),
				 "%s%s/%s %.2fx acc %.3f vs %.3f", detail4[0] ? ", " : "", c->name,
				 sim_shape_name(c->shape), x, frac(a), frac(b));
		}
	}
	verdict("runs <= 1.6 x bound at N=1024, 7%/4%, Gaussian noise", checked, bad, detail);
	oracle_line(B, bd);
	if (pp < 0)
		printf("SKIP >= 2x fewer runs than pinpoint at N=1024, 7%%/4%%: pinpoint was not run\n");
	else
		verdict(">= 2x fewer runs than pinpoint at N=1024, 7%/4%, Gaussian noise, equal or better accuracy", checked4,
			bad4, detail4);

	/* 5: rounds with k agents */
	checked = bad = 0;
	detail[0] = 0;
	{
		double worst = INFINITY;
		int worst_c = -1;

		for (int ci = 0; ci < B->nr_cases; ci++) {
			const struct acc *a = res_at(B, ci, bd, 0), *a4 = res_at(B, ci, bd, 1);
			double x = a4->rounds > 0 ? a->rounds / a4->rounds : 0;

			if (!sim_noise_independent(B->cases[ci].noise) || !ratio_ok(&B->cases[ci]))
				continue;
			checked++;
			bad += x < 2;
			if (x < worst) {
				worst = x;
				worst_c = ci;
			}
		}
		if (worst_c >= 0) {
			const struct sim_case *c = &B->cases[worst_c];

			snprintf(detail, sizeof(detail), "%d of %d below; least %.2fx (%s N=%d %s %d%%/%d%%)", bad,
				 checked, worst, c->name, c->n_cand, sim_shape_name(c->shape),
				 c->change, c->cv);
		}
	}
	snprintf(detail4, sizeof(detail4),
		 "rounds with %d agents >= 2x fewer than with 1 (change/cv >= 1.75, independent noise)", B->ks[1]);
	verdict(detail4, checked, bad, detail);

	/* 6: the structured models and the traces */
	print_structured_targets(B, bd);
}

/* --- main ---------------------------------------------------------------- */

static int selftest(void)
{
	int rc = sim_policy_selftest();

	if (rc == 0)
		for (int sh = 0; sh < SHAPE_MAX && rc == 0; sh++)
			for (int n = 2; n < 700 && rc == 0; n = n * 3 + 1) {
				struct sim_dag *g = sim_dag_new(n, sh, (uint64_t)n);

				rc = sim_dag_check(g);
				sim_dag_free(g);
			}
	/* The answers' accounting: a not-reproduced of a 2% change that rules out 1% is wrong, not binned. */
	if (rc == 0) {
		struct acc a;
		struct sim_answer nr = { SIM_NOT_REPRODUCED, -1, NULL, 0, 0.99, 0, 0.01 };
		struct sim_answer named = { SIM_CULPRIT, 5, NULL, 0, 0.995, 0, 0 };

		memset(&a, 0, sizeof(a));
		count_answer(&a, 0.02, &nr, 5);
		count_answer(&a, 0.005, &nr, 5);
		count_answer(&a, 0.02, &named, 5);
		if (a.trials != 3 || a.regress != 2 || a.notrep != 2 || a.notrep_wrong != 1 || a.wrong != 1 ||
		    a.right != 1 || a.bin_n[2] != 1 || a.bin_right[2] != 1 || a.undecided != 0)
			rc = err_set(ERR_FAIL, "the answers' accounting: %ld trials, %ld not-reproduced (%ld wrong), "
				     "%ld wrong, %ld right, %ld in [0.99, 0.999)", a.trials, a.notrep, a.notrep_wrong,
				     a.wrong, a.right, a.bin_n[2]);
	}
	/* The bound reproduces STATISTICS.md's table (also tests/unit/test_bound.c). */
	if (rc == 0 && (fabs(bound_runs(1024, 0.07, 0.04, DELTA) - 27.8) > 0.05 ||
			fabs(bound_runs(16384, 0.12, 0.13, DELTA) - 111.4) > 0.05 ||
			fabs(bound_capacity(0.5) - 0.1608) > 0.001))
		rc = err_set(ERR_FAIL, "the capacity bound does not reproduce STATISTICS.md");
	return rc;
}

/*
 * The speed of one decision on a merge window: 15,000 candidates with
 * merges, a bisection at 7%/4% driven to its end, every bisect_next()
 * timed; the baseline is the split policy's choice (policy_next) on the
 * same DAG and the same calls, in the same process.
 */
static void decision_speed(void)
{
	struct sim_dag *g = sim_dag_new(15000, SHAPE_MERGES, 42);
	struct bisect_opts o = BISECT_OPTS_INIT;
	struct bisect_query q[8];
	struct policy *pol;
	struct bisect *b;
	struct rng rng;
	enum commit_class *cls = xcalloc((size_t)g->n, sizeof(*cls));
	int culprit = 9001, picks[4], calls = 0, nq;
	double eng = 0, eng_max = 0, split = 0;

	rng_seed(&rng, 7);
	o.build_cost = 1;
	o.run_cost = 10;
	if (bisect_new(&b, g->n, g->parents, g->nr_parents, &o) || policy_new(&pol, g->n, g->parents, g->nr_parents)) {
		printf("# decision speed: %s\n", err_msg());
		return;
	}
	cls[0] = CLASS_GOOD;
	cls[g->n - 1] = CLASS_BAD;
	for (;;) {
		int64_t t0 = now_ms();
		double ms;

		nq = bisect_next(q, b, 1, NULL);
		ms = (double)(now_ms() - t0);
		eng += ms;
		eng_max = fmax(eng_max, ms);
		t0 = now_ms();
		policy_next(picks, pol, cls, NULL, 1);
		split += (double)(now_ms() - t0);
		calls++;
		if (nq <= 0 || calls > 400)
			break;
		for (int i = 0; i < nq; i++)
			for (int r = 0; r < q[i].runs; r++) {
				double v = SIM_BASE * (sim_dag_is_ancestor(g, culprit, q[i].commit) ? 0.93 : 1.0) *
					   (1 + 0.04 * rng_normal(&rng));

				if (q[i].confirm)
					bisect_add_confirm_sample(b, q[i].commit, v);
				else
					bisect_add_sample(b, q[i].commit, v);
			}
	}
	printf("# decision speed, %d candidates with %d merges: bisectd %.1f ms a decision on average, %.0f ms at most, "
	       "over %d decisions; the split policy's choice %.1f ms (bisectd/split %.2f)\n", g->n - 1, g->nr_merges,
	       eng / calls, eng_max, calls, split / calls, split > 0 ? eng / split : 0);
	printf("%s one decision on a 15,000-commit DAG with merges under 1 s: %.0f ms at most\n",
	       eng_max < 1000 ? "PASS" : "FAIL", eng_max);
	free(cls);
	policy_free(pol);
	bisect_free(b);
	sim_dag_free(g);
}

int main(int argc, char **argv)
{
	static struct sim_dag *dags[3][SHAPE_MAX];
	struct bench B;
	pthread_t *th;
	int rc, printed = 0;

	memset(&B, 0, sizeof(B));
	parse_args(&B.o, argc, argv);
	if (B.o.quick && !B.o.trials_set)
		B.o.trials = QUICK_TRIALS;
	if (!B.o.trials_big_set && B.o.trials_big > B.o.trials)
		B.o.trials_big = B.o.trials;
	if ((rc = selftest()) < 0) {
		fprintf(stderr, "bench-bisect: self-test failed: %s\n", err_msg());
		return 1;
	}
	if (B.o.selftest) {
		printf("bench-bisect: self-test passed\n");
		return 0;
	}
	if (B.o.pairs)
		return bench_pairs(B.o.trials_set ? B.o.trials : PAIRS_TRIALS, B.o.seed, traces_dir(&B.o));
	for (int p = 0; sim_policies[p]; p++)
		if (wanted(&B.o.policy, sim_policies[p]->name) && (!sim_policies[p]->by_name || B.o.policy.nr))
			B.pol[B.nr_pol++] = sim_policies[p];
	B.ks[0] = 1;
	B.ks[1] = B.o.agents;
	if (load_traces(&B) < 0)
		return 2;
	make_cases(&B, dags);
	B.name_w = 9;
	for (int c = 0; c < B.nr_cases; c++)
		if ((int)strlen(B.cases[c].name) > B.name_w)
			B.name_w = (int)strlen(B.cases[c].name);
	if (B.nr_cases == 0 || B.nr_pol == 0) {
		fprintf(stderr, "bench-bisect: the filters leave nothing to run\n");
		return 2;
	}
	B.res = xcalloc((size_t)B.nr_cases * (size_t)B.nr_pol * 2, sizeof(*B.res));
	B.left = xcalloc((size_t)B.nr_cases, sizeof(int));
	B.units = xcalloc((size_t)B.nr_cases * (size_t)B.nr_pol * 2, sizeof(*B.units));
	for (int c = 0; c < B.nr_cases; c++)
		for (int p = 0; p < B.nr_pol; p++)
			for (int ki = 0; ki < 2; ki++) {
				B.units[B.nr_units++] = (struct unit){ c, p, ki };
				B.left[c]++;
			}
	pthread_mutex_init(&B.lock, NULL);
	pthread_cond_init(&B.cond, NULL);
	B.t0 = now_ms();
	print_header(&B);
	th = xcalloc((size_t)B.o.threads, sizeof(*th));
	for (int i = 0; i < B.o.threads; i++)
		if (pthread_create(&th[i], NULL, worker, &B)) {
			fprintf(stderr, "bench-bisect: cannot start a thread\n");
			return 1;
		}
	/* Print each case as soon as it and all before it are done. */
	pthread_mutex_lock(&B.lock);
	while (printed < B.nr_cases && !B.failed) {
		if (B.left[printed] > 0) {
			pthread_cond_wait(&B.cond, &B.lock);
			continue;
		}
		print_case(&B, printed++);
	}
	pthread_mutex_unlock(&B.lock);
	for (int i = 0; i < B.o.threads; i++)
		pthread_join(th[i], NULL);
	if (B.failed) {
		fprintf(stderr, "bench-bisect: %s\n", B.fail_msg);
		return 1;
	}
	print_summary(&B);
	print_calibration(&B);
	print_targets(&B);
	decision_speed();
	printf("# %.0f s with %d threads\n", (double)(now_ms() - B.t0) / 1000, B.o.threads);
	free(th);
	free(B.units);
	free(B.left);
	free(B.res);
	free(B.cases);
	for (int i = 0; i < 3; i++)
		for (int sh = 0; sh < SHAPE_MAX; sh++)
			sim_dag_free(dags[i][sh]);
	for (int i = 0; i < B.nr_traces; i++)
		trace_free(B.traces[i]);
	return 0;
}
