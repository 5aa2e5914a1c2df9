/*
 * gitx: the border with libgit2 shared by the coordinator's mirrors
 * (repo.c) and the agents' work trees (worktree.c): one initialisation
 * for the life of the process, and libgit2's errors translated once.
 */
#ifndef BISECT_GITX_H
#define BISECT_GITX_H

/*
 * Initialises libgit2 once per process, thread-safely. It is never shut
 * down: mirrors are opened from several threads, and a shutdown racing an
 * open would free its global state under it.
 */
void gitx_init(void);

/*
 * Sets the message from the failing call's context (printf-style) and
 * libgit2's own message, and returns the code callers act on:
 * ERR_NOTFOUND, ERR_EXISTS, ERR_INVALID (ambiguous or invalid spec),
 * ERR_BUSY (locked), ERR_FAIL for the rest.
 */
int gitx_fail(int gitcode, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
