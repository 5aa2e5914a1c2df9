/*
 * coord_engine: the "bisectd" policy, the probabilistic engine of
 * bisect.h driven from the store: each step takes the engine as the
 * job's samples make it (kept between steps, coord_ecache.c), asks it for as many queries as the pool has idle agents,
 * records its decision and queues the tasks, or ends the job with the
 * engine's report.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "coord_internal.h"
#include "err.h"
#include "jsonx.h"
#include "util.h"

/*
 * A job's wall-time budget when it sets none (budget_seconds 0), derived
 * from the engine's run budget at the job's measured costs: a build for
 * every two runs (what the demo and the kernel lab took: 20 runs on 10
 * commits, 22 on 10 kernels), twice over for a lab shared with other
 * jobs, and never under an hour. It is a net for a job that cannot end,
 * not the engine's stop: the run budget is that.
 */
#define BUDGET_S_MIN 3600
#define BUDGET_S_SLACK 2.0

/* Builds the engine from what the store holds for the job. */
static int engine_load(struct bisect **out, struct coord *s, struct jobctx *c)
{
	struct bisect_opts o;
	struct task_costs cost;
	int rc;

	bisect_job_opts(&o, c->job.confidence, c->job.alpha, c->job.min_effect, (long)c->job.budget_runs,
			(long)c->job.budget_builds, c->higher, c->runs);
	o.equal_runs = (int)c->job.end_runs;
	if (c->job.ends_max > o.end_runs_max)  /* raised by a resume of a job undecided at its ends */
		o.end_runs_max = (int)c->job.ends_max;
	/*
	 * The job's runs in the order they were taken, each with its task, its
	 * agent and the kind of query it answered (coord_ecache.c): from the
	 * engine kept since the last step, as a rebuild would make it.
	 */
	if ((rc = coord_ecache_engine(out, s, c, &o)))
		return rc;
	for (int k = 0; k < c->n; k++)
		if (c->cls[k] == CLASS_SKIPPED)
			bisect_mark_skipped(*out, k);
	/* Once the ends differed, the job searches: later runs at the ends do not send it back. */
	store_job_reproduced(&c->reproduced, s->st, c->id);
	if (c->reproduced)
		bisect_assume_reproduced(*out);
	/*
	 * What building and one run cost on this job so far: the engine weighs
	 * bits per second, and the derived wall-time budget is made of them. A
	 * build is a task that built (build_s > 0), a commit already built
	 * costs next to nothing.
	 */
	if (store_task_costs(&cost, s->st, c->id) == 0) {
		bisect_set_costs(*out, cost.build, cost.run);
		c->build_cost = cost.per_build;
		c->run_cost = cost.run;
	}
	return 0;
}

static double res_confidence(struct jobctx *c)
{
	return c->job.confidence;
}

static const char *state_name(enum bisect_state st)
{
	static const char *names[] = { "ends", "search", "confirm", "done" };

	return names[st];
}

/* A listed commit's count of candidates holding its p, where others do (none told apart yet). */
static void set_alike(json_t *x, const struct bisect *b, int i)
{
	int n = bisect_alike(b, i);

	if (n > 1)
		json_object_set_new(x, "alike", json_integer(n));
}

static int record_decision(struct coord *s, struct jobctx *c, struct bisect *b, const struct bisect_query *q,
			  int nq)
{
	struct bisect_result res;
	json_t *qs = json_array(), *top = json_array(), *agents = coord_levels_now(s, c->id, b);
	int idx[5], n;
	double p[5];
	char *qj, *tj, *aj;
	int rc;

	bisect_result(&res, b);
	for (int i = 0; i < nq; i++)
		json_array_append_new(qs, json_pack("{s:i, s:i, s:f, s:f, s:b, s:b}", "idx", q[i].commit, "runs",
						    q[i].runs, "mass", q[i].mass, "gain", q[i].gain, "confirm",
						    q[i].confirm == BISECT_Q_CONFIRM, "early", q[i].confirm == BISECT_Q_EARLY));
	n = res.state == BISECT_ENDS ? 0 : bisect_top(idx, p, b, 5);
	for (int i = 0; i < n; i++) {
		json_t *x = json_pack("{s:i, s:f}", "idx", idx[i], "p", p[i]);

		set_alike(x, b, idx[i]);
		json_array_append_new(top, x);
	}
	qj = jsonx_dump(qs);
	tj = jsonx_dump(top);
	aj = agents ? jsonx_dump(agents) : NULL;
	rc = store_decision_add(s->st, c->id, (long long)now_unix(), state_name(res.state), qj, tj, res.why, aj);
	free(qj);
	free(tj);
	free(aj);
	json_decref(qs);
	json_decref(top);
	json_decref(agents);
	return rc;
}

