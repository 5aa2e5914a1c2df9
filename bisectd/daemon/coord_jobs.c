/*
 * coord_jobs: a job's life as the API sees it: created from a request
 * (its range resolved in the repo's mirror, both ends queued first),
 * cancelled, listed and shown.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "log.h"
#include "methods.h"
#include "policy.h"
#include "util.h"
#include "workload.h"

static const char *names_of(struct sbuf *sb, const void *arr, size_t n, size_t stride)
{
	for (size_t i = 0; i < n; i++) {
		const char *name = *(char *const *)(const void *)((const char *)arr + i * stride);

		sbuf_addf(sb, "%s%s", i ? ", " : "", name);
	}
	if (n == 0)
		sbuf_adds(sb, "none");
	return sb->buf;
}

/* The job's rows: the job, its commits (0 the good end, 1.. the range), an event. */
static int insert_job(long long *id, struct coord *s, const struct job *job, const struct repo_range *rr)
{
	char *subject = xasprintf("good end (%s)", job->good_ref);
	int rc;

	if ((rc = store_job_insert(id, s->st, job)))
		goto out;
	if ((rc = store_job_commit_add(s->st, *id, 0, rr->good, subject, NULL, 0)))
		goto out;
	for (int i = 0; i < rr->nr && rc == 0; i++) {
		const struct repo_commit *rc_ = &rr->commits[i];
		int *ps = xcalloc((size_t)rc_->nr_parents + 1, sizeof(int));

		for (int j = 0; j < rc_->nr_parents; j++)
			ps[j] = rc_->parents[j] + 1;
		rc = store_job_commit_add(s->st, *id, i + 1, rc_->sha, rc_->subject ? rc_->subject : "",
					  ps, rc_->nr_parents);
		free(ps);
	}
out:
	free(subject);
	return rc;
}

/*
 * How the job names a ref it was given: as given, but a whole commit id
 * (40 or 64 hex digits, as bisectctl submit --like sends) by its first 12,
 * as git's short form, so that a range reads "demo 1f2e3d4c5b6a..v6.8"
 * everywhere it is shown. The commits themselves are kept whole.
 */
static const char *ref_name(char out[13], const char *ref)
{
	size_t n = strspn(ref, "0123456789abcdef");

	if ((n == 40 || n == 64) && !ref[n]) {
		memcpy(out, ref, 12);
		out[12] = '\0';
		return out;
	}
	return ref;
}

