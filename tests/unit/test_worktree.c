/*
 * Tests for worktree.c: the agent's persistent checkout, moved between
 * commits of histories made by tests/lib/mkrepo.sh in a scratch directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "gitsh.h"
#include "gitx.h"
#include "run.h"
#include "util.h"
#include "worktree.h"

struct fx {
	char *dir;     /* scratch directory, removed at teardown */
	char *src;     /* the upstream repository, dir/src */
	char *wt;      /* the agent's work tree, dir/wt */
};

/* Shell steps in the fixture's scratch directory (tests/unit/gitsh.c). */
#define sh(fx, ...) gitsh((fx)->dir, __VA_ARGS__)
#define sh0(fx, ...) gitsh0((fx)->dir, __VA_ARGS__)

static int setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	char tmpl[] = "/tmp/test_worktree.XXXXXX";

	if (!mkdtemp(tmpl))
		return -1;
	fx->dir = xstrdup(tmpl);
	fx->src = xasprintf("%s/src", fx->dir);
	fx->wt = xasprintf("%s/wt", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	remove_tree(fx->dir);
	free(fx->dir);
	free(fx->src);
	free(fx->wt);
	free(fx);
	return 0;
}

/* The content of dir/wt/name, or NULL when there is no such file. */
static char *wt_file(struct fx *fx, const char *name)
{
	char *path = xasprintf("%s/%s", fx->wt, name), *data = NULL;

	if (file_read(&data, NULL, path, 1 << 20) < 0)
		data = NULL;
	free(path);
	return data;
}

static void wt_write(struct fx *fx, const char *name, const char *data)
{
	char *path = xasprintf("%s/%s", fx->wt, name);

	assert_int_equal(file_write_atomic(path, data, strlen(data)), 0);
	free(path);
}

static void assert_file(struct fx *fx, const char *name, const char *want)
{
	char *got = wt_file(fx, name);

	if (!want) {
		if (got)
			fail_msg("%s should not exist, has '%s'", name, got);
		return;
	}
	if (!got)
		fail_msg("%s is missing", name);
	assert_string_equal(got, want);
	free(got);
}

/* HEAD is detached at sha and the index matches it: status shows nothing. */
static void assert_at(struct fx *fx, const char *sha)
{
	char *head = sh(fx, "mkrepo_git wt rev-parse HEAD");
	char *status = sh(fx, "mkrepo_git wt status --porcelain --untracked-files=no; echo end");
	char *sym = sh(fx, "mkrepo_git wt symbolic-ref -q HEAD || echo detached");

	assert_string_equal(head, sha);
	assert_string_equal(status, "end");
	assert_string_equal(sym, "detached");
	free(head);
	free(status);
	free(sym);
}

/*
 * c1: a=one, .gitignore ignores bench and *.o
 * c2: a=two, b added
 * c3: b removed
 */
static void history(struct fx *fx, char **c1, char **c2, char **c3)
{
	sh0(fx, "mkrepo_init src");
	sh0(fx, "printf 'bench\n*.o\n' > src/.gitignore");
	*c1 = sh(fx, "mkrepo_commit src a one c1");
	*c2 = sh(fx, "printf 'bee\n' > src/b; mkrepo_commit src a two c2");
	*c3 = sh(fx, "mkrepo_rm src b c3");
}

static void test_checkout_moves(void **state)
{
	struct fx *fx = *state;
	char *c1, *c2, *c3;

	history(fx, &c1, &c2, &c3);
	assert_int_equal(worktree_checkout(fx->wt, fx->src, c1), 0);
	assert_file(fx, "a", "one\n");
	assert_file(fx, "b", NULL);
	assert_file(fx, ".gitignore", "bench\n*.o\n");
	assert_at(fx, c1);

	/* Build output: ignored files, as make leaves them. */
	wt_write(fx, "bench", "binary");
	wt_write(fx, "a.o", "object");

	assert_int_equal(worktree_checkout(fx->wt, fx->src, c2), 0);
	assert_file(fx, "a", "two\n");
	assert_file(fx, "b", "bee\n");
	assert_file(fx, "bench", "binary");
	assert_file(fx, "a.o", "object");
	assert_at(fx, c2);

	/* A file the new commit no longer tracks goes; build output stays. */
	assert_int_equal(worktree_checkout(fx->wt, fx->src, c3), 0);
	assert_file(fx, "b", NULL);
	assert_file(fx, "a", "two\n");
	assert_file(fx, "bench", "binary");
	assert_at(fx, c3);

	/* Back again, over a tracked file the build scribbled on. */
	wt_write(fx, "a", "dirty\n");
	assert_int_equal(worktree_checkout(fx->wt, fx->src, c2), 0);
	assert_file(fx, "a", "two\n");
	assert_file(fx, "b", "bee\n");
	assert_file(fx, "bench", "binary");
	assert_at(fx, c2);

	/* The same commit twice is fine. */
	assert_int_equal(worktree_checkout(fx->wt, fx->src, c2), 0);
	assert_at(fx, c2);
	free(c1); free(c2); free(c3);
}

static void test_untracked_survives(void **state)
{
	struct fx *fx = *state;
	char *c1, *c2, *c3;

	history(fx, &c1, &c2, &c3);
	assert_int_equal(worktree_checkout(fx->wt, fx->src, c2), 0);
	/* Not ignored, not tracked: a log the agent keeps, say. */
	wt_write(fx, "notes.txt", "keep me");
	assert_int_equal(worktree_checkout(fx->wt, fx->src, c1), 0);
	assert_file(fx, "notes.txt", "keep me");
	assert_file(fx, "b", NULL);
	free(c1); free(c2); free(c3);
}