/* Sets key to v when v is a finite number: jansson refuses NaN, and an unknown number is better absent. */
static void set_num(json_t *o, const char *key, double v)
{
	if (isfinite(v))
		json_object_set_new(o, key, json_real(v));
}

/* The run budget in force: the job's, else the one the engine derived (0: none yet). */
static long long budget_runs_of(struct jobctx *c, const struct bisect_result *res)
{
	long long own = c->job.budget_runs;

	return own > 0 ? own : res->budget_runs > 0 ? res->budget_runs : 0;
}

/* The wall-time budget in force, seconds from the job's creation: the job's, else derived (0: none yet). */
static long long budget_seconds_of(struct jobctx *c, const struct bisect_result *res)
{
	long long own = c->job.budget_seconds;
	long long runs = budget_runs_of(c, res);
	struct bisect_opts o = BISECT_OPTS_INIT;
	double run = c->run_cost > 0 ? c->run_cost : o.run_cost;
	double build = c->build_cost > 0 ? c->build_cost : o.build_cost;
	double est;

	if (own > 0)
		return own;
	if (runs <= 0)
		return 0;
	est = BUDGET_S_SLACK * ((double)runs * run + (double)runs / 2 * build);
	return est < BUDGET_S_MIN ? BUDGET_S_MIN : est > COORD_BUDGET_S_MAX ? COORD_BUDGET_S_MAX : (long long)est;
}

static long long job_elapsed(struct jobctx *c)
{
	return (long long)now_unix() - c->job.created;
}

static const char *verdict_name(enum bisect_verdict v)
{
	switch (v) {
	case VERDICT_CULPRIT: return "culprit";
	case VERDICT_RANGE: return "range";
	case VERDICT_NOT_REPRODUCED: return "not-reproduced";
	default: return "undecided";  /* VERDICT_UNDECIDED, or a budget the coordinator holds (wall time) */
	}
}

/*
 * The report of an ended engine job, whatever the verdict: the ends, the
 * smallest set holding the confidence ("range", each with p), the five
 * most probable commits ("top"), the effect with its 95% interval, the
 * noise per task and per run, and the budgets: what an undecided answer is
 * read with, and what tells a confident one from a lucky one. A culprit
 * comes beside its parent, with the change and its p-value; with two
 * agents or more every row is also at the reference agent's level
 * (coord_levels.c), and the culprit's change is taken there.
 */
