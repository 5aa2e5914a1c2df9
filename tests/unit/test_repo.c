/*
 * Tests for repo.c: mirrors, ref resolution and candidate ranges, over
 * histories made in a scratch directory by tests/lib/mkrepo.sh (fixed
 * dates and authors, so the ids and times below are the same everywhere).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "gitsh.h"
#include "repo.h"
#include "run.h"
#include "util.h"

struct fx {
	char *dir;     /* scratch directory, removed at teardown */
	char *src;     /* the upstream repository, dir/src */
	char *mirror;  /* where the mirror goes, dir/mirror */
};

/* Shell steps in the fixture's scratch directory (tests/unit/gitsh.c). */
#define sh(fx, ...) gitsh((fx)->dir, __VA_ARGS__)
#define sh0(fx, ...) gitsh0((fx)->dir, __VA_ARGS__)

static int setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	char tmpl[] = "/tmp/test_repo.XXXXXX";

	if (!mkdtemp(tmpl))
		return -1;
	fx->dir = xstrdup(tmpl);
	fx->src = xasprintf("%s/src", fx->dir);
	fx->mirror = xasprintf("%s/mirror", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	remove_tree(fx->dir);
	free(fx->dir);
	free(fx->src);
	free(fx->mirror);
	free(fx);
	return 0;
}

static void free_all(char **v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(v[i]);
}

/* c[0..n-1]: a linear history on main with subjects "c1".."cn". */
static void linear(struct fx *fx, char **c, int n)
{
	int i;

	sh0(fx, "mkrepo_init src");
	for (i = 0; i < n; i++)
		c[i] = sh(fx, "mkrepo_commit src f.txt %d 'c%d'", i + 1, i + 1);
}

static void test_open_clone_and_fetch(void **state)
{
	struct fx *fx = *state;
	struct repo *r = NULL;
	char *c[3], *t, *head;
	char sha[41];
	struct stat st;

	linear(fx, c, 2);
	sh0(fx, "mkrepo_tag src v1 main~1 && mkrepo_branch src gone && mkrepo_switch src main");
	assert_int_equal(repo_open(&r, fx->mirror, fx->src, 0), 0);
	/* A bare mirror: no work tree, objects at the top. */
	t = xasprintf("%s/objects", fx->mirror);
	assert_int_equal(stat(t, &st), 0);
	free(t);
	t = xasprintf("%s/.git", fx->mirror);
	assert_int_not_equal(stat(t, &st), 0);
	free(t);
	assert_int_equal(repo_resolve(r, sha, "main"), 0);
	assert_string_equal(sha, c[1]);
	assert_int_equal(repo_resolve(r, sha, "v1"), 0);
	assert_string_equal(sha, c[0]);
	assert_int_equal(repo_resolve(r, sha, "gone"), 0);
	repo_free(r);

	/* Upstream moves on: a commit, a new tag, a moved tag, a deleted branch. */
	c[2] = sh(fx, "mkrepo_commit src f.txt 3 c3");
	sh0(fx, "mkrepo_tag src v2 && mkrepo_git src tag -f v1 main && mkrepo_git src branch -D gone");

	/* Re-opening without fetch sees the old state. */
	assert_int_equal(repo_open(&r, fx->mirror, fx->src, 0), 0);
	assert_int_equal(repo_resolve(r, sha, "main"), 0);
	assert_string_equal(sha, c[1]);
	assert_int_equal(repo_resolve(r, sha, "v2"), ERR_NOTFOUND);
	repo_free(r);

	assert_int_equal(repo_open(&r, fx->mirror, fx->src, 1), 0);
	assert_int_equal(repo_resolve(r, sha, "main"), 0);
	assert_string_equal(sha, c[2]);
	assert_int_equal(repo_resolve(r, sha, "v2"), 0);
	assert_string_equal(sha, c[2]);
	assert_int_equal(repo_resolve(r, sha, "v1"), 0);
	assert_string_equal(sha, c[2]);
	assert_int_equal(repo_resolve(r, sha, "gone"), ERR_NOTFOUND);
	/* HEAD of the mirror follows upstream's default branch. */
	assert_int_equal(repo_resolve(r, sha, "HEAD"), 0);
	assert_string_equal(sha, c[2]);

	/* repo_fetch on an open mirror. */
	head = sh(fx, "mkrepo_commit src g.txt 4 c4");
	assert_int_equal(repo_fetch(r), 0);
	assert_int_equal(repo_resolve(r, sha, "main"), 0);
	assert_string_equal(sha, head);
	repo_free(r);
	free(head);
	free_all(c, 3);
}