static void test_fetches_new_commits(void **state)
{
	struct fx *fx = *state;
	char *c1, *c2, *c3, *c4, *tagged;

	history(fx, &c1, &c2, &c3);
	assert_int_equal(worktree_checkout(fx->wt, fx->src, c3), 0);

	/* Upstream moves on after the clone. */
	c4 = sh(fx, "mkrepo_commit src a four c4");
	assert_int_equal(worktree_checkout(fx->wt, fx->src, c4), 0);
	assert_file(fx, "a", "four\n");
	assert_at(fx, c4);

	/* A commit that only a tag reaches. */
	tagged = sh(fx, "mkrepo_git src checkout -q --detach && mkrepo_commit src a tagged t1 >/dev/null &&"
		    "mkrepo_tag src only-tag && mkrepo_switch src main && mkrepo_sha src only-tag");
	assert_int_equal(worktree_checkout(fx->wt, fx->src, tagged), 0);
	assert_file(fx, "a", "tagged\n");
	assert_at(fx, tagged);
	free(c1); free(c2); free(c3); free(c4); free(tagged);
}

static void test_errors(void **state)
{
	struct fx *fx = *state;
	char *c1, *c2, *c3, *bogus, *lock;
	char missing[] = "0123456789abcdef0123456789abcdef01234567";
	struct stat st;

	/* Not a repository: nothing is left behind. */
	bogus = xasprintf("%s/nosuch", fx->dir);
	assert_int_equal(worktree_checkout(fx->wt, bogus, missing), ERR_NOTFOUND);
	assert_int_not_equal(stat(fx->wt, &st), 0);

	history(fx, &c1, &c2, &c3);
	assert_int_equal(worktree_checkout(fx->wt, fx->src, c1), 0);
	assert_int_equal(worktree_checkout(fx->wt, fx->src, missing), ERR_NOTFOUND);
	assert_non_null(strstr(err_msg(), missing));
	assert_at(fx, c1);
	assert_int_equal(worktree_checkout(fx->wt, fx->src, "main"), ERR_INVALID);
	assert_int_equal(worktree_checkout(fx->wt, fx->src, "0123456"), ERR_INVALID);

	/* A lock left by a crashed run does not wedge the agent. */
	lock = xasprintf("%s/.git/index.lock", fx->wt);
	assert_int_equal(file_write_atomic(lock, "", 0), 0);
	assert_int_equal(worktree_checkout(fx->wt, fx->src, c2), 0);
	assert_at(fx, c2);

	/* A directory with other things in it is not taken over. */
	free(bogus);
	bogus = xasprintf("%s/junk", fx->dir);
	assert_int_equal(mkdir(bogus, 0755), 0);
	free(lock);
	lock = xasprintf("%s/junk/file", fx->dir);
	assert_int_equal(file_write_atomic(lock, "x", 1), 0);
	assert_int_equal(worktree_checkout(bogus, fx->src, c1), ERR_INVALID);
	assert_int_equal(stat(lock, &st), 0);

	free(lock); free(bogus);
	free(c1); free(c2); free(c3);
}

static void test_tree_id(void **state)
{
	struct fx *fx = *state;
	char *c1, *c2, *c3, *want;
	char tree[41];
	char missing[] = "0123456789abcdef0123456789abcdef01234567";

	history(fx, &c1, &c2, &c3);
	assert_int_equal(worktree_checkout(fx->wt, fx->src, c1), 0);
	want = sh(fx, "mkrepo_git src rev-parse %s^{tree}", c2);
	assert_int_equal(worktree_tree_id(tree, fx->wt, c2), 0);
	assert_string_equal(tree, want);
	assert_int_equal(worktree_tree_id(tree, fx->wt, missing), ERR_NOTFOUND);
	assert_int_equal(worktree_tree_id(tree, fx->dir, c2), ERR_NOTFOUND);
	free(want);
	free(c1); free(c2); free(c3);
}

static void collect(void *arg, const char *text)
{
	struct sbuf *lines = arg;

	sbuf_addf(lines, "%s\n", text);
}

/*
 * A first clone reports its progress to the thread's hook: objects
 * received, deltas, then the files checked out, in steps of 10%; nothing
 * once the hook is off.
 */
static void test_progress(void **state)
{
	struct fx *fx = *state;
	struct sbuf lines = SBUF_INIT;
	char *c1, *c2, *c3, *big;

	history(fx, &c1, &c2, &c3);
	big = sh(fx, "for i in $(seq 1 40); do echo $i > src/f$i; done; mkrepo_commit src a big c4");
	gitx_set_progress(collect, &lines);
	assert_int_equal(worktree_checkout(fx->wt, fx->src, big), 0);
	gitx_set_progress(NULL, NULL);
	if (!strstr(lines.buf ? lines.buf : "", "receiving objects, ") ||
	    !strstr(lines.buf, "checking out files, 0% of 42\n") ||
	    !strstr(lines.buf, "checking out files, 90% of 42\n"))
		fail_msg("progress lines:\n%s", lines.buf ? lines.buf : "(none)");
	/* Each line differs from the one before. */
	for (char *p = lines.buf, *nl; (nl = strchr(p, '\n')) && nl[1]; p = nl + 1) {
		size_t len = (size_t)(nl - p);

		assert_false(!strncmp(p, nl + 1, len) && nl[1 + len] == '\n');
	}
	sbuf_release(&lines);
	assert_int_equal(worktree_checkout(fx->wt, fx->src, c1), 0);
	assert_null(lines.buf);
	free(c1);
	free(c2);
	free(c3);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_checkout_moves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untracked_survives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetches_new_commits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tree_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_progress, setup, teardown),
	};
	int rc;

	if (gitsh_init() < 0) {
		fprintf(stderr, "test_worktree: cannot find tests/lib/mkrepo.sh (set MKREPO)\n");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	gitsh_release();
	return rc;
}