static int engine_report(json_t **out, struct coord *s, struct jobctx *c, struct bisect *b,
			 const struct bisect_result *res)
{
	json_t *rep = json_object(), *set = json_array(), *top = json_array();
	int idx[5], n = 0, rc;
	double p[5];

	for (int i = 0; i < res->nr_set && i < 50; i++) {
		json_t *x = coord_commit_json(s, c, res->set[i]);

		set_num(x, "p", bisect_posterior(b, res->set[i]));
		json_array_append_new(set, x);
	}
	/* The posterior means something once the ends differed. */
	if (res->verdict != VERDICT_NOT_REPRODUCED &&
	    (c->reproduced || res->state == BISECT_SEARCH || res->state == BISECT_CONFIRM))
		n = bisect_top(idx, p, b, 5);
	for (int i = 0; i < n; i++) {
		json_t *x = coord_commit_json(s, c, idx[i]);

		set_num(x, "p", p[i]);
		set_alike(x, b, idx[i]);
		json_array_append_new(top, x);
	}
	json_object_set_new(rep, "verdict", json_string(verdict_name(res->verdict)));
	json_object_set_new(rep, "good", coord_commit_json(s, c, 0));
	json_object_set_new(rep, "bad", coord_commit_json(s, c, c->n - 1));
	set_num(rep, "ends_change_pct", 100 * res->ends_change);
	set_num(rep, "ends_p", res->ends_p);
	json_object_set_new(rep, "runs", json_integer(res->runs));
	json_object_set_new(rep, "builds", json_integer(res->builds));
	json_object_set_new(rep, "outliers", json_integer(res->outliers));
	json_object_set_new(rep, "range", set);
	set_num(rep, "set_mass", res->set_mass);
	json_object_set_new(rep, "top", top);
	json_object_set_new(rep, "why", json_string(res->why ? res->why : ""));
	set_num(rep, "alpha", c->job.alpha);
	set_num(rep, "min_effect_pct", 100 * c->job.min_effect);
	set_num(rep, "confidence_asked", res_confidence(c));
	set_num(rep, "effect_pct", 100 * res->effect);
	set_num(rep, "effect_lo_pct", 100 * res->effect_lo);
	set_num(rep, "effect_hi_pct", 100 * res->effect_hi);
	set_num(rep, "task_cv", res->task_cv);
	set_num(rep, "run_cv", res->run_cv);
	if (budget_runs_of(c, res) > 0)
		json_object_set_new(rep, "budget_runs", json_integer(budget_runs_of(c, res)));
	if (budget_seconds_of(c, res) > 0)
		json_object_set_new(rep, "budget_seconds", json_integer(budget_seconds_of(c, res)));
	json_object_set_new(rep, "elapsed_seconds", json_integer(job_elapsed(c)));
	if (res->more_runs >= 0)
		json_object_set_new(rep, "more_runs", json_integer(res->more_runs));
	if (res->failed_confirm >= 0 && res->failed_confirm < c->n)
		json_object_set_new(rep, "failed_confirm", json_integer(res->failed_confirm));
	if (res->slow_bad > 0) {  /* the change is in the slow runs: bisected on their share */
		set_num(rep, "slow_good_pct", 100 * res->slow_good);
		set_num(rep, "slow_bad_pct", 100 * res->slow_bad);
	}
	if (res->verdict == VERDICT_NOT_REPRODUCED) {
		set_num(rep, "change_pct", 100 * res->ends_change);
		set_num(rep, "p_value", res->ends_p);
		set_num(rep, "rare_share_pct", 100 * res->rare_share);
	}
	if (res->verdict == VERDICT_CULPRIT) {
		json_object_set_new(rep, "culprit", coord_commit_json(s, c, res->culprit));
		json_object_set_new(rep, "parent", coord_commit_json(s, c, coord_parent_of(c, res->culprit)));
	}
	/* With two agents or more, the rows and the culprit's change with the agents' levels out. */
	if ((rc = coord_report_levels(s, c, b, rep)))
		goto fail;
	/* With one agent (or rows without runs), the culprit's change on the runs as measured. */
	if (res->verdict == VERDICT_CULPRIT && !json_is_number(json_object_get(rep, "change_pct"))) {
		double change, pv;

		if ((rc = coord_compare(&change, &pv, s, c, coord_parent_of(c, res->culprit), res->culprit,
					ALT_TWO_SIDED)))
			goto fail;
		json_object_set_new(rep, "change_pct", json_real(change * 100));
		json_object_set_new(rep, "p_value", json_real(pv));
	}
	*out = rep;
	return 0;
fail:
	json_decref(rep);
	return rc;
}

/* A culprit's report (engine_report() put it beside its parent): its confidence, then the end. */
static int engine_finish_culprit(struct coord *s, struct jobctx *c, const struct bisect_result *res, json_t *rep)
{
	double change = json_number_value(json_object_get(rep, "change_pct")) / 100;
	double p = json_number_value(json_object_get(rep, "p_value"));
	int rc;

	json_object_set_new(rep, "confidence", json_real(res->confidence));
	if (res->confidence < res->posterior)  /* capped: the runs show two modes */
		json_object_set_new(rep, "posterior", json_real(res->posterior));
	if ((rc = coord_event(s, c->id, "culprit", "commit %d: %+.2f%% against its parent (p=%.4f), confidence %.4f",
			res->culprit, change * 100, p, res->confidence)))
		return rc;
	return coord_finish_culprit(s, c, res->culprit, rep);
}

