/*
 * coord: the coordinator's life: start, the configured repos and
 * shutdown. Its rooms (coord_internal.h has them in their layers):
 * coord_event.c (the events log), coord_mirror.c (the repos' mirrors),
 * coord_jobs.c (create, cancel, show), coord_job.c (a job as a step sees
 * it), coord_steps.c with coord_engine.c and coord_split.c (the policies
 * that drive a job), coord_claims.c and coord_tasks.c (claims and leases),
 * coord_intake.c (results), coord_report.c (the text report),
 * coord_agents.c (the registry), coord_live.c (the sweep, waiting jobs,
 * lease grace, retirement).
 *
 * Everything that touches the store runs under s->lock, and every change
 * that belongs together is one transaction: an upload's samples and their
 * summaries; a step's decision and the tasks it queues. The step an
 * upload of measured runs leads to follows it (coord_step_later(), the
 * stepper thread, which steps every running job at start), so a crash
 * between them leaves stored samples that the next step takes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "util.h"

int coord_new(struct coord **out, const struct conf_bisectd *conf, struct store *st)
{
	struct coord *s = xcalloc(1, sizeof(*s));
	s->conf = conf;
	s->st = st;
	s->started = (long long)now_unix();
	pthread_mutex_init(&s->lock, NULL);
	s->claims = http_waitq_new();
	s->changes = http_waitq_new();
	store_on_end(st, coord_handoffs_end, s);
	pthread_cond_init(&s->step_cond, NULL);
	s->mirrors = xcalloc(conf->nr_repos + 1, sizeof(*s->mirrors));
	for (size_t i = 0; i < conf->nr_repos; i++) {
		s->mirrors[i].conf = &conf->repos[i];
		pthread_mutex_init(&s->mirrors[i].lock, NULL);
	}
	*out = s;
	return 0;
}

void coord_free(struct coord *s)
{
	if (!s)
		return;
	if (s->warming) {
		s->stop_warm = 1;
		pthread_join(s->warm, NULL);
	}
	for (size_t i = 0; i < s->conf->nr_repos; i++) {
		repo_free(s->mirrors[i].repo);
		pthread_mutex_destroy(&s->mirrors[i].lock);
	}
	free(s->mirrors);
	if (s->stepping) {
		coord_wake_all(s);
		pthread_join(s->stepper, NULL);
	}
	free(s->pending);
	for (size_t i = 0; i < COORD_LIVE_SLOTS; i++)
		free(s->live[i].pool);
	coord_ecache_free(s);
	pthread_cond_destroy(&s->step_cond);
	http_waitq_free(s->claims);
	http_waitq_free(s->changes);
	store_on_end(s->st, NULL, NULL);
	free(s->handoffs);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int coord_sync_conf(struct coord *s)
{
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	if ((rc = store_begin(s->st)))
		goto out;
	for (size_t i = 0; i < s->conf->nr_repos; i++) {
		const struct conf_repo *r = &s->conf->repos[i];

		if ((rc = store_repo_put(s->st, r->name, r->url)))
			break;
	}
	if (rc == 0)
		rc = store_commit(s->st);
	if (rc)
		store_rollback(s->st);
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void coord_wake_all(struct coord *s)
{
	pthread_mutex_lock(&s->lock);
	s->shutdown = 1;
	http_wake(s->claims);
	pthread_cond_broadcast(&s->step_cond);
	pthread_mutex_unlock(&s->lock);
}
