/*
 * gitx: the border with libgit2 shared by the coordinator's mirrors
 * (repo.c) and the agents' work trees (worktree.c): one initialisation
 * for the life of the process, and libgit2's errors translated once.
 */
#ifndef BISECT_GITX_H
#define BISECT_GITX_H

#include <git2.h>
#include <stddef.h>

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

/*
 * libgit2 1.5 leaks a PCRE2 match block (about 20 KiB) on every regex
 * that fails to match, and looking up or creating a named remote
 * (git_clone does) runs the url.*.insteadOf glob over every config entry.
 * Coordinators and agents fetch for every job or task, so named remotes
 * are kept out: the remote's url lives in the config for people (git
 * fetch by hand works), and fetches go through an in-memory remote with
 * explicit refspecs (url.*.insteadOf is not applied).
 */

/*
 * Writes remote.origin.url = url, .fetch = fetchspec and .tagOpt = --tags
 * into git's config, unless url is there already. path names the
 * repository in messages.
 */
int gitx_set_origin(git_repository *git, const char *path, const char *url, const char *fetchspec);

/*
 * Fetches specs[0..n) from url into git (pruned, forced as the specs say,
 * tags only through the specs). When remote is not NULL, *remote is the
 * in-memory remote, still usable (e.g. for git_remote_default_branch);
 * the caller frees it with git_remote_free.
 */
int gitx_fetch(git_remote **remote, git_repository *git, const char *path, const char *url,
	       char **specs, size_t n, const char *reflog_message);

/*
 * Makes path a new repository (bare or with a work tree) filled by
 * fetch(git, path, url), built in a temporary sibling and renamed into
 * place: a process killed during a long first fetch must not come back to
 * a half-filled repository it takes for a whole one. A first fetch that
 * fails is reported as ERR_NOTFOUND (libgit2 says "not found" for some
 * transports only; the message keeps its reason). *out is the opened
 * repository, the caller's.
 */
int gitx_clone_into(git_repository **out, const char *path, const char *url, int bare,
		    int (*fetch)(git_repository *git, const char *path, const char *url));

/*
 * Progress of this thread's long libgit2 work: gitx_fetch() and checkouts
 * set up with gitx_checkout_progress() call fn with a short line such as
 * "receiving objects, 40% of 10,519,014", "resolving deltas, 70%" or
 * "checking out files, 30% of 84,210", each time it changes (in steps of
 * 10%). A first clone of a kernel takes minutes; this is how an agent
 * shows where it is. fn NULL turns it off; arg is borrowed.
 */
void gitx_set_progress(void (*fn)(void *arg, const char *text), void *arg);

/* Points co's progress callback at this thread's fn, when one is set. */
void gitx_checkout_progress(git_checkout_options *co);

#endif