/*
 * The chain a query belongs to: the engine's, or for a confirmation or an
 * early pair it did not chain, one of their own (-1): a pair is always run
 * interleaved on one agent.
 */
#define QUERY_CHAIN(q) ((q)->chain > 0 ? (q)->chain : (q)->confirm ? -1 : 0)

/*
 * Queues what the engine asked for: a query of its own as one task of its
 * runs, on any agent; the queries of one chain (a confirmation, an early
 * pair, or any the engine chains) as a chain of one-run tasks, its
 * commits in turn (A B A B ...), each link after the one before, on one
 * agent. The task's confirm column keeps each query's kind
 * (BISECT_Q_CONFIRM, BISECT_Q_EARLY) for engine_load().
 */
static int queue_queries(struct coord *s, struct jobctx *c, const struct bisect_query *q, int nq)
{
	unsigned char *done = xcalloc((size_t)nq + 1, 1);
	int rc = 0;

	for (int i = 0; i < nq && rc == 0; i++) {
		if (QUERY_CHAIN(&q[i]))
			continue;
		rc = coord_event(s, c->id, "next", "commit %d: %d runs (P(bad) %.3f, %.3f bits)", q[i].commit,
			   q[i].runs, q[i].mass, q[i].gain);
		if (rc == 0)
			rc = coord_queue_runs(NULL, s, c, q[i].commit, q[i].runs, q[i].confirm, 0);
	}
	for (int i = 0; i < nq && rc == 0; i++) {
		int member[8], left[8], m = 0, kind = q[i].confirm, more = 1, distinct = 0;
		long long after = 0;
		struct sbuf what = SBUF_INIT;

		if (!QUERY_CHAIN(&q[i]) || done[i])
			continue;
		for (int j = i; j < nq && m < 8; j++)
			if (!done[j] && QUERY_CHAIN(&q[j]) == QUERY_CHAIN(&q[i])) {
				done[j] = 1;
				member[m] = j;
				left[m++] = q[j].runs;
			}
		for (int e = 0; e < m; e++) {
			int seen = 0;

			for (int f = 0; f < e; f++)
				seen |= q[member[f]].commit == q[member[e]].commit;
			distinct += !seen;
			sbuf_addf(&what, "%s%d", e == 0 ? "" : e == m - 1 ? " and " : ", ", q[member[e]].commit);
		}
		for (int e = 0; e < m; e++)
			sbuf_addf(&what, "%s%d", e ? "+" : ": ", left[e]);
		rc = coord_event(s, c->id, kind == BISECT_Q_CONFIRM ? "confirm" : kind == BISECT_Q_EARLY ? "pair" : "next",
			   "commit%s %s runs, in turn on one agent%s", m > 1 ? "s" : "", what.buf,
			   kind == BISECT_Q_CONFIRM ? (distinct > 2 ? " (the confirmation of a merge against its parents)" :
						       " (the confirmation against its parent)") :
			   kind == BISECT_Q_EARLY ? " (early, while others search)" : "");
		sbuf_release(&what);
		while (rc == 0 && more) {
			more = 0;
			for (int e = 0; e < m && rc == 0; e++) {
				if (left[e]-- <= 0)
					continue;
				more = 1;
				rc = coord_queue_runs(&after, s, c, q[member[e]].commit, 1, q[member[e]].confirm, after);
			}
		}
	}
	free(done);
	return rc;
}

/*
 * Ends the job undecided: the engine could not decide within its budget,
 * or (why given) the coordinator's wall-time budget ran out first. The
 * report carries the engine's numbers as they stand.
 */
