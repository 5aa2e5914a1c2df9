/*
 * coord_intake: what an agent reports of a task: its samples and their
 * commit's summary (added to, never read again from every sample) in one
 * transaction, and the step they lead to after it (coord_step_later());
 * a failure back to the queue (or, after the last attempt, the commit
 * skipped); a retried upload answered as a duplicate, a stale one
 * refused.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "util.h"

void result_request_release(struct result_request *req)
{
	if (!req)
		return;
	free(req->samples);
	req->samples = NULL;
	req->nr_samples = 0;
}

int coord_task_retry(struct coord *s, long long task, long long job, int idx, long long attempt, const char *why)
{
	int rc;

	if ((rc = coord_profile_retry(s, task, attempt, why)))
		return rc < 0 ? rc : 0;
	if (attempt < MAX_ATTEMPTS) {
		rc = store_task_requeue(s->st, task, why);
		if (rc == 0)
			rc = coord_event(s, job, "retry", "task %lld attempt %lld: %s", task, attempt, why);
		http_wake(s->claims);
		return rc;
	}
	rc = store_task_fail(s->st, task, (long long)now_unix(), why);
	if (rc == 0)
		rc = store_job_commit_set_state(s->st, job, idx, "skipped");
	if (rc == 0)
		rc = coord_event(s, job, "skip", "commit %d: task %lld failed %d times, last: %s", idx, task,
				 MAX_ATTEMPTS, why);
	return rc;
}

/* 1 when the upload was taken already; ERR_CONFLICT when the task is not the agent's to report. */
static int check_task(const struct task *t, const struct result_request *req, long long agent, long long nr_samples)
{
	if (nr_samples > 0)
		return 1;
	if (t->attempt == req->attempt && (!strcmp(t->state, "done") || !strcmp(t->state, "skipped") ||
					   (!strcmp(t->state, "queued") && !strcmp(req->status, "failed"))))
		return 1;
	if (t->attempt != req->attempt || strcmp(t->state, "claimed") || t->agent != agent)
		return err_set(ERR_CONFLICT, "task %lld attempt %lld is not yours any more (now attempt %lld, %s)",
			       t->id, req->attempt, t->attempt, t->state);
	if (strcmp(t->job_state, "queued") && strcmp(t->job_state, "running"))
		return err_set(ERR_CONFLICT, "job %lld has ended (%s): result dropped", t->job, t->job_state);
	return 0;
}

/* Records what the agent measured, or that it skipped the commit. */
static int take_samples(struct coord *s, const struct task *t, const struct result_request *req)
{
	struct stats_acc acc, mine;
	int rc = store_task_finish(s->st, t->id, !strcmp(req->status, "ok") ? "done" : "skipped",
				   (long long)now_unix(), req->build_s, req->run_s, req->error, req->log_tail);

	/*
	 * The commit's summary takes the new runs into its running sums: what
	 * an upload costs does not grow with the runs the commit has already.
	 */
	if (rc == 0 && req->nr_samples > 0)
		rc = store_summary_acc(&acc, s->st, t->job, t->idx);
	/* ... and so do the agent's own sums of the commit, for the commits at one agent's level. */
	if (rc == 0 && req->nr_samples > 0)
		rc = store_agent_acc(&mine, s->st, t->job, t->idx, t->agent);
	if (rc == 0 && req->nr_samples > 0) {
		struct sample *x = xcalloc(req->nr_samples, sizeof(*x));

		for (size_t i = 0; i < req->nr_samples; i++) {
			x[i] = (struct sample){
				.task = t->id, .attempt = req->attempt, .run = (long long)i, .job = t->job,
				.idx = t->idx, .value = req->samples[i].value,
				.unit = req->samples[i].unit ? req->samples[i].unit : t->unit,
				.error = req->samples[i].error, .created = (long long)now_unix(),
			};
			stats_acc_add(&acc, x[i].value);
			stats_acc_add(&mine, x[i].value);
		}
		rc = store_samples_add(s->st, x, req->nr_samples);
		free(x);
	}
	if (rc == 0 && req->nr_samples > 0)
		rc = store_summary_acc_put(s->st, t->job, t->idx, &acc);
	if (rc == 0 && req->nr_samples > 0)
		rc = store_agent_acc_put(s->st, t->job, t->idx, t->agent, &mine);
	if (rc == 0 && !strcmp(req->status, "skipped")) {
		rc = store_job_commit_set_state(s->st, t->job, t->idx, "skipped");
		if (rc == 0)
			rc = coord_event(s, t->job, "skip", "commit %d: %s", t->idx,
					 req->error ? req->error : "skipped by the agent");
	} else if (rc == 0) {
		rc = coord_event(s, t->job, "result", "task %lld: %zu runs of commit %d from %s", t->id,
				 req->nr_samples, t->idx, req->agent);
	}
	return rc;
}