int coord_job_create(json_t **reply, struct coord *s, const struct job_request *req)
{
	const struct conf_workload *w = NULL;
	const struct conf_pool *p = NULL;
	struct repo_range rr = { .nr = 0 };
	struct sbuf names = SBUF_INIT;
	struct job job = { .culprit = -1 };
	struct mirror *m;
	long long runs = req->runs ? req->runs : s->conf->default_runs, id = 0;
	struct jobctx c;
	char good_short[13], bad_short[13];
	int rc = 0;

	*reply = NULL;
	if (!(m = coord_mirror_find(s, req->repo)))
		rc = err_set(ERR_NOTFOUND, "unknown repo '%s' (configured: %s)", req->repo,
			     names_of(&names, s->conf->repos, s->conf->nr_repos, sizeof(*s->conf->repos)));
	else if (!(w = conf_workload_find(s->conf, req->workload)))
		rc = err_set(ERR_NOTFOUND, "unknown workload '%s' (configured: %s)", req->workload,
			     names_of(&names, s->conf->workloads, s->conf->nr_workloads,
				      sizeof(*s->conf->workloads)));
	else if (!req->pool && s->conf->nr_pools == 0)
		rc = err_set(ERR_INVALID, "no pool given and none configured");
	else if (!(p = req->pool ? conf_pool_find(s->conf, req->pool) : &s->conf->pools[0]))
		rc = err_set(ERR_NOTFOUND, "unknown pool '%s' (configured: %s)", req->pool,
			     names_of(&names, s->conf->pools, s->conf->nr_pools, sizeof(*s->conf->pools)));
	sbuf_release(&names);
	if (rc)
		return rc;
	if (req->append && !(conf_boot_places(w->boot) & (WORKLOAD_GUEST | BOOT_KERNEL)))
		return err_set(ERR_INVALID, "field 'append' is a kernel command line for boot qemu, ssh or kexec; workload '%s' "
			       "boots %s", w->name, w->boot);
	if (req->config && !w->kernel)
		return err_set(ERR_INVALID, "field 'config' sets options of the kernel a workload builds; workload "
			       "'%s' builds no kernel (it has no 'kernel' build)", w->name);
	if ((rc = coord_resolve_range(s, m, &rr, req->good, req->bad)))
		return rc;

	/* The struct's strings are borrowed here: job is not released. */
	job.workload = (char *)(uintptr_t)req->workload;
	job.pool = p->name;
	job.good = rr.good;
	job.bad = rr.bad;
	job.good_ref = (char *)(uintptr_t)ref_name(good_short, req->good);
	job.bad_ref = (char *)(uintptr_t)ref_name(bad_short, req->bad);
	job.runs = runs;
	job.unit = w->unit;
	job.higher = req->direction ? !strcmp(req->direction, "higher") : w->direction != DIR_LOWER;
	job.created = (long long)now_unix();
	snprintf(job.policy, sizeof(job.policy), "%s", req->policy);
	job.confidence = req->confidence;
	job.alpha = req->alpha;
	job.min_effect = req->min_effect;
	job.budget_runs = req->budget_runs;
	job.budget_builds = req->budget_builds;
	job.end_runs = req->end_runs;
	job.budget_seconds = req->budget_seconds;
	job.append = (char *)(uintptr_t)req->append;
	job.config = req->config ? json_dumps(req->config, JSON_COMPACT) : NULL;

	pthread_mutex_lock(&s->lock);
	if ((rc = store_begin(s->st)))
		goto unlock;
	if ((rc = store_repo_id(&job.repo_id, s->st, req->repo)))
		goto rollback;
	if ((rc = insert_job(&id, s, &job, &rr)))
		goto rollback;
	if ((rc = coord_event(s, id, "created", "%s %s..%s (%d candidates), workload %s, pool %s, %lld runs per task",
			      req->repo, req->good, req->bad, rr.nr, req->workload, p->name, runs)))
		goto rollback;
	/* Both ends first: the job never bisects a difference it has not seen. */
	if ((rc = jobctx_load(s, &c, id)))
		goto rollback;
	rc = coord_queue_task(s, &c, 0);
	if (rc == 0)
		rc = coord_queue_task(s, &c, c.n - 1);
	jobctx_release(&c);
	if (rc || (rc = store_commit(s->st)))
		goto rollback;
	*reply = coord_job_json(s, id, 0);
	goto unlock;
rollback:
	store_rollback(s->st);
unlock:
	pthread_mutex_unlock(&s->lock);
	repo_range_release(&rr);
	free(job.config);
	return rc;
}

json_t *coord_job_json(struct coord *s, long long id, int full)
{
	json_t *j = NULL, *x = NULL;
	long long v;

	if (store_job_doc(&j, s->st, id))
		return NULL;
	if (!full || json_is_null(json_object_get(j, "report")))
		json_object_del(j, "report");
	if (store_job_nr_commits(&v, s->st, id) == 0)
		json_object_set_new(j, "nr_commits", json_integer(v - 1));
	if (!json_is_null(json_object_get(j, "culprit")) &&
	    store_job_commit_doc(&x, s->st, id, (int)json_integer_value(json_object_get(j, "culprit"))) == 0)
		json_object_set_new(j, "culprit", x);
	x = NULL;
	if (store_job_progress_doc(&x, s->st, id) == 0) {
		/* The budgets in force: the job's own, else what the engine derived at its last step. */
		json_t *br = json_object_get(j, "budget_runs"), *bs = json_object_get(j, "budget_seconds");

		json_object_set(x, "budget_runs", json_integer_value(br) > 0 ? br : json_object_get(j, "budget_runs_auto"));
		json_object_set(x, "budget_seconds", json_integer_value(bs) > 0 ? bs :
				json_object_get(j, "budget_seconds_auto"));
		json_object_set_new(x, "elapsed_seconds", json_integer((json_is_integer(json_object_get(j, "finished")) ?
			json_integer_value(json_object_get(j, "finished")) : (long long)now_unix()) -
			json_integer_value(json_object_get(j, "created"))));
		json_object_set_new(j, "progress", x);
	}
	x = NULL;
	if (store_job_running_doc(&x, s->st, id) == 0)
		json_object_set_new(j, "running", x);
	json_object_set_new(j, "waiting", coord_job_waiting(s, j));
	coord_dash_job(s, j, id, full);
	if (full) {
		struct jobctx c;

		x = NULL;
		if (jobctx_load(s, &c, id) == 0) {
			unsigned char *in_c = xcalloc((size_t)c.n, 1);

			json_object_set_new(json_object_get(j, "progress"), "candidates",
					    json_integer(policy_candidates(in_c, c.pol, c.cls)));
			free(in_c);
			jobctx_release(&c);
		}
		if (store_job_commits_doc(&x, s->st, id) == 0) {
			json_object_set_new(j, "commits", x);
			coord_job_levels(s, id, j);  /* best effort: the pooled figures stay where it cannot */
		}
		x = NULL;
		if (store_job_decisions_doc(&x, s->st, id) == 0) {
			json_t *t;
			size_t i;

			/* The last step's most probable commits with their ids and subjects, measured or not yet. */
			json_array_foreach(json_object_get(json_array_get(x, json_array_size(x) - 1), "top"), i, t) {
				json_t *row = NULL;

				if (store_job_commit_doc(&row, s->st, id, (int)json_integer_value(json_object_get(t, "idx")))) {
					err_clear();
					continue;
				}
				json_object_set(t, "sha", json_object_get(row, "sha"));
				json_object_set(t, "subject", json_object_get(row, "subject"));
				json_decref(row);
			}
			json_object_set_new(j, "decisions", x);
		}
		x = NULL;
		if (store_job_events_doc(&x, s->st, id) == 0)
			json_object_set_new(j, "events", x);
	}
	return j;
}

