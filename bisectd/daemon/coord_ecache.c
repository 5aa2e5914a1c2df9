/*
 * coord_ecache: each running job's engine with its runs added, kept
 * between steps. A step used to read every sample of the job and add
 * them to a new engine; now it reads the samples since the last step,
 * adds them to the kept engine, and steps a copy of it (bisect_clone()):
 * the copy is the engine a rebuild would have made, call for call, so
 * the decisions are the same. The store stays the truth: the cache is
 * made again from it after a restart, a rollback, or a change of what the
 * engine was made with.
 */
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "coord_internal.h"
#include "err.h"
#include "util.h"

/* Running jobs whose engines are kept; the least recently stepped goes first. */
#define ECACHE_MAX 64

struct ecache_entry {
	long long job;
	int n;
	struct bisect_opts opts;
	long long last_id;       /* samples up to this id are in base */
	long long rollbacks;     /* store_rollbacks() when base was last filled */
	unsigned long long used; /* for the eviction */
	struct bisect *base;     /* runs added, never stepped */
};

struct ecache {
	struct ecache_entry e[ECACHE_MAX];
	int nr;
	unsigned long long clock;
	long long hits, rebuilds; /* for the log and the tests */
};

static void entry_clear(struct ecache_entry *e)
{
	bisect_free(e->base);
	memset(e, 0, sizeof(*e));
}

void coord_ecache_free(struct coord *s)
{
	if (!s->ecache)
		return;
	for (int i = 0; i < s->ecache->nr; i++)
		entry_clear(&s->ecache->e[i]);
	free(s->ecache);
	s->ecache = NULL;
}

void coord_ecache_drop(struct coord *s, long long job)
{
	struct ecache *c = s->ecache;

	for (int i = 0; c && i < c->nr; i++)
		if (c->e[i].job == job) {
			entry_clear(&c->e[i]);
			c->e[i] = c->e[--c->nr];
			memset(&c->e[c->nr], 0, sizeof(c->e[c->nr]));
			return;
		}
}

static struct ecache_entry *entry_for(struct ecache *c, long long job)
{
	int old = 0;

	for (int i = 0; i < c->nr; i++)
		if (c->e[i].job == job)
			return &c->e[i];
	if (c->nr < ECACHE_MAX) {
		c->e[c->nr].job = job;
		return &c->e[c->nr++];
	}
	for (int i = 1; i < c->nr; i++)
		if (c->e[i].used < c->e[old].used)
			old = i;
	entry_clear(&c->e[old]);
	c->e[old].job = job;
	return &c->e[old];
}

/* Adds the job's samples above e->last_id to e->base, in the order they were taken. */
static int fill(struct coord *s, struct ecache_entry *e)
{
	struct sample *runs = NULL;
	size_t nr = 0;
	int rc;

	if ((rc = store_job_samples_after(&runs, &nr, s->st, e->job, e->last_id)))
		return rc;
	for (size_t i = 0; i < nr; i++) {
		/* Each with its task (whose runs share a level), its agent (a level of its own) and its kind. */
		bisect_add_stored_run(e->base, runs[i].idx, runs[i].value, runs[i].task, runs[i].agent, runs[i].confirm);
		e->last_id = runs[i].id;
	}
	free(runs);
	return 0;
}

int coord_ecache_engine(struct bisect **out, struct coord *s, struct jobctx *jc, const struct bisect_opts *o)
{
	struct ecache_entry *e;
	int rc;

	*out = NULL;
	if (!s->ecache)
		s->ecache = xcalloc(1, sizeof(*s->ecache));
	e = entry_for(s->ecache, jc->id);
	e->used = ++s->ecache->clock;
	if (e->base && (e->n != jc->n || memcmp(&e->opts, o, sizeof(*o)) ||
			e->rollbacks != store_rollbacks(s->st))) {
		bisect_free(e->base);
		e->base = NULL;
	}
	if (!e->base) {
		if ((rc = bisect_new(&e->base, jc->n, jc->parents, jc->nr_parents, o)))
			goto fail;
		e->n = jc->n;
		e->opts = *o;
		e->last_id = 0;
		s->ecache->rebuilds++;
	} else {
		s->ecache->hits++;
	}
	e->rollbacks = store_rollbacks(s->st);
	if ((rc = fill(s, e)))
		goto fail;
	*out = bisect_clone(e->base);
	return 0;
fail:
	coord_ecache_drop(s, jc->id);
	return rc;
}

void coord_ecache_stats(struct coord *s, long long *hits, long long *rebuilds)
{
	*hits = s->ecache ? s->ecache->hits : 0;
	*rebuilds = s->ecache ? s->ecache->rebuilds : 0;
}
