/*
 * coord_live: nothing stalls. The sweep the tick runs (every queued or
 * running job with no task queued or claimed is stepped again; agents not
 * seen for agent_retire_seconds are retired), the wake of such jobs when
 * an agent of their pool comes to claim, the grace after start-up before
 * leases expire, and the reason a job waits, as the API shows it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "log.h"
#include "util.h"

/* Seconds between two sweeps of the idle jobs. */
#define SWEEP_EVERY_S 5

int coord_in_grace(struct coord *s)
{
	return (long long)now_unix() < s->started + s->conf->lease_grace_seconds;
}

/*
 * Steps the idle jobs: those of the pools an agent with labels is in, or
 * (labels NULL) those whose pool has agents that count.
 */
static void step_idle(struct coord *s, char **labels)
{
	long long *ids = NULL;
	char **pools = NULL;
	size_t n = 0;

	if (store_jobs_idle(&ids, &pools, &n, s->st)) {
		log_error("looking for idle jobs: %s", err_msg());
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct conf_pool *p = conf_pool_find(s->conf, pools[i]);
		int rc;

		if (labels && (!p || !conf_pool_matches(p, labels)))
			continue;
		/* The sweep: a step with no agent to give work to would only reread the job. */
		if (!labels && (!p || coord_live_agents(s, p) == 0))
			continue;
		if ((rc = store_begin(s->st)) == 0) {
			rc = coord_job_step(s, ids[i]);
			if (rc || (rc = store_commit(s->st)))
				store_rollback(s->st);
		}
		if (rc)
			log_error("job %lld: stepping it again: %s", ids[i], err_msg());
	}
	free(ids);
	strv_free(pools);
}

void coord_wake_pool(struct coord *s, char **labels)
{
	step_idle(s, labels);
}

static void retire_agents(struct coord *s)
{
	long long now = (long long)now_unix();
	char **names = NULL;
	int rc;

	if ((rc = store_begin(s->st)))
		goto out;
	rc = store_agents_retire(&names, s->st, now - s->conf->agent_retire_seconds, now);
	for (char **p = names; rc == 0 && p && *p; p++)
		rc = coord_event(s, 0, "agent", "%s retired: not seen for %d s; its leases expire", *p,
				 s->conf->agent_retire_seconds);
	if (rc || (rc = store_commit(s->st)))
		store_rollback(s->st);
	else if (names)
		coord_live_forget(s);
out:
	if (rc)
		log_error("retiring agents: %s", err_msg());
	strv_free(names);
}

void coord_sweep(struct coord *s)
{
	long long now = (long long)now_unix();

	if (now - s->last_sweep < SWEEP_EVERY_S)
		return;
	s->last_sweep = now;
	/* After an outage every agent looks long gone: give them the grace to come back. */
	if (!coord_in_grace(s))
		retire_agents(s);
	step_idle(s, NULL);
	coord_profile_sweep(s);
}

json_t *coord_job_waiting(struct coord *s, json_t *job)
{
	const char *state = json_string_value(json_object_get(job, "state"));
	const char *name = json_string_value(json_object_get(job, "pool"));
	const struct conf_pool *p;
	char *why;
	json_t *j;

	if (!state || !name || (strcmp(state, "queued") && strcmp(state, "running")))
		return json_null();
	if (!(p = conf_pool_find(s->conf, name)))
		why = xasprintf("waiting for agents of pool %s: the pool is not in the config", name);
	else if (coord_live_agents(s, p) == 0)
		why = xasprintf("waiting for agents of pool %s: none has asked for work in the last %d s", name,
				s->conf->lease_seconds);
	else
		return json_null();
	j = json_string(why);
	free(why);
	return j;
}
