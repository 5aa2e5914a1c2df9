/*
 * coord_mirror: each configured repo's bare mirror, made at start-up in a
 * thread of its own and fetched before a job's range is resolved in it.
 * A mirror's lock is held while it fetches, outside the coordinator's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "gitx.h"
#include "log.h"
#include "util.h"

#define MAX_COMMITS 20000

/* gitx's progress hook while a mirror is made: a line in the log at each 10%. */
static void mirror_progress(void *arg, const char *text)
{
	log_info("repo %s: %s", ((const struct mirror *)arg)->conf->name, text);
}

/*
 * Makes every repo's mirror at start-up, so that the first job on a large
 * repo (a kernel: a minute or more) does not wait for it; a submit that
 * comes meanwhile waits on the mirror's lock.
 */
static void *warm_main(void *arg)
{
	struct coord *s = arg;

	for (size_t i = 0; i < s->conf->nr_repos && !s->stop_warm; i++) {
		struct mirror *m = &s->mirrors[i];
		char *path = xasprintf("%s/%s.git", s->conf->mirrors, m->conf->name);
		int64_t t0 = now_ms();

		pthread_mutex_lock(&m->lock);
		gitx_set_progress(mirror_progress, m);
		if (!m->repo && mkdir_p(s->conf->mirrors, 0755) == 0) {
			if (repo_open(&m->repo, path, m->conf->url, 1) == 0) {
				if (now_ms() - t0 >= 1000)
					log_info("repo %s: mirror ready in %.1f s", m->conf->name,
						 (double)(now_ms() - t0) / 1000);
			} else {
				log_warn("repo %s: cannot mirror %s yet (a job will try again): %s",
					 m->conf->name, m->conf->url, err_msg());
			}
		}
		gitx_set_progress(NULL, NULL);
		pthread_mutex_unlock(&m->lock);
		free(path);
	}
	return NULL;
}

void coord_start_mirrors(struct coord *s)
{
	if (pthread_create(&s->warm, NULL, warm_main, s) == 0)
		s->warming = 1;
}

struct mirror *coord_mirror_find(struct coord *s, const char *name)
{
	for (size_t i = 0; i < s->conf->nr_repos; i++)
		if (!strcmp(s->mirrors[i].conf->name, name))
			return &s->mirrors[i];
	return NULL;
}

int coord_resolve_range(struct coord *s, struct mirror *m, struct repo_range *rr,
			const char *good_ref, const char *bad_ref)
{
	char good[41], bad[41];
	char *path;
	int rc;

	pthread_mutex_lock(&m->lock);
	if (!m->repo) {
		path = xasprintf("%s/%s.git", s->conf->mirrors, m->conf->name);
		if (mkdir_p(s->conf->mirrors, 0755) == 0)
			rc = repo_open(&m->repo, path, m->conf->url, 1);
		else
			rc = err_code();
		free(path);
		if (rc) {
			rc = err_set(ERR_UNPROCESSABLE, "cannot mirror repo '%s' from %s: %s", m->conf->name,
				     m->conf->url, err_msg());
			goto out;
		}
	} else if (repo_fetch(m->repo)) {
		log_warn("repo %s: fetch from %s failed, using the mirror as it is: %s",
			 m->conf->name, m->conf->url, err_msg());
	}
	if ((rc = repo_resolve(m->repo, good, good_ref)) || (rc = repo_resolve(m->repo, bad, bad_ref))) {
		rc = err_set(ERR_UNPROCESSABLE, "%s", err_msg());
		goto out;
	}
	if ((rc = repo_range(rr, m->repo, good, bad, MAX_COMMITS)))
		rc = err_set(ERR_UNPROCESSABLE, "%s", err_msg());
out:
	pthread_mutex_unlock(&m->lock);
	return rc;
}
