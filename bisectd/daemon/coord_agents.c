/*
 * coord_agents: the registry of agents: registration with labels, when
 * each was last seen (any call it makes) and last asked for work (claim),
 * heartbeats that keep the leases of the task in hand and of the results
 * it still holds, and the list the API shows: offline after three lease
 * periods, retired after agent_retire_seconds (coord_live.c) until its
 * next call.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "jsonx.h"
#include "util.h"

int coord_agent_list(json_t **reply, struct coord *s)
{
	json_t *rows = NULL, *r;
	long long cutoff = now_unix() - 3LL * s->conf->lease_seconds;
	size_t i;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store_agents_doc(&rows, s->st);
	if (rc == 0)
		coord_dash_agents(s, rows);
	pthread_mutex_unlock(&s->lock);
	if (rc)
		return rc;
	json_array_foreach(rows, i, r) {
		const char *st = !json_is_null(json_object_get(r, "retired")) ? "retired" :
				 json_integer_value(json_object_get(r, "last_seen")) < cutoff ? "offline" :
				 json_is_null(json_object_get(r, "task")) ? "idle" : "busy";

		json_object_set_new(r, "state", json_string(st));
	}
	*reply = json_pack("{s:o}", "agents", rows);
	return 0;
}

int coord_agent_register(json_t **reply, struct coord *s, const struct register_request *req)
{
	json_t *labels = json_array();
	char *lv[COORD_MAX_LABELS + 1] = { NULL };
	char *lj;
	int rc;

	*reply = NULL;
	for (size_t i = 0; i < req->nr_labels; i++) {
		json_array_append_new(labels, json_string(req->labels[i]));
		lv[i] = (char *)(uintptr_t)req->labels[i];
	}
	lj = jsonx_dump(labels);
	json_decref(labels);
	pthread_mutex_lock(&s->lock);
	if ((rc = store_begin(s->st)) == 0) {
		struct agent was;

		if (store_agent_get(&was, s->st, req->name) == 0 && was.retired)
			rc = coord_event(s, 0, "agent", "%s is back (retired at %lld)", req->name, was.retired);
		store_agent_release(&was);
		if (rc == 0)
			rc = store_agent_put(s->st, req->name, lj, (long long)now_unix());
		if (rc == 0)
			rc = coord_event(s, 0, "agent", "%s registered with labels %s", req->name, lj);
		if (rc || (rc = store_commit(s->st)))
			store_rollback(s->st);
	}
	/* Its labels may have changed: the jobs of the pools it is in now that wait are stepped again. */
	if (rc == 0) {
		coord_live_forget(s);
		coord_wake_pool(s, lv);
	}
	pthread_mutex_unlock(&s->lock);
	free(lj);
	if (rc < 0)
		return rc;
	*reply = json_pack("{s:s, s:i, s:i}", "name", req->name, "heartbeat", 5, "lease", s->conf->lease_seconds);
	return 0;
}

/* The agent's row (release it), its id and (unless NULL) its labels, moved out of the row. */
static int agent_lookup(struct coord *s, struct agent *a, long long *id, char ***labels, const char *name)
{
	int rc;

	if (!is_valid_name(name))
		return err_set(ERR_INVALID, "agent name must be 1-64 of [A-Za-z0-9._-]");
	rc = store_agent_get(a, s->st, name);
	if (rc == ERR_NOTFOUND)
		return err_set(ERR_NOTFOUND, "agent '%s' is not registered: POST /api/v1/agents/register first", name);
	if (rc)
		return rc;
	*id = a->id;
	if (labels) {
		*labels = a->labels;
		a->labels = NULL;
	}
	return 0;
}

int coord_agent_find(long long *id, char ***labels, struct coord *s, const char *name)
{
	struct agent a;
	int rc = agent_lookup(s, &a, id, labels, name);

	if (rc == 0)
		store_agent_release(&a);
	return rc;
}

int coord_agent_seen(long long *id, char ***labels, int *appeared, struct coord *s, const char *name, int claim)
{
	long long now = (long long)now_unix();
	struct agent a;
	int rc = agent_lookup(s, &a, id, labels, name), back;

	if (rc)
		return rc;
	back = a.retired || a.last_claim < now - s->conf->lease_seconds;
	if (appeared)
		*appeared = back;
	/* It counts as live from this call on (a claim), or is no longer retired. */
	if (back && (claim || a.retired))
		coord_live_forget(s);
	rc = a.retired ? coord_event(s, 0, "agent", "%s is back (retired at %lld)", a.name, a.retired) : 0;
	/* Seen this second already: nothing to write (a burst of calls costs one write a second). */
	if (rc == 0 && (a.retired || a.last_seen != now || (claim && a.last_claim != now)))
		rc = store_agent_seen(s->st, *id, now, claim);
	store_agent_release(&a);
	if (rc && labels) {
		strv_free(*labels);
		*labels = NULL;
	}
	return rc;
}

int coord_agent_heartbeat(json_t **reply, struct coord *s, const char *name, const struct heartbeat_request *req)
{
	long long agent;
	int held, cancel = 0, rc;

	*reply = NULL;
	pthread_mutex_lock(&s->lock);
	/* One transaction: one commit for the agent seen and every lease it keeps. */
	if ((rc = store_begin(s->st)))
		goto out;
	if ((rc = coord_agent_seen(&agent, NULL, NULL, s, name, 0)))
		goto out;
	/* Results it could not upload yet (the coordinator was away): their leases hold until they land. */
	for (size_t i = 0; i < req->nr_held; i++)
		if ((rc = store_task_heartbeat(&held, s->st, req->held[i].task, agent, req->held[i].attempt,
					       (long long)(now_unix() + s->conf->lease_seconds), NULL)))
			goto out;
	if (req->task > 0) {
		if ((rc = store_task_heartbeat(&held, s->st, req->task, agent, req->attempt,
					       (long long)(now_unix() + s->conf->lease_seconds), req->progress)))
			goto out;
		cancel = !held;
	}
	if ((rc = store_commit(s->st)))
		goto out;
	*reply = json_pack("{s:b, s:b}", "ok", 1, "cancel", cancel);
	coord_changed(s);  /* a new progress line for the dashboard */
out:
	if (rc)
		store_rollback(s->st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
