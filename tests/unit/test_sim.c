/*
 * test_sim: the simulator's structured noise models produce what sim.h
 * says they do, trace.c reads the recorder's format and names the line of
 * a malformed one, and the oracle policy (the yardstick of a search that
 * knows the lab) finds culprits on both shapes. Fixed seeds, long
 * sequences, generous tolerances.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "sim.h"
#include "trace.h"
#include "rng.h"
#include "util.h"

static void near(double got, double want, double tol, const char *what)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("%s: got %.6f, want %.6f +- %g", what, got, want, tol);
}

struct moments {
	double n, sum, sumsq;
};

static void add(struct moments *m, double x)
{
	m->n++;
	m->sum += x;
	m->sumsq += x * x;
}

static double mean_of(const struct moments *m)
{
	return m->sum / m->n;
}

static double sd_of(const struct moments *m)
{
	return sqrt((m->sumsq - m->sum * m->sum / m->n) / (m->n - 1));
}

/* A lab on a linear history of 8 candidates, no regression: values are the noise alone. */
static struct sim_dag *dag;

static int setup(void **state)
{
	(void)state;
	dag = sim_dag_new(8, SHAPE_LINEAR, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sim_dag_free(dag);
	return 0;
}

static void lab_at(struct sim_lab *lab, enum sim_noise noise, double cv, uint64_t seed, const struct trace *tr)
{
	sim_lab_init(lab, dag, noise, 0, cv, seed, tr);
}

static void test_ar1(void **state)
{
	struct sim_lab lab;
	struct moments m = { 0 };
	const int n = 40000;
	double *v = malloc(n * sizeof(double)), c1 = 0, c0 = 0, mu;

	(void)state;
	lab_at(&lab, NOISE_AR1, 0.04, 11, NULL);
	for (int i = 0; i < n; i++) {
		v[i] = sim_lab_run(&lab, 0, 0, i) / SIM_BASE - 1;
		add(&m, v[i]);
	}
	mu = mean_of(&m);
	for (int i = 0; i < n; i++) {
		c0 += (v[i] - mu) * (v[i] - mu);
		if (i)
			c1 += (v[i] - mu) * (v[i - 1] - mu);
	}
	near(c1 / c0, SIM_AR1_PHI, 0.03, "lag-1 correlation");
	near(sd_of(&m), 0.04, 0.004, "marginal cv");
	near(mu, 0, 0.004, "mean");
	/* Another agent has a sequence of its own: it does not follow agent 0's. */
	{
		double x = sim_lab_run(&lab, 0, 1, n), y = sim_lab_run(&lab, 0, 0, n + 1);

		assert_true(fabs(x - y) > 1e-9);
	}
	free(v);
	sim_lab_release(&lab);
}

static void test_bursts(void **state)
{
	struct sim_lab lab;
	struct moments slow_level = { 0 };
	long slow = 0, agree = 0, periods = 0;
	const int rounds = 20000;
	int was_slow = 0;

	(void)state;
	/* A small cv, so that a run is slow when it is below 0.9 and no other way. */
	lab_at(&lab, NOISE_BURSTS, 0.005, 5, NULL);
	for (int r = 0; r < rounds; r++) {
		double a, b;

		lab.round = r;
		a = sim_lab_run(&lab, 0, 0, 2 * r) / SIM_BASE;
		b = sim_lab_run(&lab, 0, 1, 2 * r + 1) / SIM_BASE;
		/* One lab clock: the two agents' runs of a round happen at one time. */
		agree += (a < 0.9) == (b < 0.9);
		if (a < 0.9) {
			slow++;
			add(&slow_level, 1 - a);
			periods += !was_slow;
		}
		was_slow = a < 0.9;
	}
	assert_int_equal(agree, rounds);
	/* Stationary share 0.02 / (0.02 + 0.05) = 0.286; periods last 20 runs. */
	near((double)slow / rounds, 0.286, 0.08, "slow share");
	near((double)slow / (double)periods, 20, 6, "slow period length");
	near(mean_of(&slow_level), 0.20, 0.02, "slow periods' slowdown");
	assert_true(slow_level.n > 0 && sd_of(&slow_level) < 0.04);
	sim_lab_release(&lab);
}

static void test_shift(void **state)
{
	int up = 0, down = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct sim_lab lab;
		struct moments before = { 0 }, after = { 0 };
		double cv = 0.01;

		lab_at(&lab, NOISE_SHIFT, cv, seed, NULL);
		assert_true(lab.shift_at >= SIM_SHIFT_FIRST && lab.shift_at <= SIM_SHIFT_LAST);
		for (int i = 0; i < 600; i++) {
			double v = sim_lab_run(&lab, 0, i % 3, i) / SIM_BASE;

			if (i < SIM_SHIFT_FIRST)
				add(&before, v);
			else if (i > SIM_SHIFT_LAST)
				add(&after, v);
		}
		near(mean_of(&before), 1, 0.6 * cv, "level before the shift");
		near(fabs(mean_of(&after) - 1), SIM_SHIFT_CVS * cv, 0.3 * cv, "the shift");
		up += mean_of(&after) > 1;
		down += mean_of(&after) < 1;
		sim_lab_release(&lab);
	}
	assert_true(up > 0 && down > 0);
}