static void test_open_errors(void **state)
{
	struct fx *fx = *state;
	struct repo *r = NULL;
	char *c[1], *bogus, *junk;
	struct stat st;
	FILE *f;

	bogus = xasprintf("%s/nosuch", fx->dir);
	assert_int_equal(repo_open(&r, fx->mirror, bogus, 0), ERR_NOTFOUND);
	assert_null(r);
	assert_non_null(strstr(err_msg(), "nosuch"));
	/* Nothing half-made is left behind for the next start to trust. */
	assert_int_not_equal(stat(fx->mirror, &st), 0);
	free(bogus);

	/* A directory with something else in it is not taken over. */
	linear(fx, c, 1);
	junk = xasprintf("%s/junk", fx->dir);
	assert_int_equal(mkdir(junk, 0755), 0);
	bogus = xasprintf("%s/junk/file", fx->dir);
	f = fopen(bogus, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(repo_open(&r, junk, fx->src, 0), ERR_INVALID);
	assert_int_equal(stat(bogus, &st), 0);

	/* An empty directory is. */
	assert_int_equal(unlink(bogus), 0);
	assert_int_equal(repo_open(&r, junk, fx->src, 1), 0);
	repo_free(r);

	assert_int_equal(repo_open(&r, fx->mirror, "", 0), ERR_INVALID);
	free(bogus);
	free(junk);
	free_all(c, 1);
}

static void test_resolve(void **state)
{
	struct fx *fx = *state;
	struct repo *r = NULL;
	char *c[3], *tree, *full;
	char sha[41], abbrev[8];

	linear(fx, c, 3);
	sh0(fx, "mkrepo_tag src v1 main~2 && mkrepo_git src tag -a -m 'release 2' v2 main~1");
	assert_int_equal(repo_open(&r, fx->mirror, fx->src, 0), 0);

	assert_int_equal(repo_resolve(r, sha, "main"), 0);
	assert_string_equal(sha, c[2]);
	assert_int_equal(repo_resolve(r, sha, "refs/heads/main"), 0);
	assert_string_equal(sha, c[2]);
	assert_int_equal(repo_resolve(r, sha, "v1"), 0);
	assert_string_equal(sha, c[0]);
	/* An annotated tag peels to its commit. */
	assert_int_equal(repo_resolve(r, sha, "v2"), 0);
	assert_string_equal(sha, c[1]);
	assert_int_equal(repo_resolve(r, sha, "main~2"), 0);
	assert_string_equal(sha, c[0]);
	memcpy(abbrev, c[1], 7);
	abbrev[7] = '\0';
	assert_int_equal(repo_resolve(r, sha, abbrev), 0);
	assert_string_equal(sha, c[1]);
	assert_int_equal(repo_resolve(r, sha, c[0]), 0);
	assert_string_equal(sha, c[0]);
	full = xstrdup(c[2]);
	full[0] = full[0] == 'a' ? 'b' : 'a'; /* a well-formed id that is not there */
	full[1] = full[1] == 'a' ? 'b' : 'a';

	assert_int_equal(repo_resolve(r, sha, "v9.9"), ERR_NOTFOUND);
	assert_string_equal(sha, "");
	assert_non_null(strstr(err_msg(), "'v9.9'"));
	assert_non_null(strstr(err_msg(), "does not resolve to a commit"));
	assert_int_equal(repo_resolve(r, sha, full), ERR_NOTFOUND);
	assert_int_equal(repo_resolve(r, sha, "main..v1"), ERR_NOTFOUND);
	/* A tree is not a commit. */
	tree = sh(fx, "mkrepo_git src rev-parse main^{tree}");
	assert_int_equal(repo_resolve(r, sha, tree), ERR_NOTFOUND);
	assert_non_null(strstr(err_msg(), "not a commit"));
	assert_int_equal(repo_resolve(r, sha, ""), ERR_INVALID);
	assert_int_equal(repo_resolve(r, sha, ":/c2"), ERR_INVALID);
	assert_int_equal(repo_resolve(r, sha, "main^{/c1}"), ERR_INVALID);

	repo_free(r);
	free(tree);
	free(full);
	free_all(c, 3);
}

static void test_range_linear(void **state)
{
	struct fx *fx = *state;
	struct repo *r = NULL;
	struct repo_range rr;
	char *c[6];
	char subj[16];
	int i;

	linear(fx, c, 6);
	assert_int_equal(repo_open(&r, fx->mirror, fx->src, 0), 0);
	assert_int_equal(repo_range(&rr, r, c[0], c[5], 100), 0);
	assert_string_equal(rr.good, c[0]);
	assert_string_equal(rr.bad, c[5]);
	assert_int_equal(rr.nr, 5);
	for (i = 0; i < 5; i++) {
		snprintf(subj, sizeof(subj), "c%d", i + 2);
		assert_string_equal(rr.commits[i].sha, c[i + 1]);
		assert_string_equal(rr.commits[i].subject, subj);
		assert_string_equal(rr.commits[i].author, "A U Thor <author@example.com>");
		/* mkrepo.sh: commit n is dated epoch + 60 n. */
		assert_int_equal(rr.commits[i].time, 1700000000LL + 60 * (i + 2));
		if (i == 0) {
			assert_int_equal(rr.commits[i].nr_parents, 0);
		} else {
			assert_int_equal(rr.commits[i].nr_parents, 1);
			assert_int_equal(rr.commits[i].parents[0], i - 1);
		}
	}
	repo_range_release(&rr);
	assert_int_equal(rr.nr, 0);
	assert_null(rr.commits);

	/* The smallest range: one commit. */
	assert_int_equal(repo_range(&rr, r, c[4], c[5], 1), 0);
	assert_int_equal(rr.nr, 1);
	assert_string_equal(rr.commits[0].sha, c[5]);
	assert_int_equal(rr.commits[0].nr_parents, 0);
	repo_range_release(&rr);

	repo_free(r);
	free_all(c, 6);
}

static int idx_of(const struct repo_range *rr, const char *sha)
{
	int i;

	for (i = 0; i < rr->nr; i++)
		if (!strcmp(rr->commits[i].sha, sha))
			return i;
	return -1;
}

static void assert_parents_first(const struct repo_range *rr)
{
	int i, k;

	for (i = 0; i < rr->nr; i++)
		for (k = 0; k < rr->commits[i].nr_parents; k++) {
			assert_true(rr->commits[i].parents[k] >= 0);
			assert_true(rr->commits[i].parents[k] < i);
		}
	assert_string_equal(rr->commits[rr->nr - 1].sha, rr->bad);
}

/*
 *   b0 - m1 - m2 - M - m3      (main)
 *     \          /
 *      t1 ---- t2              (topic)
 */
static void merge_history(struct fx *fx, char **b0, char **m1, char **m2, char **t1,
			  char **t2, char **m, char **m3)
{
	sh0(fx, "mkrepo_init src");
	*b0 = sh(fx, "mkrepo_commit src base.txt 0 b0");
	*m1 = sh(fx, "mkrepo_commit src main.txt 1 m1");
	sh0(fx, "mkrepo_branch src topic main~1");
	*t1 = sh(fx, "mkrepo_commit src topic.txt 1 t1");
	*t2 = sh(fx, "mkrepo_commit src topic.txt 2 t2");
	sh0(fx, "mkrepo_switch src main");
	*m2 = sh(fx, "mkrepo_commit src main.txt 2 m2");
	*m = sh(fx, "mkrepo_merge src topic 'Merge branch topic'");
	*m3 = sh(fx, "mkrepo_commit src main.txt 3 m3");
}

static void test_range_merge(void **state)
{
	struct fx *fx = *state;
	struct repo *r = NULL;
	struct repo_range rr;
	char *b0, *m1, *m2, *t1, *t2, *m, *m3;
	int im;

	merge_history(fx, &b0, &m1, &m2, &t1, &t2, &m, &m3);
	assert_int_equal(repo_open(&r, fx->mirror, fx->src, 0), 0);

	assert_int_equal(repo_range(&rr, r, b0, m3, 0), 0);
	assert_int_equal(rr.nr, 6);
	assert_parents_first(&rr);
	assert_true(idx_of(&rr, t1) >= 0);
	assert_true(idx_of(&rr, t2) >= 0);
	assert_true(idx_of(&rr, m1) >= 0);
	assert_int_equal(idx_of(&rr, b0), -1);
	im = idx_of(&rr, m);
	assert_string_equal(rr.commits[im].subject, "Merge branch topic");
	assert_int_equal(rr.commits[im].nr_parents, 2);
	assert_int_equal(rr.commits[im].parents[0], idx_of(&rr, m2));
	assert_int_equal(rr.commits[im].parents[1], idx_of(&rr, t2));
	/* t1's and m1's parent b0 is outside the set. */
	assert_int_equal(rr.commits[idx_of(&rr, t1)].nr_parents, 0);
	assert_int_equal(rr.commits[idx_of(&rr, m1)].nr_parents, 0);
	assert_int_equal(rr.commits[idx_of(&rr, t2)].parents[0], idx_of(&rr, t1));
	repo_range_release(&rr);

	/* good on the side branch: b0, t1 drop out; the merge keeps both. */
	assert_int_equal(repo_range(&rr, r, t1, m3, 0), 0);
	assert_int_equal(rr.nr, 5);
	assert_parents_first(&rr);
	assert_int_equal(idx_of(&rr, t1), -1);
	assert_int_equal(idx_of(&rr, b0), -1);
	im = idx_of(&rr, m);
	assert_int_equal(rr.commits[im].nr_parents, 2);
	assert_int_equal(rr.commits[idx_of(&rr, t2)].nr_parents, 0);
	repo_range_release(&rr);

	/* bad on the side branch: main's commits are not candidates. */
	assert_int_equal(repo_range(&rr, r, b0, t2, 0), 0);
	assert_int_equal(rr.nr, 2);
	assert_string_equal(rr.commits[0].sha, t1);
	assert_string_equal(rr.commits[1].sha, t2);
	repo_range_release(&rr);

	repo_free(r);
	free(b0); free(m1); free(m2); free(t1); free(t2); free(m); free(m3);
}

/*
 * Committer dates that run backwards (a rebased branch, a skewed clock)
 * must not break parents-first order.
 */
static void test_range_clock_skew(void **state)
{
	struct fx *fx = *state;
	struct repo *r = NULL;
	struct repo_range rr;
	char *base, *bad;

	sh0(fx, "mkrepo_init src");
	base = sh(fx, "mkrepo_commit src a 0 base");
	sh0(fx, "mkrepo_commit src a 1 a1; MKREPO_EPOCH=1600000000 mkrepo_commit src a 2 'a2 (older)';"
	   "mkrepo_commit src a 3 a3");
	sh0(fx, "mkrepo_branch src side main~2; MKREPO_EPOCH=1500000000 mkrepo_commit src b 1 'b1 (much older)';"
	   "mkrepo_commit src b 2 b2; MKREPO_EPOCH=1500000000 mkrepo_commit src b 3 b3;"
	   "mkrepo_switch src main");
	bad = sh(fx, "MKREPO_EPOCH=1400000000 mkrepo_merge src side 'merge side (oldest)';"
		 "MKREPO_EPOCH=1800000000 mkrepo_commit src a 4 a4; mkrepo_commit src a 5 a5");
	assert_int_equal(repo_open(&r, fx->mirror, fx->src, 0), 0);
	assert_int_equal(repo_range(&rr, r, base, bad, 0), 0);
	assert_int_equal(rr.nr, 9);
	assert_parents_first(&rr);
	repo_range_release(&rr);
	repo_free(r);
	free(base);
	free(bad);
}

static void test_range_errors(void **state)
{
	struct fx *fx = *state;
	struct repo *r = NULL;
	struct repo_range rr;
	char *b0, *m1, *m2, *t1, *t2, *m, *m3, *blob;
	char msg[256], missing[41];

	merge_history(fx, &b0, &m1, &m2, &t1, &t2, &m, &m3);
	assert_int_equal(repo_open(&r, fx->mirror, fx->src, 0), 0);

	/* Backwards. */
	assert_int_equal(repo_range(&rr, r, m3, b0, 0), ERR_INVALID);
	snprintf(msg, sizeof(msg), "good (%.12s) is not an ancestor of bad (%.12s): nothing to bisect",
		 m3, b0);
	assert_string_equal(err_msg(), msg);
	assert_int_equal(rr.nr, 0);
	assert_null(rr.commits);
	/* Siblings. */
	assert_int_equal(repo_range(&rr, r, t2, m2, 0), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "is not an ancestor of bad"));
	/* Empty. */
	assert_int_equal(repo_range(&rr, r, m, m, 0), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "good and bad are the same commit"));
	assert_non_null(strstr(err_msg(), "empty range"));
	/* Too big, and just big enough. */
	assert_int_equal(repo_range(&rr, r, b0, m3, 5), ERR_INVALID);
	assert_string_equal(err_msg(), "range has 6 commits, more than the limit 5");
	assert_int_equal(repo_range(&rr, r, b0, m3, 6), 0);
	assert_int_equal(rr.nr, 6);
	repo_range_release(&rr);
	/* Not ids, or ids of nothing. */
	assert_int_equal(repo_range(&rr, r, "main", m3, 0), ERR_INVALID);
	assert_int_equal(repo_range(&rr, r, b0, "", 0), ERR_INVALID);
	memcpy(missing, "0123456789012345678901234567890123456789", 41);
	assert_int_equal(repo_range(&rr, r, missing, m3, 0), ERR_NOTFOUND);
	blob = sh(fx, "mkrepo_git src rev-parse main:main.txt");
	assert_int_equal(repo_range(&rr, r, b0, blob, 0), ERR_NOTFOUND);

	repo_free(r);
	free(blob);
	free(b0); free(m1); free(m2); free(t1); free(t2); free(m); free(m3);
}

