/*
 * coord_profiles: perf profiles at the culprit, for a workload with
 * `profile: true`. When a job names its culprit, the verdict is held
 * (store_profiles.h) and two profile tasks are queued, the parent's then
 * the culprit's chained on one agent; the job ends `done` with the held
 * verdict once both are in or have failed, its report carrying the
 * symbols whose share moved most. A profile never changes the verdict:
 * a failed one says why, and the culprit stands.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "jsonx.h"
#include "log.h"
#include "perfreport.h"
#include "store_profiles.h"
#include "util.h"

#define DIFF_MAX 10            /* symbols in a report's diff */
#define DIFF_MIN_POINTS 0.1    /* a change of share below it is not shown */
/*
 * How long a verdict waits for its profiles at most: an hour, or four
 * builds and runs of the workload when that is longer. Past it the
 * profiles not in fail (their tasks cancelled) and the job ends.
 */
#define HOLD_MIN_S 3600

static long long hold_limit(const struct conf_workload *w)
{
	long long t = w ? 4LL * (w->build_timeout + w->run_timeout) : 0;

	return t > HOLD_MIN_S ? t : HOLD_MIN_S;
}

int coord_profile_hold(struct coord *s, struct jobctx *c, int culprit, json_t *report)
{
	const struct conf_workload *w = conf_workload_find(s->conf, c->job.workload);
	int parent = coord_parent_of(c, culprit), held_culprit, rc;
	long long pt = 0, ct = 0;
	char *held = NULL, *rep;

	if (!w || !w->profile || !report)
		return 0;
	rc = store_profile_held(&held_culprit, &held, s->st, c->id);
	free(held);
	/* Held already: this is the job ending from its hold. */
	if (rc != ERR_NOTFOUND)
		return rc;
	rep = jsonx_dump(report);
	rc = store_profile_hold(s->st, c->id, culprit, rep, (long long)now_unix());
	free(rep);
	/* No more measuring: what is queued goes, what runs is taken but decides nothing now. */
	if (rc == 0)
		rc = store_tasks_cancel_queued(s->st, c->id, (long long)now_unix());
	coord_ecache_drop(s, c->id);
	s->step_epoch++;
	/*
	 * Each profile's row before its task can be handed: the claim reply
	 * names the role from it. (Handed at once to a parked claim, the
	 * parent's went out as a plain measurement: on a loaded machine the
	 * agent then ran it without perf and the profile failed as "sent no
	 * profile".)
	 */
	if (rc == 0 && (rc = coord_queue_unhanded(&pt, s, c, parent, 1, 0, 0)) == 0 &&
	    (rc = store_profile_add(s->st, c->id, "parent", parent, pt)) == 0)
		rc = coord_hand_task(s, c->job.pool, pt);
	if (rc == 0 && (rc = coord_queue_runs(&ct, s, c, culprit, 1, 0, pt)) == 0)
		rc = store_profile_add(s->st, c->id, "culprit", culprit, ct);
	if (rc == 0)
		rc = coord_event(s, c->id, "profile", "culprit %d named: perf profiles of its parent (commit %d, task "
				 "%lld) and of it (task %lld), on one agent, before the job ends", culprit, parent, pt, ct);
	return rc ? rc : 1;
}

int coord_finish_culprit(struct coord *s, struct jobctx *c, int culprit, json_t *report)
{
	int rc;

	/* A culprit to profile (`profile: true`): the verdict waits for the profiles, then stands. */
	if (culprit >= 0 && (rc = coord_profile_hold(s, c, culprit, report)))
		return rc < 0 ? rc : 0;
	return coord_finish(s, c, "done", culprit, report, NULL);
}

int coord_profile_held(struct coord *s, long long job)
{
	char *held = NULL;
	int culprit, rc = store_profile_held(&culprit, &held, s->st, job);

	free(held);
	return rc == ERR_NOTFOUND ? 0 : rc ? rc : 1;
}

