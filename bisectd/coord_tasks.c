/*
 * coord_tasks: tasks and their leases: an agent's claim (a long poll
 * that takes the oldest queued task its labels fit), the task as it is
 * sent to the agent, and the expiry of leases whose agent went quiet.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coord_internal.h"
#include "err.h"
#include "log.h"
#include "util.h"

static json_t *workload_json(const struct conf_workload *w)
{
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i}", "name", w->name, "type", w->type,
			      "boot", w->boot, "unit", w->unit,
			      "direction", w->direction == DIR_LOWER ? "lower" : "higher",
			      "build_timeout", w->build_timeout, "run_timeout", w->run_timeout);
	json_t *b = json_array(), *c = json_array();

	for (char **p = w->build; p && *p; p++)
		json_array_append_new(b, json_string(*p));
	for (char **p = w->command; p && *p; p++)
		json_array_append_new(c, json_string(*p));
	json_object_set_new(j, "build", b);
	json_object_set_new(j, "command", c);
	if (w->pattern)
		json_object_set_new(j, "pattern", json_string(w->pattern));
	if (!strcmp(w->boot, "qemu")) {
		json_object_set_new(j, "kernel_image", json_string(w->kernel_image));
		json_object_set_new(j, "memory_mb", json_integer(w->memory_mb));
		json_object_set_new(j, "cpus", json_integer(w->cpus));
		json_object_set_new(j, "boot_timeout", json_integer(w->boot_timeout));
		if (w->append)
			json_object_set_new(j, "append", json_string(w->append));
	}
	if (w->kernel) {
		const struct conf_kernel *k = w->kernel;
		json_t *kj = json_pack("{s:s, s:s}", "base", k->base, "target", k->target);
		json_t *fr = json_array(), *ma = json_array();

		if (k->base_text)
			json_object_set_new(kj, "base_config", json_string(k->base_text));
		for (size_t i = 0; k->fragments[i]; i++)
			json_array_append_new(fr, json_pack("{s:s, s:s}", "name", k->fragments[i],
							    "text", k->fragment_text[i]));
		for (char **p = k->make_args; *p; p++)
			json_array_append_new(ma, json_string(*p));
		json_object_set_new(kj, "fragments", fr);
		json_object_set_new(kj, "make_args", ma);
		json_object_set_new(j, "kernel", kj);
	}
	if (w->metric)
		json_object_set_new(j, "metric", json_string(w->metric));
	if (!strcmp(w->type, "iperf3")) {
		json_t *o = json_array();

		for (char **p = w->iperf3; p && *p; p++)
			json_array_append_new(o, json_string(*p));
		json_object_set_new(j, "iperf3", o);
	}
	if (!strcmp(w->type, "pktgen")) {
		json_object_set_new(j, "count", json_integer(w->count));
		json_object_set_new(j, "pkt_size", json_integer(w->pkt_size));
		json_object_set_new(j, "clsact_bpf", json_boolean(w->clsact_bpf));
	}
	return j;
}

/* The claim reply: the task as the agent runs it (attempt, lease, repo, workload). */
static json_t *task_json(const struct task *t, const struct conf_workload *w, long long attempt, int lease)
{
	json_t *j = json_pack("{s:I, s:I, s:I, s:s, s:I, s:i, s:{s:s, s:s}, s:o}", "task", t->id,
			      "attempt", attempt, "job", t->job, "commit", t->sha,
			      "runs", t->runs, "lease", lease,
			      "repo", "name", t->repo,
			      "url", t->url, "workload", workload_json(w));

	if (t->append) {
		/* The job's variant after the workload's own parameters: the later one wins. */
		json_t *wj = json_object_get(j, "workload");
		const char *own = json_string_value(json_object_get(wj, "append"));
		const char *var = t->append;
		char *line = own ? xasprintf("%s %s", own, var) : xstrdup(var);

		json_object_set_new(wj, "append", json_string(line));
		free(line);
	}
	return j;
}

/* Gives the oldest queued task this agent's labels fit to it. */
static int try_claim(struct coord *s, json_t **reply, long long agent, char **labels, const char *name)
{
	struct task *t = NULL;
	size_t n = 0;
	int rc;

	rc = store_tasks_claimable(&t, &n, s->st, agent, (long long)(now_unix() - s->conf->lease_seconds));
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		const struct conf_pool *p = conf_pool_find(s->conf, t[i].pool);
		const struct conf_workload *w = conf_workload_find(s->conf, t[i].workload);
		long long attempt = t[i].attempt + 1;

		if (!p || !w || !conf_pool_matches(p, labels))
			continue;
		if ((rc = store_begin(s->st)))
			break;
		rc = store_task_claim(s->st, t[i].id, attempt, agent, (long long)(now_unix() + s->conf->lease_seconds),
				      (long long)now_unix());
		if (rc == 0)
			rc = store_job_set_running(s->st, t[i].job);
		if (rc == 0)
			rc = coord_event(s, t[i].job, "claim", "task %lld (commit %d, %.12s) attempt %lld to %s", t[i].id,
					 t[i].idx, t[i].sha, attempt, name);
		if (rc || (rc = store_commit(s->st))) {
			store_rollback(s->st);
			break;
		}
		*reply = task_json(&t[i], w, attempt, s->conf->lease_seconds);
		break;
	}
	store_tasks_free(t, n);
	return rc;
}

int coord_agent_claim(struct coord *s, json_t **reply, const char *name, int wait_s)
{
	int64_t deadline = now_ms() + (int64_t)wait_s * 1000;
	char **labels = NULL;
	long long agent;
	int rc;

	*reply = NULL;
	pthread_mutex_lock(&s->lock);
	if ((rc = coord_agent_seen(s, &agent, &labels, name)))
		goto out;
	for (;;) {
		struct timespec ts;
		int64_t until, now;

		if ((rc = try_claim(s, reply, agent, labels, name)) || *reply)
			break;
		now = now_ms();
		if (s->shutdown || now >= deadline)
			break;
		/* Wake at least every second so a waiting agent stays "seen". */
		until = deadline < now + 1000 ? deadline : now + 1000;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (until - now) / 1000;
		ts.tv_nsec += (long)((until - now) % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		if ((rc = coord_agent_seen(s, &agent, NULL, name)))
			break;
	}
out:
	pthread_mutex_unlock(&s->lock);
	strv_free(labels);
	return rc;
}

void coord_tick(struct coord *s)
{
	struct task *t = NULL;
	size_t n = 0;

	pthread_mutex_lock(&s->lock);
	if (store_tasks_expired(&t, &n, s->st, (long long)now_unix()))
		goto out;
	for (size_t i = 0; i < n; i++) {
		char *why = xasprintf("lease expired: agent %s stopped heartbeating",
				      t[i].agent_name ? t[i].agent_name : "?");
		int rc = store_begin(s->st);

		if (rc == 0)
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
	pthread_mutex_unlock(&s->lock);
	store_tasks_free(t, n);
}