struct worker {
	const char *mirror, *src, *good, *bad;
	int failures;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct repo *r = NULL;
	struct repo_range rr;
	char sha[41];
	int i;

	if (repo_open(&r, w->mirror, w->src, 0) < 0) {
		w->failures++;
		return NULL;
	}
	for (i = 0; i < 30; i++) {
		if (repo_resolve(r, sha, "main") < 0 || strcmp(sha, w->bad))
			w->failures++;
		if (repo_range(&rr, r, w->good, w->bad, 0) < 0 || rr.nr != 19)
			w->failures++;
		repo_range_release(&rr);
		/* Errors are per thread: this one must not leak into others. */
		if (repo_resolve(r, sha, "nosuch") != ERR_NOTFOUND || !strstr(err_msg(), "nosuch"))
			w->failures++;
	}
	repo_free(r);
	return NULL;
}

/* Different repo objects on different threads (one per HTTP handler). */
static void test_threads(void **state)
{
	struct fx *fx = *state;
	struct repo *r = NULL;
	struct worker w[4];
	pthread_t th[4];
	char *c[20];
	int i;

	linear(fx, c, 20);
	assert_int_equal(repo_open(&r, fx->mirror, fx->src, 0), 0);
	repo_free(r);
	for (i = 0; i < 4; i++) {
		w[i].mirror = fx->mirror;
		w[i].src = fx->src;
		w[i].good = c[0];
		w[i].bad = c[19];
		w[i].failures = 0;
		assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].failures, 0);
	}
	free_all(c, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_clone_and_fetch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_linear, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_clock_skew, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
	};
	int rc;

	if (gitsh_init() < 0) {
		fprintf(stderr, "test_repo: cannot find tests/lib/mkrepo.sh (set MKREPO)\n");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	gitsh_release();
	return rc;
}
