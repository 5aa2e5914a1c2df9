/*
 * coord_claims: a queued task claimed for an agent, and the task as the
 * agent gets it: at its claim (the oldest queued task its labels fit;
 * api.c makes the long poll), or handed at once to a claim parked
 * waiting when a step queues it, fired once the step's transaction ends.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "jsonx.h"
#include "log.h"
#include "store_profiles.h"
#include "taskwire.h"
#include "util.h"

/* "parent" or "culprit" for a profile task, NULL for any other (static strings). */
static const char *profile_role(struct coord *s, long long task)
{
	struct profile p;
	const char *role = NULL;

	if (store_profile_of_task(&p, s->st, task) == 0)
		role = !strcmp(p.role, "parent") ? "parent" : "culprit";
	store_profile_release(&p);
	return role;
}

/*
 * The claim reply for task t: the task as taskwire.h defines it, with the
 * workload's validated definition (conf_workload_def()) and the job's
 * variant of the command line after the workload's own parameters (the
 * later one wins), and its kernel config variant in the kernel build.
 * NULL only if the codec refuses what the store and the config hold; the
 * lease then runs out and the task is claimed again.
 */
static json_t *task_json(const struct task *t, const struct conf_workload *w, long long attempt, int lease,
			 const char *profile)
{
	struct task_wire tw = { 0 };
	json_t *config = t->config ? json_loads(t->config, 0, NULL) : NULL, *def, *j = NULL;

	/* Never a build without the variant the job asked for. */
	if (t->config && !json_is_array(config)) {
		log_error("task %lld: the job's config is not a JSON array: %s", t->id, t->config);
		json_decref(config);
		return NULL;
	}
	def = conf_workload_def_job(w, t->append, config);

	tw.task = t->id;
	tw.attempt = attempt;
	tw.job = t->job;
	tw.commit = t->sha;
	tw.runs = t->runs;
	tw.lease = lease;
	tw.repo_name = t->repo;
	tw.repo_url = t->url;
	tw.workload = def;
	tw.profile = profile;
	if (taskwire_encode(&j, &tw) < 0)
		log_error("task %lld: %s", t->id, err_msg());
	json_decref(def);
	json_decref(config);
	return j;
}

/*
 * Claims queued task t (of workload w) for agent, named to in the event,
 * in the caller's transaction: *reply the task as the agent gets it,
 * *attempt the attempt it runs.
 */
static int claim_one(struct coord *s, json_t **reply, long long *attempt, const struct task *t,
		     const struct conf_workload *w, long long agent, const char *to)
{
	int rc;

	*attempt = t->attempt + 1;
	rc = store_task_claim(s->st, t->id, *attempt, agent, (long long)(now_unix() + s->conf->lease_seconds),
			      (long long)now_unix());
	if (rc == 0)
		rc = store_job_set_running(s->st, t->job);
	if (rc == 0)
		rc = coord_event(s, t->job, "claim", "task %lld (commit %d, %.12s) attempt %lld to %s", t->id, t->idx,
				 t->sha, *attempt, to);
	if (rc == 0)
		*reply = task_json(t, w, *attempt, s->conf->lease_seconds, profile_role(s, t->id));
	return rc;
}

int coord_try_claim(json_t **reply, struct coord *s, long long agent, char **labels, const char *name)
{
	struct task *t = NULL;
	size_t n = 0;
	json_t *fit = json_array();
	char *pools;
	int rc;

	/* Only the tasks of pools it is in: a burst of claims does not read every queued task each. */
	for (size_t i = 0; i < s->conf->nr_pools; i++)
		if (conf_pool_matches(&s->conf->pools[i], labels))
			json_array_append_new(fit, json_string(s->conf->pools[i].name));
	pools = jsonx_dump(fit);
	json_decref(fit);
	rc = store_tasks_claimable(&t, &n, s->st, agent, (long long)(now_unix() - s->conf->lease_seconds), pools);
	free(pools);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		const struct conf_pool *p = conf_pool_find(s->conf, t[i].pool);
		const struct conf_workload *w = conf_workload_find(s->conf, t[i].workload);
		long long attempt;

		if (!p || !w || !conf_pool_matches(p, labels))
			continue;
		rc = claim_one(s, reply, &attempt, &t[i], w, agent, name);
		break;
	}
	store_tasks_free(t, n);
	return rc;
}