static void test_agents(void **state)
{
	struct sim_lab lab;
	struct moments half[4][2];
	double lo = 1, hi = -1;

	(void)state;
	memset(half, 0, sizeof(half));
	lab_at(&lab, NOISE_AGENTS, 0.01, 3, NULL);
	for (int i = 0; i < 4 * 4000; i++) {
		int a = i % 4;

		lab.round = i / 4;
		add(&half[a][i >= 2 * 4000], sim_lab_run(&lab, 0, a, i) / SIM_BASE - 1);
	}
	for (int a = 0; a < 4; a++) {
		double o = mean_of(&half[a][0]);

		/* Stable: the same offset in both halves of the job. */
		near(mean_of(&half[a][1]), o, 0.0015, "an agent's offset later on");
		assert_true(fabs(o) >= SIM_AGENT_LO - 0.0015 && fabs(o) <= SIM_AGENT_HI + 0.0015);
		lo = fmin(lo, o);
		hi = fmax(hi, o);
	}
	assert_true(hi - lo > 0.005);
	sim_lab_release(&lab);
}

static void test_percommit(void **state)
{
	struct sim_dag *g = sim_dag_new(63, SHAPE_LINEAR, 2);
	struct sim_lab lab, again;
	double lo = 10, hi = 0, cv = 0.04;

	(void)state;
	sim_lab_init(&lab, g, NOISE_PERCOMMIT, 0, cv, 9, NULL);
	for (int m = 0; m < 63; m++) {
		struct moments s = { 0 };

		for (int i = 0; i < 3000; i++)
			add(&s, sim_lab_run(&lab, m, 0, i) / SIM_BASE);
		assert_true(sd_of(&s) / cv > SIM_PERCOMMIT_LO * 0.9 && sd_of(&s) / cv < SIM_PERCOMMIT_HI * 1.1);
		lo = fmin(lo, sd_of(&s) / cv);
		hi = fmax(hi, sd_of(&s) / cv);
	}
	/* 63 commits spread over [0.5, 2]. */
	assert_true(lo < 0.7 && hi > 1.7);
	sim_lab_release(&lab);
	/* The same seed gives the same factor for one commit, whatever came before it. */
	{
		struct moments s1 = { 0 }, s2 = { 0 };

		sim_lab_init(&lab, g, NOISE_PERCOMMIT, 0, cv, 9, NULL);
		sim_lab_init(&again, g, NOISE_PERCOMMIT, 0, cv, 9, NULL);
		for (int i = 0; i < 500; i++)
			sim_lab_run(&again, 5, 0, i);
		for (int i = 0; i < 4000; i++) {
			add(&s1, sim_lab_run(&lab, 30, 0, i));
			add(&s2, sim_lab_run(&again, 30, 0, i));
		}
		near(sd_of(&s1) / sd_of(&s2), 1, 0.08, "a commit's cv in two labs of one seed");
		sim_lab_release(&lab);
		sim_lab_release(&again);
	}
	sim_dag_free(g);
}

static void test_tasks(void **state)
{
	struct sim_lab lab;
	struct moments means = { 0 };
	double within = 0, cv = 0.04;
	const int tasks = 600, runs = 10;

	(void)state;
	lab_at(&lab, NOISE_TASKS, cv, 4, NULL);
	for (int t = 0; t < tasks; t++) {
		struct moments one = { 0 };

		for (int r = 0; r < runs; r++)
			add(&one, sim_lab_run(&lab, 0, t % 2, t) / SIM_BASE);
		within += sd_of(&one) * sd_of(&one);
		add(&means, mean_of(&one));
	}
	/* Within a task: cv/2 around its level (times 1 + level, about 1). */
	near(sqrt(within / tasks), cv / 2, 0.15 * cv / 2, "within-task sd");
	/* Between tasks: the level's cv, and a tenth of the runs' variance. */
	near(sd_of(&means), sqrt(cv * cv + cv * cv / 4 / runs), 0.15 * cv, "sd of task means");
	near(sim_task_noise(NOISE_TASKS, 0.07, cv, NULL), cv * sqrt(1.25), 1e-12, "task noise");
	sim_lab_release(&lab);
}

