/*
 * gitsh: shell steps for tests that make git histories with
 * tests/lib/mkrepo.sh (fixed dates and authors, stable ids), shared by
 * test_repo and test_worktree.
 */
#ifndef TEST_GITSH_H
#define TEST_GITSH_H

#include <stdarg.h>

/* Finds mkrepo.sh ($MKREPO, the top of the tree, or beside this file); 0 or -1. */
int gitsh_init(void);
/* Frees what gitsh_init found. */
void gitsh_release(void);

/*
 * Runs a shell snippet with mkrepo.sh sourced, in dir, failing the test
 * when it fails. Returns the last line of its stdout (caller frees):
 * several commits in one snippet print several ids.
 */
char *gitsh(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, for steps whose output does not matter. */
void gitsh0(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