static int engine_finish_undecided(struct coord *s, struct jobctx *c, const struct bisect_result *res,
				   json_t *rep, const char *why)
{
	long long runs = budget_runs_of(c, res);
	int rc, spent;

	if (why)
		json_object_set_new(rep, "why", json_string(why));
	json_object_set_new(rep, "verdict", json_string("undecided"));
	/* A budget ran out (wall time: why given), not a verdict of the data. */
	spent = why || (runs > 0 && res->runs >= runs) || (c->job.budget_builds > 0 && res->builds >= c->job.budget_builds);
	json_object_set_new(rep, "budget_spent", json_boolean(spent));
	/* ... or the ends ran to the runs they may take: more runs can decide it (coord_job_resume()). */
	json_object_set_new(rep, "resumable", json_boolean(spent || !c->reproduced));
	if (!why)
		why = res->why ? res->why : "the data cannot decide within the budget";
	if ((rc = coord_event(s, c->id, "undecided", "%s (after %ld runs)", why, res->runs)))
		return rc;
	return coord_finish(s, c, "undecided", -1, rep, NULL);
}

/* Keeps the budgets the engine derived on the job, so that show and the API can say what is in force. */
static int keep_budgets(struct coord *s, struct jobctx *c, const struct bisect_result *res)
{
	long long runs = c->job.budget_runs > 0 ? 0 : budget_runs_of(c, res);
	long long secs = c->job.budget_seconds > 0 ? 0 : budget_seconds_of(c, res);

	if (runs <= 0 && secs <= 0)
		return 0;
	return store_job_set_auto_budgets(s->st, c->id, runs, secs);
}

/* A step's engine and what it chose: made under s->lock (prepare), decided, then applied under it. */
struct engine_plan {
	struct bisect *b;
	struct bisect_query *q;
	struct bisect_result res;
	unsigned char *busy;
	int k, nq;
};

static void plan_release(struct engine_plan *p)
{
	free(p->q);
	free(p->busy);
	bisect_free(p->b);
	memset(p, 0, sizeof(*p));
}

/* Under s->lock: the idle agents, the busy commits and the job's engine. */
static int engine_prepare(struct coord *s, struct jobctx *c, struct engine_plan *p)
{
	const struct conf_pool *pool = conf_pool_find(s->conf, c->job.pool);
	long long taken = 0;
	int rc;

	memset(p, 0, sizeof(*p));
	p->busy = xcalloc((size_t)c->n, 1);
	for (int i = 0; i < c->n; i++)
		p->busy[i] = c->outstanding[i] > 0;
	/*
	 * Idle agents: those of the pool less one for each task outstanding,
	 * where a chain (its links wait for each other on one agent) takes one.
	 */
	if ((rc = store_tasks_busy(&taken, s->st, c->id)))
		return rc;
	p->k = (pool ? coord_live_agents(s, pool) : 1) - (int)taken;
	return engine_load(&p->b, s, c);
}

/* The engine's work, on the plan's own engine: needs no lock. */
static void engine_decide(struct engine_plan *p)
{
	int k = p->k;

	/*
	 * With every agent busy the engine is still asked, for one: it only
	 * decides with k > 0, and an end found unmeasurable or a spent budget
	 * should end the job now, not once the chain that keeps the agents
	 * busy is through (ten boots of a kernel that cannot run). The
	 * queries it chose then wait for an idle agent: the next step asks
	 * again, from the store.
	 */
	p->q = xcalloc((size_t)BISECT_MAX_QUERIES(k > 0 ? k : 1), sizeof(*p->q));
	p->nq = bisect_next(p->q, p->b, k > 0 ? k : 1, p->busy);
	bisect_result(&p->res, p->b);
	if (k <= 0 && p->res.state != BISECT_DONE)
		p->nq = 0;
}

/*
 * Under s->lock, in a transaction: records the decision and queues the
 * tasks (a confirmation as a chain of one-run tasks, parent and culprit
 * in turn, on one agent), or ends the job. A job past its wall-time
 * budget ends undecided instead of queueing more, unless this step
 * decided it.
 */