/*
 * intermittent: a good commit's runs are normal; a bad commit's are 2d
 * slower in half of them at random and as good in the rest, so that d is
 * their mean change and nothing in between is seen.
 */
static void test_intermittent(void **state)
{
	struct sim_dag *g = sim_dag_new(9, SHAPE_LINEAR, 3);
	struct sim_lab lab;
	struct moments good = { 0 }, bad = { 0 };
	double cv = 0.01, d = 0.07;
	int slow = 0, between = 0, n = 4000, b, gd = 0;

	(void)state;
	sim_lab_init(&lab, g, NOISE_INTERMITTENT, d, cv, 5, NULL);
	b = g->n - 1;
	assert_true(!sim_lab_is_bad(&lab, gd) && sim_lab_is_bad(&lab, b));
	for (int i = 0; i < n; i++) {
		double x = sim_lab_run(&lab, b, 0, i) / SIM_BASE;

		add(&good, sim_lab_run(&lab, gd, 0, n + i) / SIM_BASE);
		add(&bad, x);
		slow += x < 1 - d;
		between += fabs(x - (1 - d)) < d / 2;
	}
	near(mean_of(&good), 1, 4 * cv / sqrt(n), "a good commit's mean");
	near(sd_of(&good), cv, 0.1 * cv, "a good commit's sd");
	near(mean_of(&bad), 1 - d, 0.01, "a bad commit's mean");
	near((double)slow / n, 0.5, 0.03, "a bad commit's share of slow runs");
	assert_int_equal(between, 0);
	near(sim_task_noise(NOISE_INTERMITTENT, d, cv, NULL), sqrt(cv * cv + d * d), 1e-12, "task noise");
	sim_lab_release(&lab);
	sim_dag_free(g);
}

/* --- traces -------------------------------------------------------------- */

static int read_string(struct trace **out, const char *text)
{
	FILE *f = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
	int rc;

	assert_non_null(f);
	rc = trace_read(out, f, "t.trace");
	fclose(f);
	return rc;
}

static void bad(const char *text, const char *msg)
{
	struct trace *tr = NULL;

	assert_int_equal(read_string(&tr, text), ERR_INVALID);
	assert_null(tr);
	if (!strstr(err_msg(), msg))
		fail_msg("message '%s' lacks '%s'", err_msg(), msg);
}

static void test_trace_errors(void **state)
{
	(void)state;
	bad("# condition: idle\n10 0 0 0 5.0\n20 0 0 1\n", "t.trace:3: expected");
	bad("10 0 0 0 5.0 7\n", "t.trace:1: more than 5 fields");
	bad("10 0 0 0 abc\n", "t.trace:1: expected");
	bad("10 0 0 0 0\n", "t.trace:1: value must be > 0");
	bad("10 0 0 0 -3\n", "t.trace:1: value must be > 0");
	bad("10 0 5 0 1\n20 0 3 0 1\n", "t.trace:2: task 3 is new but not larger than task 5 agent 0 had");
	bad("10 0 4 0 1\n11 0 6 0 1\n12 0 4 1 1\n", "t.trace:3: task 4 of agent 0 again after its task 6");
	bad("10 0 5 0 1\n20 1 5 1 1\n", "t.trace:2: task 5 is agent 0's, not agent 1's");
	bad("10 0 5 0 1\n20 0 5 0 1\n", "t.trace:2: run 0 of task 5 after its run 0");
	bad("-1 0 0 0 1\n", "t.trace:1: t_ms is negative");
	bad("10 -1 0 0 1\n", "t.trace:1: agent out of range");
	bad("10 0 0 0 1e999\n", "t.trace:1: expected");
	bad("# nothing but comments\n\n", "t.trace: no runs");
}