int coord_job_list(json_t **reply, struct coord *s)
{
	json_t *jobs = json_array();
	long long *ids = NULL;
	size_t n = 0;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store_job_ids(&ids, &n, s->st, 500);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		json_t *j = coord_job_json(s, ids[i], 0);

		if (j)
			json_array_append_new(jobs, j);
	}
	pthread_mutex_unlock(&s->lock);
	free(ids);
	if (rc) {
		json_decref(jobs);
		return rc;
	}
	*reply = json_pack("{s:o}", "jobs", jobs);
	return 0;
}

int coord_job_get(json_t **reply, struct coord *s, long long id)
{
	pthread_mutex_lock(&s->lock);
	*reply = coord_job_json(s, id, 1);
	pthread_mutex_unlock(&s->lock);
	return *reply ? 0 : err_set(ERR_NOTFOUND, "job %lld does not exist", id);
}

int coord_job_cancel(json_t **reply, struct coord *s, long long id)
{
	struct jobctx c;
	const char *st;
	int rc;

	*reply = NULL;
	pthread_mutex_lock(&s->lock);
	if ((rc = jobctx_load(s, &c, id)))
		goto unlock;
	st = c.job.state;
	if (strcmp(st, "queued") && strcmp(st, "running")) {
		rc = err_set(ERR_CONFLICT, "job %lld has ended already (%s)", id, st);
		goto release;
	}
	if ((rc = store_begin(s->st)))
		goto release;
	if ((rc = coord_finish(s, &c, "cancelled", -1, NULL, NULL)) || (rc = store_commit(s->st)))
		store_rollback(s->st);
	else
		*reply = coord_job_json(s, id, 0);
release:
	jobctx_release(&c);
unlock:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* An integer field of the job's document or its report, or def. */
static long long int_of(json_t *o, const char *key, long long def)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? json_integer_value(v) : def;
}

/*
 * Gives an undecided job more runs and wall time, keeping every run it
 * has: its budgets become what it used and more, and it runs on from the
 * store as after a restart. more_runs 0: twice the runs its report said
 * would decide it, else as many as its run budget; more_seconds 0: as much
 * wall time as its budget had. A job undecided at its ends (they were
 * neither shown apart nor equal) may measure each end on by half the more
 * runs (its ends_max). A job whose first step would end it undecided
 * again at once (a verdict no budget changes: a confirmation that failed;
 * a job older than the longest wall time a job may have) is left as it
 * was: ERR_CONFLICT with the reason. One whose first step decides it on
 * the runs it has ends so: a job kept by a bisectd before 2026-12-07,
 * whose engine ended a job at its budget before it read the pairs that
 * spent it. A cancelled job runs on the same way from the runs it has,
 * with the budgets it had (a run budget of the runs it used and
 * more_runs when more_runs is given) and more_seconds of wall time from
 * now.
 */
