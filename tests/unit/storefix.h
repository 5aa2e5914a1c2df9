/*
 * storefix: a store in a temporary directory, and a job in it, for the
 * store's unit tests. Built by code through the store's own functions.
 */
#ifndef TEST_STOREFIX_H
#define TEST_STOREFIX_H

#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "util.h"

struct storefix {
	char *dir;
	struct store *s;
	long long repo;
};

static inline void storefix_open(struct storefix *f)
{
	char dir[] = "/tmp/test_store.XXXXXX";
	char *path;

	assert_non_null(mkdtemp(dir));
	f->dir = xstrdup(dir);
	path = xasprintf("%s/db", dir);
	assert_int_equal(store_open(&f->s, path), 0);
	free(path);
	assert_int_equal(store_repo_put(f->s, "demo", "/srv/demo.git"), 0);
	assert_int_equal(store_repo_id(&f->repo, f->s, "demo"), 0);
}

static inline void storefix_close(struct storefix *f)
{
	store_close(f->s);
	remove_tree(f->dir);
	free(f->dir);
}

/* A job of n commits, a chain: commit i's parent is i - 1. */
static inline long long storefix_job(struct storefix *f, int n, const char *pool)
{
	struct job j = { .culprit = -1 };
	long long id;

	j.repo_id = f->repo;
	j.workload = (char *)(uintptr_t)"bench";
	j.pool = (char *)(uintptr_t)pool;
	j.good = (char *)(uintptr_t)"1111111111111111111111111111111111111111";
	j.bad = (char *)(uintptr_t)"2222222222222222222222222222222222222222";
	j.good_ref = (char *)(uintptr_t)"v1.0";
	j.bad_ref = (char *)(uintptr_t)"main";
	j.runs = 5;
	j.unit = (char *)(uintptr_t)"ops/s";
	j.higher = 1;
	j.created = 1000;
	strcpy(j.policy, "bisectd");
	j.confidence = 0.99;
	j.alpha = 0.01;
	j.min_effect = 0.01;
	assert_int_equal(store_job_insert(&id, f->s, &j), 0);
	assert_int_equal(store_job_commit_add(f->s, id, 0, j.good, "good end (v1.0)", NULL, 0), 0);
	for (int i = 1; i < n; i++) {
		char sha[41];
		int parent = i - 1;

		snprintf(sha, sizeof(sha), "%040d", i);
		assert_int_equal(store_job_commit_add(f->s, id, i, sha, "a commit", i > 1 ? &parent : NULL,
						      i > 1 ? 1 : 0), 0);
	}
	return id;
}

#endif