static void test_trace_read(void **state)
{
	struct trace *tr;
	/* Two tasks of two runs, ln values 0 0 and 0.2 0.2: the task means' sd is sqrt(0.02). */
	const char *text = "# condition: bursts\n# workload: demo\n\n"
			   "10.5 0 0 0 100\n"
			   "21 1 1 0 122.14027581601698\n"
			   "30 0 0 1 100\n"
			   "40 1 1 1 122.14027581601698\n";

	(void)state;
	assert_int_equal(read_string(&tr, text), 0);
	assert_string_equal(tr->name, "t");
	assert_string_equal(tr->condition, "bursts");
	assert_int_equal(tr->nr_agents, 2);
	assert_int_equal(tr->nr_runs, 4);
	assert_int_equal(tr->nr_tasks, 2);
	near(tr->median, 111.07013790800849, 1e-9, "median");
	near(tr->duration, 40, 1e-12, "duration");
	near(tr->task_noise, sqrt(0.02), 1e-9, "task noise");
	near(tr->run_noise, 0, 1e-9, "run noise");
	near(tr->v[0][1] * tr->median, 100, 1e-9, "agent 0's second run");
	trace_free(tr);
	/* Tasks numbered as they started: the two agents' lines interleave, and a later id may come first. */
	assert_int_equal(read_string(&tr, "10 1 5 0 2\n11 0 4 0 1\n12 1 5 1 2\n13 0 4 1 1\n14 0 6 0 1\n"), 0);
	assert_int_equal(tr->nr_tasks, 3);
	assert_int_equal(tr->n[0], 3);
	assert_int_equal(tr->n[1], 2);
	trace_free(tr);
	/* One task of two runs, ln values +-0.1: all of its noise is the runs'. */
	assert_int_equal(read_string(&tr, "1 0 7 0 1.1051709180756477\n2 0 7 3 0.9048374180359595\n"), 0);
	near(tr->run_noise, sqrt(0.02), 1e-9, "run noise");
	near(tr->task_noise, sqrt(0.02), 1e-9, "task noise of one task");
	trace_free(tr);
}

/*
 * A fixture written by code: agent 0 runs at t = 10, 20, ... with values
 * 1, 2, ..., 50; agent 1 at t = 15, 25, ... with values 101 ... 140; five
 * runs a task.
 */
static char *write_fixture(void)
{
	char *path = xstrdup("/tmp/test_sim_XXXXXX");
	int fd = mkstemp(path);
	FILE *f;
	long task = 0;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "# condition: fixture\n# host: test_sim\n");
	for (int i = 0; i < 50; i++) {
		if (i % 5 == 0)
			task += 2;
		fprintf(f, "%d 0 %ld %d %d\n", 10 * (i + 1), task, i % 5, i + 1);
		if (i < 40)
			fprintf(f, "%d 1 %ld %d %d\n", 10 * (i + 1) + 5, task + 1, i % 5, 101 + i);
	}
	fclose(f);
	return path;
}

static void test_trace_replay(void **state)
{
	char *path = write_fixture();
	struct trace *tr;
	struct sim_lab lab;

	(void)state;
	assert_int_equal(trace_load(&tr, path), 0);
	unlink(path);
	free(path);
	assert_int_equal(tr->nr_agents, 2);
	assert_int_equal(tr->n[0], 50);
	assert_int_equal(tr->n[1], 40);
	assert_int_equal(tr->nr_tasks, 18);
	for (uint64_t seed = 1; seed <= 10; seed++) {
		double first0, first1, v;
		long p0, p1;

		lab_at(&lab, NOISE_TRACE, 0.04, seed, tr);
		/* Sim agent 2 replays trace agent 0 (2 mod 2), from a start of its own. */
		assert_int_equal(lab.trace_agent[2], 0);
		assert_int_equal(lab.trace_agent[3], 1);
		p0 = lab.trace_pos[0];
		p1 = lab.trace_pos[1];
		/* Agents 0 and 1 start at one time of the trace: their first runs are within 10 ms. */
		if (p0 > 0 && p1 > 0)
			assert_true(fabs(tr->t[0][p0] - tr->t[1][p1]) <= 10);
		first0 = sim_lab_run(&lab, 0, 0, 0) * tr->median / SIM_BASE;
		first1 = sim_lab_run(&lab, 0, 1, 1) * tr->median / SIM_BASE;
		near(first0, (double)(p0 + 1), 1e-9, "agent 0's first value");
		near(first1, (double)(101 + p1), 1e-9, "agent 1's first value");
		/* In order, wrapping at the end. */
		for (int i = 1; i <= 120; i++) {
			v = sim_lab_run(&lab, 0, 0, 2 + i) * tr->median / SIM_BASE;
			near(v, (double)((p0 + i) % 50 + 1), 1e-9, "agent 0's values in order");
		}
		sim_lab_release(&lab);
	}
	/* A bad commit measures d lower, on top of the trace. */
	sim_lab_init(&lab, dag, NOISE_TRACE, 0.1, 0, 1, tr);
	lab.culprit = 1;
	sim_lab_run(&lab, 0, 0, 0);
	{
		long p = lab.trace_pos[0];

		near(sim_lab_run(&lab, 8, 0, 1), SIM_BASE * 0.9 * tr->v[0][p], 1e-9, "a bad commit's value");
	}
	sim_lab_release(&lab);
	trace_free(tr);
}