int coord_job_resume(json_t **reply, struct coord *s, long long id, long long more_runs, long long more_seconds)
{
	json_t *doc = NULL, *rep, *again = NULL, *prog = NULL;
	long long used, builds, est, runs, secs, build_budget, ends_max = 0, now = (long long)now_unix();
	const char *state;
	char ends[96] = "", more[48] = "", budget[64];
	int rc, reproduced, cancelled;

	*reply = NULL;
	pthread_mutex_lock(&s->lock);
	if ((rc = store_job_doc(&doc, s->st, id))) {
		if (rc == ERR_NOTFOUND)
			rc = err_set(ERR_NOTFOUND, "job %lld does not exist", id);
		goto release;
	}
	state = json_string_value(json_object_get(doc, "state"));
	cancelled = !strcmp(state, "cancelled");
	if (strcmp(state, "undecided") && !cancelled) {
		char afresh[96] = "";

		if (strcmp(state, "queued") && strcmp(state, "running"))
			snprintf(afresh, sizeof(afresh), " (bisectctl submit --like %lld measures it afresh, as a new job)",
				 id);
		rc = err_set(ERR_CONFLICT, "job %lld is %s: only an undecided or cancelled job can be resumed%s", id,
			     state, afresh);
		goto release;
	}
	rep = json_object_get(doc, "report");
	if (cancelled) {
		/* No report: its runs from the store, its budgets its own unless more are asked for. */
		if ((rc = store_job_progress_doc(&prog, s->st, id)))
			goto release;
		used = int_of(prog, "samples", 0);
		json_decref(prog);
	} else {
		used = int_of(rep, "runs", 0);
	}
	builds = int_of(rep, "builds", 0);
	est = int_of(rep, "more_runs", 0);
	runs = int_of(doc, "budget_runs", 0);  /* a cancelled job's own; 0: derived */
	if (more_runs > 0 || !cancelled) {
		if (more_runs <= 0)
			more_runs = est > 0 ? 2 * est : int_of(rep, "budget_runs", runs);
		if (more_runs <= 0)
			more_runs = 100;
		runs = used + more_runs;
	}
	if (more_seconds <= 0)
		more_seconds = int_of(rep, "budget_seconds", int_of(doc, "budget_seconds", 0));
	if (more_seconds <= 0)
		more_seconds = int_of(doc, "budget_seconds_auto", 0);
	if (more_seconds <= 0)
		more_seconds = 3600;
	secs = now - int_of(doc, "created", now) + more_seconds;
	if (secs > COORD_BUDGET_S_MAX)
		secs = COORD_BUDGET_S_MAX;
	build_budget = int_of(doc, "budget_builds", 0);
	if (build_budget > 0 && !cancelled)
		build_budget += builds;  /* as many builds again */
	/* Undecided at its ends (they never differed): each end may take half the more runs beyond what it has. */
	if (!cancelled && (rc = store_job_reproduced(&reproduced, s->st, id)))
		goto release;
	if (!cancelled && !reproduced) {
		long long g = int_of(json_object_get(rep, "good"), "n", 0), b = int_of(json_object_get(rep, "bad"), "n", 0);

		ends_max = (g > b ? g : b) + (more_runs + 1) / 2;
		if (ends_max > COORD_ENDS_MAX)
			ends_max = COORD_ENDS_MAX;
		snprintf(ends, sizeof(ends), ", each end measured on to %lld runs", ends_max);
	}
	if ((rc = store_begin(s->st)))
		goto release;
	if (more_runs > 0)
		snprintf(more, sizeof(more), "%lld more runs and ", more_runs);
	if (runs > 0)
		snprintf(budget, sizeof(budget), "%lld runs (%lld used)", runs, used);
	else
		snprintf(budget, sizeof(budget), "runs derived (%lld used)", used);
	if ((rc = store_job_resume(s->st, id, state, runs, build_budget, ends_max, secs)) ||
	    (rc = coord_event(s, id, "resumed", "%s%s%lld s more of wall time: budgets %s%s, %lld s from its creation%s",
			      cancelled ? "after its cancel, " : "", more, more_seconds, budget,
			      build_budget && !cancelled ? ", builds as many again" : "", secs, ends)) ||
	    (rc = coord_job_step(s, id)))
		goto rollback;
	/* Its first step on: undecided at once, nothing is kept, and the reason is the answer. */
	if ((rc = store_job_doc(&again, s->st, id)))
		goto rollback;
	if (!strcmp(json_string_value(json_object_get(again, "state")), "undecided")) {
		const char *why = json_string_value(json_object_get(json_object_get(again, "report"), "why"));

		rc = err_set(ERR_CONFLICT, "job %lld would end undecided %sat once: %s; more runs do not change that "
			     "(bisectctl submit --like %lld measures it afresh, as a new job)", id,
			     cancelled ? "" : "again ", why && *why ? why : "the same verdict", id);
		goto rollback;
	}
	if ((rc = store_commit(s->st)))
		goto rollback;
	*reply = coord_job_json(s, id, 0);
	goto release;
rollback:
	store_rollback(s->st);
release:
	json_decref(doc);
	json_decref(again);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