/*
 * The job's own settings cannot be used at this commit (its kernel config
 * variant refused by the commit's Kconfig): no other agent or attempt
 * would do better, and a variant that holds at some commits only would
 * compare different kernels. The job fails at once, with the reason.
 */
static int refuse_job(struct coord *s, const struct task *t, const struct result_request *req)
{
	const char *why = req->error ? req->error : "the agent cannot use the job's own settings";
	struct jobctx c;
	int rc = store_task_fail(s->st, t->id, (long long)now_unix(), why);

	if (rc == 0 && (rc = jobctx_load(s, &c, t->job)) == 0) {
		rc = coord_fail_job(s, &c, "the job's settings are refused at commit %d: %s", t->idx, why);
		jobctx_release(&c);
	}
	return rc;
}

int coord_task_result(json_t **reply, struct coord *s, long long task_id, const struct result_request *req)
{
	struct task t = { 0 };
	long long agent, n;
	int rc, seen;

	*reply = NULL;
	pthread_mutex_lock(&s->lock);
	/* Seen only once the upload is taken: a refused one leaves the store as it was. */
	if ((rc = coord_agent_find(&agent, NULL, s, req->agent)))
		goto unlock;
	if ((rc = store_task_get(&t, s->st, task_id)))
		goto unlock;
	if (store_task_nr_samples(&n, s->st, task_id, req->attempt))
		n = 0;
	if ((rc = check_task(&t, req, agent, n)) >= 0 && (seen = store_agent_seen(s->st, agent, (long long)now_unix(), 1))) {
		rc = seen;
		goto unlock;
	}
	if (rc == 1) {
		rc = 0;
		*reply = json_pack("{s:b, s:b}", "ok", 1, "duplicate", 1);
		goto unlock;
	}
	if (rc)
		goto unlock;
	if ((rc = store_begin(s->st)))
		goto unlock;
	if ((rc = coord_profile_result(s, &t, req)))
		rc = rc < 0 ? rc : 0;
	else if (!strcmp(req->status, "failed"))
		rc = coord_task_retry(s, task_id, t.job, t.idx, req->attempt,
				      req->error ? req->error : "the agent could not do the task");
	else if (!strcmp(req->status, "refused"))
		rc = refuse_job(s, &t, req);
	else
		rc = take_samples(s, &t, req);
	/*
	 * The step an upload leads to (measured runs, a skip, a failure) comes
	 * after the reply, in a transaction of its own, its engine decided
	 * outside s->lock (coord_engine_step_unlocked()), so that an upload
	 * costs what its samples do and not what the engine does with the
	 * whole job. (A skip stepped inside the request once: on a large job
	 * every other request waited for that engine.)
	 */
	if (rc == 0 && !s->stepping)
		rc = coord_job_step(s, t.job);
	if (rc || (rc = store_commit(s->st))) {
		store_rollback(s->st);
		goto unlock;
	}
	if (s->stepping && (rc = coord_step_later(s, t.job)))
		goto unlock;
	*reply = json_pack("{s:b, s:b}", "ok", 1, "duplicate", 0);
	/*
	 * The task is done: the next link of its chain (after_task) may be
	 * claimed now, by the agent that ran this one (claimable_row()), if
	 * a claim of its is parked (it usually claims next on its own).
	 */
	coord_wake_claims(s, NULL, t.agent, 1);
unlock:
	pthread_mutex_unlock(&s->lock);
	store_task_release(&t);
	return rc;
}
