/*
 * coord_job: a job's context as the store holds it (struct jobctx), and
 * what the policies and the rooms above share to act on it: queue runs,
 * set a commit's state, compare two commits, count the live agents, end
 * the job.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "jsonx.h"
#include "util.h"

static enum commit_class class_of(const char *state)
{
	return !strcmp(state, "good") ? CLASS_GOOD : !strcmp(state, "bad") ? CLASS_BAD :
	       !strcmp(state, "skipped") ? CLASS_SKIPPED : CLASS_UNKNOWN;
}

void jobctx_release(struct jobctx *c)
{
	free(c->parents);
	free(c->nr_parents);
	store_job_commits_free(c->commits, c->n);
	free(c->cls);
	free(c->sum);
	free(c->outstanding);
	policy_free(c->pol);
	store_job_release(&c->job);
	memset(c, 0, sizeof(*c));
}

int jobctx_load(struct coord *s, struct jobctx *c, long long id)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->id = id;
	if ((rc = store_job_get(&c->job, s->st, id)))
		return rc;
	c->runs = (int)c->job.runs;
	c->higher = c->job.higher;
	if ((rc = store_job_commits(&c->commits, &c->n, s->st, id)))
		goto fail;
	c->parents = xcalloc((size_t)c->n + 1, sizeof(*c->parents));
	c->nr_parents = xcalloc((size_t)c->n + 1, sizeof(int));
	c->cls = xcalloc((size_t)c->n + 1, sizeof(*c->cls));
	c->sum = xcalloc((size_t)c->n + 1, sizeof(*c->sum));
	c->outstanding = xcalloc((size_t)c->n + 1, sizeof(int));
	for (int i = 0; i < c->n; i++) {
		c->cls[i] = class_of(c->commits[i].state);
		c->parents[i] = c->commits[i].parents;
		c->nr_parents[i] = c->commits[i].nr_parents;
	}
	if ((rc = policy_new(&c->pol, c->n, c->parents, c->nr_parents)))
		goto fail;
	if ((rc = store_summaries(c->sum, c->n, s->st, id)))
		goto fail;
	if ((rc = store_tasks_outstanding(c->outstanding, c->n, s->st, id)))
		goto fail;
	return 0;
fail:
	jobctx_release(c);
	return rc;
}

int coord_set_commit_state(struct coord *s, struct jobctx *c, int idx, const char *state)
{
	int rc = store_job_commit_set_state(s->st, c->id, idx, state);

	if (rc)
		return rc;
	c->cls[idx] = class_of(state);
	return 0;
}

int coord_queue_unhanded(long long *id, struct coord *s, struct jobctx *c, int idx, int runs, int confirm,
			 long long after)
{
	long long task;
	int rc;

	if ((rc = store_task_add(&task, s->st, c->id, idx, runs, (long long)now_unix(), confirm, after)))
		return rc;
	if (id)
		*id = task;
	if ((rc = store_job_commit_queued(s->st, c->id, idx)))
		return rc;
	c->outstanding[idx]++;
	return 0;
}

int coord_queue_runs(long long *id, struct coord *s, struct jobctx *c, int idx, int runs, int confirm,
		     long long after)
{
	long long task;
	int rc;

	if ((rc = coord_queue_unhanded(&task, s, c, idx, runs, confirm, after)))
		return rc;
	if (id)
		*id = task;
	/*
	 * A link of a chain waits for the one before, which is queued too:
	 * nothing to hand; one claim of the pool looks, as any new task had.
	 */
	if (after > 0) {
		coord_wake_claims(s, c->job.pool, 0, 1);
		return 0;
	}
	return coord_hand_task(s, c->job.pool, task);
}

int coord_queue_task(struct coord *s, struct jobctx *c, int idx)
{
	return coord_queue_runs(NULL, s, c, idx, c->runs, 0, 0);
}

json_t *coord_commit_json(struct coord *s, struct jobctx *c, int idx)
{
	json_t *j = NULL;

	if (store_job_commit_summary_doc(&j, s->st, c->id, idx))
		return json_null();
	return j;
}

