/*
 * coord_steps: the policy table a step is driven by (the job names its
 * policy, one entry per policy: coord_engine.c's "bisectd", coord_split.c's
 * "split"), a job's step, and the stepper thread that steps a job after
 * an upload, outside it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "log.h"
#include "util.h"

static const struct policy_ops *const policies[] = { &policy_bisectd, &policy_split, NULL };

/* NULL when no policy has the name. */
static const struct policy_ops *policy_find(const char *name)
{
	for (const struct policy_ops *const *p = policies; *p; p++)
		if (!strcmp((*p)->name, name))
			return *p;
	return NULL;
}

int coord_policy_valid(const char *name)
{
	return policy_find(name) != NULL;
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
	else if ((ops = policy_find(c.job.policy)))
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
	ops = policy_find(c.job.policy);
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
