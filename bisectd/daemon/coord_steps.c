/*
 * coord_steps: a job's context as the store holds it, what the policies
 * share to act on it (queue, decide, compare, end), and the policy table
 * a step is driven by: the job names its policy, one entry per policy
 * (coord_engine.c's "bisectd", coord_split.c's "split").
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "jsonx.h"
#include "log.h"
#include "util.h"

static const struct policy_ops *const policies[] = { &policy_bisectd, &policy_split, NULL };

const struct policy_ops *coord_policy_find(const char *name)
{
	for (const struct policy_ops *const *p = policies; *p; p++)
		if (!strcmp((*p)->name, name))
			return *p;
	return NULL;
}

int coord_policy_valid(const char *name)
{
	return coord_policy_find(name) != NULL;
}

static char policy_names[128];

/* "bisectd or split": the table's names, for the message that refuses another. */
static void policy_names_init(void)
{
	size_t len = 0;

	for (const struct policy_ops *const *p = policies; *p && len < sizeof(policy_names); p++)
		len += (size_t)snprintf(policy_names + len, sizeof(policy_names) - len, "%s%s",
					p == policies ? "" : p[1] ? ", " : " or ", (*p)->name);
}

const char *coord_policy_names(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, policy_names_init);
	return policy_names;
}

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

int coord_compare(struct coord *s, struct jobctx *c, int a, int b, double *change, double *p, enum stats_alt alt)
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
	char *rep;
	int rc;

	/* A culprit to profile (`profile: true`): the verdict waits for the profiles, then stands. */
	if (!strcmp(state, "done") && culprit >= 0 && (rc = coord_profile_hold(s, c, culprit, report)))
		return rc < 0 ? rc : 0;
	rep = report ? jsonx_dump(report) : NULL;
	coord_ecache_drop(s, c->id);
	s->step_epoch++;
	rc = store_job_finish(s->st, c->id, state, (long long)now_unix(), culprit, rep, error);
	free(rep);
	if (rc)
		return rc;
	if ((rc = store_tasks_cancel_queued(s->st, c->id, (long long)now_unix())))
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

int coord_job_step(struct coord *s, long long id)
{
	const struct policy_ops *ops;
	struct jobctx c;
	int rc;

	s->step_epoch++;
	if ((rc = jobctx_load(s, &c, id)))
		return rc;
	if (strcmp(c.job.state, "queued") && strcmp(c.job.state, "running"))
		rc = 0;
	else if ((rc = coord_profile_held(s, id)))
		rc = rc < 0 ? rc : coord_profile_step(s, &c);
	else if ((ops = coord_policy_find(c.job.policy)))
		rc = ops->step(s, &c);
	else
		rc = policy_bisectd.step(s, &c);
	jobctx_release(&c);
	return rc;
}

int coord_step_later(struct coord *s, long long id)
{
	if (!s->stepping)
		return coord_job_step(s, id);
	for (size_t i = 0; i < s->nr_pending; i++)
		if (s->pending[i] == id)
			return 0;
	s->pending = xgrow(s->pending, s->nr_pending, &s->pending_cap, sizeof(*s->pending));
	s->pending[s->nr_pending++] = id;
	pthread_cond_signal(&s->step_cond);
	return 0;
}

/* One pending job's step, under s->lock; 1: ask again (see coord_engine_step_unlocked()). */
static int step_pending(struct coord *s, long long id)
{
	const struct policy_ops *ops;
	struct jobctx c;
	int rc;

	if ((rc = jobctx_load(s, &c, id)))
		return rc;
	ops = coord_policy_find(c.job.policy);
	if (strcmp(c.job.state, "queued") && strcmp(c.job.state, "running")) {
		rc = 0;
	} else if ((rc = coord_profile_held(s, id))) {
		/* Waiting for its profiles (coord_profiles.c): no policy steps it. */
		if (rc > 0 && (rc = store_begin(s->st)) == 0) {
			s->step_epoch++;
			if ((rc = coord_profile_step(s, &c)) || (rc = store_commit(s->st)))
				store_rollback(s->st);
		}
	} else if (ops && ops != &policy_bisectd) {
		/* The split policy's step is cheap: as it always ran. */
		if ((rc = store_begin(s->st)) == 0) {
			s->step_epoch++;
			if ((rc = ops->step(s, &c)) || (rc = store_commit(s->st)))
				store_rollback(s->st);
		}
	} else {
		rc = coord_engine_step_unlocked(s, &c);
	}
	jobctx_release(&c);
	return rc;
}

static void *stepper_main(void *arg)
{
	struct coord *s = arg;
	long long *ids = NULL;
	size_t n = 0;

	pthread_mutex_lock(&s->lock);
	if (store_job_active_ids(&ids, &n, s->st) == 0)
		for (size_t i = 0; i < n; i++)
			coord_step_later(s, ids[i]);
	free(ids);
	while (!s->shutdown) {
		long long id;
		int rc, tries = 0;

		if (s->nr_pending == 0) {
			pthread_cond_wait(&s->step_cond, &s->lock);
			continue;
		}
		id = s->pending[0];
		memmove(s->pending, s->pending + 1, --s->nr_pending * sizeof(*s->pending));
		/* Stale after a step elsewhere: decided again on what is there now (a few times at most). */
		while ((rc = step_pending(s, id)) == 1 && ++tries < 5 && !s->shutdown)
			;
		if (rc == 1)
			coord_step_later(s, id);
		else if (rc)
			log_error("job %lld: step after an upload: %s", id, err_msg());
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int coord_start_steps(struct coord *s)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	if (!s->stepping && (rc = pthread_create(&s->stepper, NULL, stepper_main, s)) == 0)
		s->stepping = 1;
	pthread_mutex_unlock(&s->lock);
	return s->stepping ? 0 : err_set(ERR_FAIL, "cannot start the stepper thread");
}
