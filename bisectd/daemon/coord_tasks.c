/*
 * coord_tasks: tasks and their leases: an agent's claim as the API makes
 * it (the agent seen, then one try at the oldest queued task its labels
 * fit: coord_claims.c), and the expiry of leases whose agent went quiet.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "log.h"
#include "util.h"

int coord_agent_claim(json_t **reply, struct coord *s, const char *name, struct coord_claimer *who)
{
	char **labels = NULL;
	long long agent = 0;
	int appeared = 0, rc;

	*reply = NULL;
	/* Handed a task while it waited: fired only once that claim was committed, so it stands. */
	if (who && who->handed) {
		*reply = who->handed;
		who->handed = NULL;
		return 0;
	}
	pthread_mutex_lock(&s->lock);
	/*
	 * One transaction, one commit: the agent seen (each retry of a
	 * parked long poll comes here: it stays "seen" and its claim
	 * counted) and the task claimed.
	 */
	if ((rc = store_begin(s->st)))
		goto out;
	rc = coord_agent_seen(&agent, &labels, &appeared, s, name, 1);
	/* It counts for a step now: the jobs of its pools that wait for agents are stepped again. */
	if (rc == 0 && appeared && (rc = store_commit(s->st)) == 0) {
		coord_wake_pool(s, labels);
		rc = store_begin(s->st);
	}
	if (rc == 0 && !s->shutdown)
		rc = coord_try_claim(reply, s, agent, labels, name);
	if (rc || (rc = store_commit(s->st))) {
		store_rollback(s->st);
		json_decref(*reply);
		*reply = NULL;
	}
out:
	pthread_mutex_unlock(&s->lock);
	if (who && rc == 0) {
		strv_free(who->labels);
		who->agent = agent;
		who->labels = labels;
	} else {
		strv_free(labels);
	}
	return rc;
}

void coord_tick(struct coord *s)
{
	struct task *t = NULL;
	size_t n = 0;

	pthread_mutex_lock(&s->lock);
	/* Agents re-announce what they hold with their first heartbeats after an outage. */
	if (coord_in_grace(s) || store_tasks_expired(&t, &n, s->st, (long long)now_unix()))
		goto out;
	for (size_t i = 0; i < n; i++) {
		char *why = xasprintf("lease expired: agent %s stopped heartbeating",
				      t[i].agent_name ? t[i].agent_name : "?");
		struct task cur = { 0 };
		int rc = store_begin(s->st), ended = 0;

		if (rc == 0 && (rc = store_task_get(&cur, s->st, t[i].id)) == 0)
			ended = strcmp(cur.job_state, "queued") && strcmp(cur.job_state, "running");
		store_task_release(&cur);
		/* A task of a job that ended (its agent dropped it) is not tried again. */
		if (rc == 0 && ended && (rc = store_task_requeue(s->st, t[i].id, why)) == 0)
			rc = store_tasks_cancel_queued(s->st, t[i].job, (long long)now_unix());
		else if (rc == 0)
			rc = coord_task_retry(s, t[i].id, t[i].job, t[i].idx, t[i].attempt, why);
		if (rc == 0)
			rc = coord_job_step(s, t[i].job);
		if (rc || (rc = store_commit(s->st))) {
			log_error("expiring task %lld: %s", t[i].id, err_msg());
			store_rollback(s->st);
		}
		free(why);
	}
out:
	coord_sweep(s);
	pthread_mutex_unlock(&s->lock);
	store_tasks_free(t, n);
}