void coord_claim_gone(struct coord *s, struct coord_claimer *who)
{
	struct task t = { 0 }, q = { 0 };
	int rc;

	if (!who->handed)
		return;
	json_decref(who->handed);
	who->handed = NULL;
	pthread_mutex_lock(&s->lock);
	if ((rc = store_begin(s->st)))
		goto out;
	/* Still as the hand-off left it: the agent never had it. */
	if (store_task_get(&t, s->st, who->handed_task) == 0 && !strcmp(t.state, "claimed") &&
	    t.agent == who->agent && t.attempt == who->handed_attempt &&
	    (!strcmp(t.job_state, "queued") || !strcmp(t.job_state, "running"))) {
		rc = store_task_requeue(s->st, t.id, "handed to a waiting claim whose agent had gone");
		if (rc == 0)
			rc = coord_event(s, t.job, "requeue", "task %lld attempt %lld: the waiting claim it was handed "
					 "to had gone (its agent's connection closed); queued again", t.id, t.attempt);
		if (rc == 0 && store_task_claimable_get(&q, s->st, t.id) == 0)
			rc = coord_hand_task(s, q.pool, t.id);
	}
	if (rc || (rc = store_commit(s->st))) {
		log_error("handing back task %lld: %s", who->handed_task, err_msg());
		store_rollback(s->st);
	}
out:
	pthread_mutex_unlock(&s->lock);
	store_task_release(&t);
	store_task_release(&q);
}

struct claim_want {
	const struct conf_pool *pool;  /* NULL: any */
	long long agent;               /* 0: any */
};

static int claim_wants(const void *tag, const void *arg)
{
	const struct coord_claimer *who = tag;
	const struct claim_want *w = arg;

	if (!who)
		return 1;
	if (w->agent && who->agent != w->agent)
		return 0;
	/* An agent that has gone: not woken, not handed anything (its task would wait out a lease). */
	if (who->conn && !http_conn_alive(who->conn))
		return 0;
	return !w->pool || conf_pool_matches(w->pool, who->labels);
}

int coord_hand_task(struct coord *s, const char *pool, long long task)
{
	struct claim_want want = { conf_pool_find(s->conf, pool), 0 };
	const struct conf_workload *w;
	struct http_waiter *waiter;
	struct coord_claimer *who;
	struct task t;
	int rc;

	if (s->shutdown || !want.pool || http_take_some(&waiter, s->claims, 1, claim_wants, &want) == 0)
		return 0;
	/* Taken out of the queue, it is no one else's to hand to: who->handed is NULL. */
	who = http_waiter_tag(waiter);
	if ((rc = store_task_claimable_get(&t, s->st, task)))
		goto fire;
	if (!(w = conf_workload_find(s->conf, t.workload)))
		goto fire;  /* the config lost it: the claim finds nothing, as coord_try_claim() */
	if ((rc = claim_one(s, &who->handed, &who->handed_attempt, &t, w, who->agent, "a waiting agent")) == 0)
		who->handed_task = t.id;
fire:
	store_task_release(&t);
	/* Its reply may go once the claim is in the store: fired when the transaction ends. */
	if (store_in_transaction(s->st)) {
		s->handoffs = xgrow(s->handoffs, s->nr_handoffs, &s->handoffs_cap, sizeof(*s->handoffs));
		s->handoffs[s->nr_handoffs++] = waiter;
	} else {
		http_fire(waiter);
	}
	return rc == ERR_NOTFOUND ? 0 : rc;
}

void coord_handoffs_end(void *arg, int committed)
{
	struct coord *s = arg;

	for (size_t i = 0; i < s->nr_handoffs; i++) {
		struct coord_claimer *who = http_waiter_tag(s->handoffs[i]);

		/* Rolled back: the claim made for it is gone; woken empty, it claims again. */
		if (!committed) {
			json_decref(who->handed);
			who->handed = NULL;
		}
		http_fire(s->handoffs[i]);
	}
	s->nr_handoffs = 0;
}

void coord_wake_claims(struct coord *s, const char *pool, long long agent, size_t n)
{
	struct claim_want w = { pool ? conf_pool_find(s->conf, pool) : NULL, agent };

	if (pool && !w.pool)
		http_wake(s->claims);  /* a pool the config no longer has: let every claim look */
	else
		http_wake_some(s->claims, n, claim_wants, &w);
}

struct http_waitq *coord_claim_queue(struct coord *s)
{
	return s->claims;
}

int coord_claim_recheck_ms(struct coord *s)
{
	int ms = s->conf->lease_seconds * 1000 / 3;

	return ms < 1000 ? 1000 : ms;
}