/* The profile's part of the report: its commit, state, and what perf said of it. */
static json_t *profile_json(struct coord *s, struct jobctx *c, const struct profile *p, struct perf_profile *pp)
{
	json_t *cj = coord_commit_json(s, c, p->idx);
	json_t *j = json_pack("{s:i, s:s, s:s}", "idx", p->idx, "state", p->state,
			      "sha", json_string_value(json_object_get(cj, "sha")) ?: "");

	json_decref(cj);
	if (p->agent)
		json_object_set_new(j, "agent", json_string(p->agent));
	if (p->error)
		json_object_set_new(j, "error", json_string(p->error));
	if (pp->n) {
		json_object_set_new(j, "symbols", json_integer((json_int_t)pp->n));
		json_object_set_new(j, "samples", json_integer(pp->samples));
		json_object_set_new(j, "event", json_string(pp->event));
		json_object_set_new(j, "children", json_boolean(pp->children));
	}
	return j;
}

/* The report's "profiles": each profile, and their diff when both are in. */
static json_t *profiles_json(struct coord *s, struct jobctx *c, const struct profile *p, size_t n)
{
	struct perf_profile pp[2] = { PERF_PROFILE_INIT, PERF_PROFILE_INIT };
	const struct profile *role[2] = { NULL, NULL };
	json_t *j = json_object();

	for (size_t i = 0; i < n; i++)
		role[strcmp(p[i].role, "parent") ? 1 : 0] = &p[i];
	for (int r = 0; r < 2; r++) {
		if (!role[r])
			continue;
		if (!strcmp(role[r]->state, "ok") && role[r]->report &&
		    perfreport_parse(&pp[r], role[r]->report, strlen(role[r]->report)))
			perfreport_release(&pp[r]);
		json_object_set_new(j, r ? "culprit" : "parent", profile_json(s, c, role[r], &pp[r]));
	}
	if (pp[0].n && pp[1].n) {
		struct perf_delta *d = NULL;
		json_t *diff = json_array();
		size_t nd = 0;

		perfreport_diff(&d, &nd, &pp[0], &pp[1], DIFF_MAX, DIFF_MIN_POINTS);
		for (size_t i = 0; i < nd; i++) {
			char level[2] = { d[i].level, '\0' };

			json_array_append_new(diff, json_pack("{s:s, s:s, s:f, s:f}", "symbol", d[i].name, "level", level,
							      "parent", d[i].before, "culprit", d[i].after));
		}
		free(d);
		json_object_set_new(j, "diff", diff);
	}
	perfreport_release(&pp[0]);
	perfreport_release(&pp[1]);
	return j;
}

int coord_profile_step(struct coord *s, struct jobctx *c)
{
	struct profile *p = NULL;
	size_t n = 0;
	char *held = NULL;
	json_t *rep = NULL;
	int culprit, rc;

	if ((rc = store_profile_held(&culprit, &held, s->st, c->id)) ||
	    (rc = store_profiles_of_job(&p, &n, s->st, c->id)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(p[i].state, "queued"))
			continue;
		/* Still to be recorded: the job waits for it. */
		if (!strcmp(p[i].task_state, "queued") || !strcmp(p[i].task_state, "claimed"))
			goto out;
		/* Its task ended without a profile (cancelled): it failed, and says so. */
		free(p[i].error);
		p[i].error = xasprintf("its task ended %s without a profile", p[i].task_state);
		snprintf(p[i].state, sizeof(p[i].state), "failed");
		if ((rc = store_profile_finish(s->st, p[i].task, "failed", NULL, p[i].error, NULL,
					       (long long)now_unix())))
			goto out;
	}
	if (!(rep = json_loads(held, 0, NULL))) {
		rc = err_set(ERR_FAIL, "job %lld: its held report is not JSON", c->id);
		goto out;
	}
	json_object_set_new(rep, "profiles", profiles_json(s, c, p, n));
	if ((rc = coord_event(s, c->id, "profile", "profiles done: the verdict held since the culprit was named stands")))
		goto out;
	rc = coord_finish(s, c, "done", culprit, rep, NULL);
out:
	json_decref(rep);
	store_profiles_free(p, n);
	free(held);
	return rc;
}