static int engine_apply(struct coord *s, struct jobctx *c, struct engine_plan *p)
{
	struct bisect *b = p->b;
	struct bisect_query *q = p->q;
	struct bisect_result res = p->res;
	int nq = p->nq, rc = 0;

	if (res.state != BISECT_DONE && budget_seconds_of(c, &res) > 0 && job_elapsed(c) > budget_seconds_of(c, &res)) {
		json_t *rep;
		char why[160];

		if ((rc = engine_report(&rep, s, c, b, &res)))
			goto out;
		snprintf(why, sizeof(why), "the wall-time budget is spent (%lld s%s, %lld s since the job was created)",
			 budget_seconds_of(c, &res),
			 c->job.budget_seconds > 0 ? "" : ", derived",
			 job_elapsed(c));
		rc = engine_finish_undecided(s, c, &res, rep, why);
		json_decref(rep);
		goto out;
	}
	if ((rc = keep_budgets(s, c, &res)))
		goto out;
	if (nq > 0 || res.state == BISECT_DONE)
		if ((rc = record_decision(s, c, b, q, nq)))
			goto out;
	/* Call the measured commits the posterior is sure of, for show and the dashboard. */
	for (int i = 0; i < c->n && rc == 0 && res.state != BISECT_ENDS; i++) {
		double m;

		if (c->cls[i] == CLASS_SKIPPED || c->sum[i].n == 0)
			continue;
		m = bisect_bad_mass(b, i);
		if (m >= res_confidence(c) && c->cls[i] != CLASS_BAD)
			rc = coord_set_commit_state(s, c, i, "bad");
		else if (m <= 1 - res_confidence(c) && c->cls[i] != CLASS_GOOD)
			rc = coord_set_commit_state(s, c, i, "good");
	}
	if (rc)
		goto out;
	if (res.state == BISECT_DONE) {
		json_t *rep;

		if ((rc = engine_report(&rep, s, c, b, &res)))
			goto out;
		if (res.verdict == VERDICT_CULPRIT)
			rc = engine_finish_culprit(s, c, &res, rep);
		else if (res.verdict == VERDICT_RANGE)
			rc = coord_finish(s, c, "done", -1, rep, NULL);
		else if (res.verdict == VERDICT_NONE && (bisect_skipped(b, 0) || bisect_skipped(b, c->n - 1)))
			rc = coord_fail_end(s, c, bisect_skipped(b, 0) ? 0 : c->n - 1);
		else if (res.verdict == VERDICT_NOT_REPRODUCED)
			rc = coord_finish(s, c, "not-reproduced", -1, rep, NULL);
		else if (res.verdict == VERDICT_UNDECIDED)
			rc = engine_finish_undecided(s, c, &res, rep, NULL);
		else
			rc = coord_finish(s, c, "failed", -1, NULL, res.why);
		json_decref(rep);
		goto out;
	}
	rc = queue_queries(s, c, q, nq);
out:
	return rc;
}

/*
 * One step of the probabilistic engine: the engine as the store makes it,
 * asked for as many queries as the pool has idle agents, its decision
 * applied. All under s->lock, in the caller's transaction.
 */
static int engine_step(struct coord *s, struct jobctx *c)
{
	struct engine_plan p;
	int rc;

	if ((rc = engine_prepare(s, c, &p)) == 0) {
		engine_decide(&p);
		rc = engine_apply(s, c, &p);
	}
	plan_release(&p);
	return rc;
}

int coord_engine_step_unlocked(struct coord *s, struct jobctx *c)
{
	unsigned long long epoch = s->step_epoch;
	struct engine_plan p;
	int rc;

	if ((rc = engine_prepare(s, c, &p)))
		goto out;
	pthread_mutex_unlock(&s->lock);
	engine_decide(&p);
	pthread_mutex_lock(&s->lock);
	/* Another step of a job ran meanwhile (or the job ended): this one is decided on what is gone. */
	if (s->step_epoch != epoch) {
		rc = 1;
		goto out;
	}
	if ((rc = store_begin(s->st)))
		goto out;
	if ((rc = engine_apply(s, c, &p)) || (rc = store_commit(s->st)))
		store_rollback(s->st);
	s->step_epoch++;
out:
	plan_release(&p);
	return rc;
}


const struct policy_ops policy_bisectd = {
	.name = "bisectd",
	.step = engine_step,
};