static void test_trace_list(void **state)
{
	char **paths;

	(void)state;
	assert_int_equal(trace_list(&paths, "/nonexistent/traces"), 0);
	assert_null(paths[0]);
	free(paths);
}

/* sim_dag_mass() against a sum over sim_dag_is_ancestor(), on a history with merges. */
static void test_dag_mass(void **state)
{
	struct sim_dag *g = sim_dag_new(300, SHAPE_MERGES, 7);
	double *w = xcalloc((size_t)g->n, sizeof(double)), *S = xcalloc((size_t)g->n, sizeof(double));
	struct rng r;
	int side = 0;

	(void)state;
	assert_true(g->nr_merges > 5);
	rng_seed(&r, 3);
	for (int i = 0; i < g->n; i++) {
		w[i] = rng_uniform(&r);
		S[i] = (i ? S[i - 1] : 0) + w[i];
	}
	for (int b = 0; b < g->n; b++) {
		double want = 0;

		for (int a = 0; a <= b; a++)
			want += sim_dag_is_ancestor(g, a, b) ? w[a] : 0;
		side += g->lo[b] > g->pre[b] + 1;
		near(sim_dag_mass(g, S, b), want, 1e-9, "ancestor mass");
	}
	assert_true(side > 20);  /* commits on side branches were checked, not only the main line */
	free(w);
	free(S);
	sim_dag_free(g);
}

/*
 * The oracle names the culprit, at its stop, on a line and on merges:
 * every one of 40 trials at 30% / 4%, and at 7% / 4% (the bench's case)
 * all but a few, with fewer runs at 30% than at 7%.
 */
static void test_oracle(void **state)
{
	static const struct { enum sim_shape shape; double d; int most_wrong; } cases[] = {
		{ SHAPE_LINEAR, 0.30, 0 }, { SHAPE_MERGES, 0.30, 0 }, { SHAPE_LINEAR, 0.07, 2 }, { SHAPE_MERGES, 0.07, 2 },
	};
	struct sim_limits lim = { 600, 600, 1, 10, 0 };
	double runs[4] = { 0 };

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct sim_dag *g = sim_dag_new(256, cases[c].shape, 11);
		int wrong = 0;

		for (int t = 0; t < 40; t++) {
			struct sim_answer ans = { SIM_UNDECIDED, -1, NULL, 0, NAN, 0, 0 };
			struct sim_lab lab;

			sim_lab_init(&lab, g, NOISE_NORMAL, cases[c].d, 0.04, 1000 + (uint64_t)t, NULL);
			assert_int_equal(sim_policy_oracle.trial(&ans, &lab, t % 2 ? 4 : 1, &lim), 0);
			assert_false(ans.capped);
			assert_int_equal(ans.verdict, SIM_CULPRIT);
			assert_true(ans.confidence >= 0.9925);
			wrong += ans.culprit != lab.culprit;
			assert_int_equal(lab.runs_ends, 0);
			runs[c] += (double)lab.runs / 40;
			sim_answer_release(&ans);
			sim_lab_release(&lab);
		}
		if (wrong > cases[c].most_wrong)
			fail_msg("case %zu: %d of 40 wrong", c, wrong);
		sim_dag_free(g);
	}
	assert_true(runs[0] < runs[2] && runs[1] < runs[3]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ar1),
		cmocka_unit_test(test_bursts),
		cmocka_unit_test(test_shift),
		cmocka_unit_test(test_agents),
		cmocka_unit_test(test_percommit),
		cmocka_unit_test(test_tasks),
		cmocka_unit_test(test_intermittent),
		cmocka_unit_test(test_trace_errors),
		cmocka_unit_test(test_trace_read),
		cmocka_unit_test(test_trace_replay),
		cmocka_unit_test(test_trace_list),
		cmocka_unit_test(test_dag_mass),
		cmocka_unit_test(test_oracle),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