/* A held job past its limit: what is not in fails, with the reason, and the job ends. Under s->lock. */
static int release_hold(struct coord *s, long long id, long long limit)
{
	struct profile *p = NULL;
	struct jobctx c;
	size_t n = 0;
	char why[160];
	int rc;

	if ((rc = jobctx_load(s, &c, id)))
		return rc;
	snprintf(why, sizeof(why), "not recorded within %lld s of the culprit being named", limit);
	if ((rc = store_begin(s->st)))
		goto out;
	rc = store_profiles_of_job(&p, &n, s->st, id);
	for (size_t i = 0; i < n && rc == 0; i++)
		if (!strcmp(p[i].state, "queued") &&
		    (rc = store_task_fail(s->st, p[i].task, (long long)now_unix(), why)) == 0)
			rc = store_profile_finish(s->st, p[i].task, "failed", NULL, why, NULL, (long long)now_unix());
	if (rc == 0)
		rc = coord_event(s, id, "profile", "the verdict waited %lld s for its profiles: it stands without "
				 "those not in", limit);
	if (rc == 0)
		rc = coord_profile_step(s, &c);
	if (rc || (rc = store_commit(s->st)))
		store_rollback(s->st);
out:
	store_profiles_free(p, n);
	jobctx_release(&c);
	return rc;
}

void coord_profile_sweep(struct coord *s)
{
	long long *ids = NULL, *since = NULL;
	size_t n = 0;

	if (store_profile_holds_before(&ids, &since, &n, s->st, (long long)now_unix() - HOLD_MIN_S)) {
		log_error("looking for held verdicts: %s", err_msg());
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct job j;
		long long limit;

		if (store_job_get(&j, s->st, ids[i]))
			continue;
		limit = hold_limit(conf_workload_find(s->conf, j.workload));
		store_job_release(&j);
		if ((long long)now_unix() - since[i] > limit && release_hold(s, ids[i], limit))
			log_error("job %lld: releasing its held verdict: %s", ids[i], err_msg());
	}
	free(ids);
	free(since);
}

int coord_profile_result(struct coord *s, const struct task *t, const struct result_request *req)
{
	struct perf_profile pp = PERF_PROFILE_INIT;
	struct profile p;
	char *why = NULL;
	int rc = store_profile_of_task(&p, s->st, t->id);

	if (rc == ERR_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (!strcmp(req->status, "ok") && !req->profile_report)
		why = xstrdup("the agent sent no profile (an agent without perf support?)");
	else if (!strcmp(req->status, "ok") && perfreport_parse(&pp, req->profile_report, strlen(req->profile_report)))
		why = xasprintf("the agent's perf report does not parse: %s", err_msg());
	else if (strcmp(req->status, "ok"))
		why = xstrdup(req->error ? req->error : "the agent could not record it");
	/* Not tried again: what fails a profile (no perf, no events) fails it on the next try too. */
	rc = why ? store_task_fail(s->st, t->id, (long long)now_unix(), why) :
		   store_task_finish(s->st, t->id, "done", (long long)now_unix(), req->build_s, req->run_s, NULL, NULL);
	if (rc == 0)
		rc = store_profile_finish(s->st, t->id, why ? "failed" : "ok", req->agent, why,
					  why ? NULL : req->profile_report, (long long)now_unix());
	if (rc == 0 && why)
		rc = coord_event(s, t->job, "profile", "the %s's profile (commit %d) from %s failed: %s", p.role, t->idx,
				 req->agent, why);
	else if (rc == 0)
		rc = coord_event(s, t->job, "profile", "the %s's profile (commit %d) from %s: %zu symbols, %lld samples "
				 "of %s", p.role, t->idx, req->agent, pp.n, pp.samples, pp.event[0] ? pp.event : "?");
	perfreport_release(&pp);
	store_profile_release(&p);
	free(why);
	return rc ? rc : 1;
}

int coord_profile_retry(struct coord *s, long long task, long long attempt, const char *why)
{
	struct profile p;
	int rc = store_profile_of_task(&p, s->st, task);

	if (rc == ERR_NOTFOUND)
		return 0;
	/* The lease ran out: tried again, and after the last attempt failed, never the commit skipped. */
	if (rc == 0 && attempt >= MAX_ATTEMPTS) {
		rc = store_task_fail(s->st, task, (long long)now_unix(), why);
		if (rc == 0)
			rc = store_profile_finish(s->st, task, "failed", NULL, why, NULL, (long long)now_unix());
		if (rc == 0)
			rc = coord_event(s, p.job, "profile", "the %s's profile (commit %d) failed %d times, last: %s",
					 p.role, p.idx, MAX_ATTEMPTS, why);
		if (rc == 0)
			rc = 1;
	}
	store_profile_release(&p);
	return rc;
}

int coord_job_profile_text(char **out, struct coord *s, long long id, const char *role)
{
	struct profile *p = NULL;
	size_t n = 0;
	int rc;

	*out = NULL;
	if (strcmp(role, "parent") && strcmp(role, "culprit"))
		return err_set(ERR_NOTFOUND, "a job's profiles are 'parent' and 'culprit', not '%s'", role);
	pthread_mutex_lock(&s->lock);
	rc = store_profiles_of_job(&p, &n, s->st, id);
	pthread_mutex_unlock(&s->lock);
	if (rc)
		return rc;
	rc = err_set(ERR_NOTFOUND, "job %lld has no profiles (its workload has no `profile: true`, or it named "
		     "no culprit)", id);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(p[i].role, role))
			continue;
		if (!strcmp(p[i].state, "ok") && p[i].report) {
			*out = p[i].report;
			p[i].report = NULL;
			rc = 0;
		} else if (!strcmp(p[i].state, "failed")) {
			rc = err_set(ERR_CONFLICT, "the %s's profile of job %lld failed: %s", role, id,
				     p[i].error ? p[i].error : "no reason given");
		} else {
			rc = err_set(ERR_CONFLICT, "the %s's profile of job %lld is not recorded yet", role, id);
		}
	}
	store_profiles_free(p, n);
	return rc;
}