int coord_compare(double *change, double *p, struct coord *s, struct jobctx *c, int a, int b, enum stats_alt alt)
{
	double *va = NULL, *vb = NULL;
	size_t na, nb;
	int rc;

	if ((rc = store_commit_values(&va, &na, s->st, c->id, a)) ||
	    (rc = store_commit_values(&vb, &nb, s->st, c->id, b)))
		goto out;
	*change = stats_change_pct(c->sum[a].hmean, c->sum[b].hmean) / 100.0;
	*p = stats_mann_whitney(vb, nb, va, na, alt);
out:
	free(va);
	free(vb);
	return rc;
}

int coord_finish(struct coord *s, struct jobctx *c, const char *state, int culprit, json_t *report,
		 const char *error)
{
	char *rep = report ? jsonx_dump(report) : NULL;
	int rc;

	coord_ecache_drop(s, c->id);
	s->step_epoch++;
	rc = store_job_finish(s->st, c->id, state, (long long)now_unix(), culprit, rep, error);
	free(rep);
	if (rc)
		return rc;
	/*
	 * What is queued goes, and so does what runs: its upload would be
	 * refused (the job has ended), and the agent's next heartbeat says
	 * cancel, so the lab is free within a heartbeat, not after the
	 * task's build and runs (and a resumed job is not held up by claims
	 * no agent runs any more).
	 */
	if ((rc = store_tasks_cancel_open(s->st, c->id, (long long)now_unix())))
		return rc;
	return coord_event(s, c->id, "end", "%s%s%s", state, error ? ": " : "", error ? error : "");
}

int coord_fail_job(struct coord *s, struct jobctx *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return coord_finish(s, c, "failed", -1, NULL, msg);
}

/*
 * Counted once a second per pool: each step asks, and reading every agent
 * (500 of them) was a tenth of bisectd's time under bench-api. What makes
 * a count wrong sooner (an agent back, registered or retired) forgets them.
 */
int coord_live_agents(struct coord *s, const struct conf_pool *pool)
{
	long long now = (long long)now_unix();
	struct live_count *lc;
	struct agent *a = NULL;
	size_t n = 0;
	int live = 0;

	for (size_t i = 0; i < COORD_LIVE_SLOTS; i++)
		if (s->live[i].pool && s->live[i].at == now && !strcmp(s->live[i].pool, pool->name))
			return s->live[i].live;
	if (store_agents_active(&a, &n, s->st, now - s->conf->lease_seconds))
		return 1;
	for (size_t i = 0; i < n; i++)
		live += conf_pool_matches(pool, a[i].labels);
	store_agents_free(a, n);
	lc = &s->live[s->live_next++ % COORD_LIVE_SLOTS];
	free(lc->pool);
	lc->pool = xstrdup(pool->name);
	lc->live = live;
	lc->at = now;
	return live;
}

void coord_live_forget(struct coord *s)
{
	for (size_t i = 0; i < COORD_LIVE_SLOTS; i++)
		s->live[i].at = 0;
}

/*
 * Ends the job because an end could not be measured, with the reason its
 * last task gave ("kernel config: CONFIG_X=y requested ... not set"): the
 * same reason skips every commit, and the user must see it to fix it.
 */
int coord_fail_end(struct coord *s, struct jobctx *c, int e)
{
	char *why = NULL;
	const char *what = "";
	int rc;

	if (store_task_last_error(&why, s->st, c->id, e) || !why) {
		free(why);
		why = NULL;
		if (store_sample_last_error(&why, s->st, c->id, e) == 0 && why)
			what = "every run failed, the last with: ";
	}
	rc = coord_fail_job(s, c, "the %s end could not be measured: %s%s", e ? "bad" : "good", what,
			    why ? why : "build, boot or every run failed");
	free(why);
	return rc;
}

int coord_parent_of(struct jobctx *c, int idx)
{
	return c->nr_parents[idx] ? c->parents[idx][0] : 0;
}
