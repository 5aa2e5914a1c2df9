/*
 * coord_dash: what the dashboard needs in the API's documents beyond what
 * bisectctl prints: an agent's task in hand, its phase (fetch, build,
 * boot, run) read from the progress line its heartbeats carry, its tasks
 * done and failed; a job's runs, builds and most probable commit; and a
 * job's samples one by one, for the runs drawn as points.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "util.h"

/* The most samples GET /jobs/ID/samples returns. */
#define DASH_MAX_SAMPLES 20000

/*
 * The agent's own words for what it does (agents/agent_*.c, agent_set_phase() and
 * the boot methods' "what") to the four phases the dashboard shows.
 */
static const struct {
	const char *prefix, *phase;
} phases[] = {
	{ "checking out", "fetch" },
	{ "fetching", "fetch" },
	{ "waiting for the build lock", "build" },
	{ "building", "build" },
	{ "booting", "boot" },
	{ "running", "run" },
	{ "measuring", "run" },
};

static const char *phase_of(const char *progress)
{
	if (!progress)
		return "claimed";
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		if (!strncmp(progress, phases[i].prefix, strlen(phases[i].prefix)))
			return phases[i].phase;
	return "other";
}

static const char *const agent_keys[] = {
	"tasks_done", "tasks_failed", "job", "idx", "commit_sha", "commit_subject", "claimed", "progress", "confirm",
};

void coord_dash_agents(struct coord *s, json_t *agents)
{
	json_t *rows = NULL, *a, *r;
	size_t i, k;

	if (store_dash_agents_doc(&rows, s->st))
		return;
	json_array_foreach(agents, i, a) {
		const char *name = json_string_value(json_object_get(a, "name"));

		json_array_foreach(rows, k, r) {
			if (!name || strcmp(name, json_string_value(json_object_get(r, "name")) ?: ""))
				continue;
			for (size_t j = 0; j < sizeof(agent_keys) / sizeof(agent_keys[0]); j++)
				json_object_set(a, agent_keys[j], json_object_get(r, agent_keys[j]) ?: json_null());
			json_object_set_new(a, "phase", json_is_null(json_object_get(r, "task")) ? json_null() :
					    json_string(phase_of(json_string_value(json_object_get(r, "progress")))));
			break;
		}
	}
	json_decref(rows);
}

void coord_dash_job(struct coord *s, json_t *job, long long id, int full)
{
	json_t *d = NULL, *progress = json_object_get(job, "progress");
	const char *state = json_string_value(json_object_get(job, "state")) ?: "";
	struct jobctx c;

	/*
	 * Candidates left, for the list too (the full document counts them
	 * itself): only for jobs that run, since it loads the whole job.
	 */
	if (!full && progress && (!strcmp(state, "queued") || !strcmp(state, "running")) &&
	    jobctx_load(s, &c, id) == 0) {
		unsigned char *in_c = xcalloc((size_t)c.n, 1);

		json_object_set_new(progress, "candidates", json_integer(policy_candidates(in_c, c.pol, c.cls)));
		free(in_c);
		jobctx_release(&c);
	}
	if (store_dash_job_doc(&d, s->st, id))
		return;
	if (progress) {
		json_object_set(progress, "runs", json_object_get(d, "runs"));
		json_object_set(progress, "failed_runs", json_object_get(d, "failed_runs"));
		json_object_set(progress, "builds", json_object_get(d, "builds"));
		json_object_set(progress, "decisions", json_object_get(d, "nr_decisions"));
	}
	if (json_is_integer(json_object_get(d, "best_idx")))
		json_object_set_new(job, "best", json_pack("{s:O?, s:O?, s:O?, s:O?}", "idx", json_object_get(d, "best_idx"),
							   "sha", json_object_get(d, "best_sha"),
							   "subject", json_object_get(d, "best_subject"),
							   "p", json_object_get(d, "best_p")));
	else
		json_object_set_new(job, "best", json_null());
	json_decref(d);
}

int coord_job_samples(json_t **reply, struct coord *s, long long id)
{
	json_t *rows = NULL;
	struct job job;
	int rc;

	*reply = NULL;
	pthread_mutex_lock(&s->lock);
	rc = store_job_get(&job, s->st, id);
	if (rc == 0) {
		store_job_release(&job);
		rc = store_dash_samples_doc(&rows, s->st, id, DASH_MAX_SAMPLES);
	} else if (rc == ERR_NOTFOUND) {
		rc = err_set(ERR_NOTFOUND, "job %lld does not exist", id);
	}
	pthread_mutex_unlock(&s->lock);
	if (rc)
		return rc;
	*reply = json_pack("{s:I, s:o, s:b}", "job", (json_int_t)id, "samples", rows,
			   "truncated", json_array_size(rows) >= DASH_MAX_SAMPLES);
	return 0;
}