/* "parent 11.59%": a share, or "-" when the symbol was not in that profile. */
static void share_cell(struct sbuf *sb, json_t *d, const char *role)
{
	double v = json_number_value(json_object_get(d, role));

	if (v > 0)
		sbuf_addf(sb, "%6.2f%%", v);
	else
		sbuf_addf(sb, "%7s", "-");
}

void coord_profile_text(struct sbuf *sb, json_t *rep, const char *indent)
{
	json_t *pr = json_object_get(rep, "profiles"), *diff = json_object_get(pr, "diff"), *d;
	json_t *p = json_object_get(pr, "parent"), *c = json_object_get(pr, "culprit");
	size_t i;

	if (!json_is_object(pr))
		return;
	sbuf_addf(sb, "%sperf profiles, the culprit against its parent (perf record -g -e %s, perf report "
		  "--no-children --sort symbol; share of the samples):\n", indent,
		  json_string_value(json_object_get(c, "event")) ?: json_string_value(json_object_get(p, "event")) ?:
		  "cpu-clock");
	for (int r = 0; r < 2; r++) {
		json_t *x = r ? c : p;

		if (!json_is_object(x))
			continue;
		if (strcmp(json_string_value(json_object_get(x, "state")) ?: "", "ok"))
			sbuf_addf(sb, "%s  the %s's profile (%.12s) failed: %s\n", indent, r ? "culprit" : "parent",
				  json_string_value(json_object_get(x, "sha")) ?: "?",
				  json_string_value(json_object_get(x, "error")) ?: "no reason given");
		else
			sbuf_addf(sb, "%s  %-7s %.12s: %lld samples, %lld symbols, on %s\n", indent,
				  r ? "culprit" : "parent", json_string_value(json_object_get(x, "sha")) ?: "?",
				  json_integer_value(json_object_get(x, "samples")),
				  json_integer_value(json_object_get(x, "symbols")),
				  json_string_value(json_object_get(x, "agent")) ?: "?");
	}
	if (!json_is_array(diff)) {
		sbuf_addf(sb, "%s  no diff: it needs both profiles; the culprit stands\n", indent);
		return;
	}
	if (!json_array_size(diff)) {
		sbuf_addf(sb, "%s  no symbol's share changed by %.1f points or more\n", indent, DIFF_MIN_POINTS);
		return;
	}
	sbuf_addf(sb, "%s  the symbols whose share changed most:\n", indent);
	json_array_foreach(diff, i, d) {
		double a = json_number_value(json_object_get(d, "parent")), b = json_number_value(json_object_get(d, "culprit"));

		sbuf_addf(sb, "%s    [%s] %-40s ", indent, json_string_value(json_object_get(d, "level")) ?: "?",
			  json_string_value(json_object_get(d, "symbol")) ?: "?");
		share_cell(sb, d, "parent");
		sbuf_adds(sb, " -> ");
		share_cell(sb, d, "culprit");
		sbuf_addf(sb, "  (%+.2f)\n", b - a);
	}
}
