/*
 * worktree: an agent's persistent work tree of one repository (libgit2).
 * It is cloned once and moved from commit to commit by a forced checkout,
 * so a build system's incremental rebuild sees only what changed.
 */
#ifndef AGENT_WORKTREE_H
#define AGENT_WORKTREE_H

/*
 * Makes dir a checkout of commit sha from url: clones when dir is not a
 * repository yet, fetches from url when sha is not present, then checks
 * the commit out (detached HEAD, forced, removing untracked files that the
 * previous commit had tracked, but keeping ignored build output).
 * ERR_NOTFOUND when sha is not in url after fetching. The fetch and the
 * checkout report to the thread's gitx_set_progress() hook.
 */
int worktree_checkout(const char *dir, const char *url, const char *sha);

/* The tree id of commit sha in dir into out (41 bytes). */
int worktree_tree_id(char out[41], const char *dir, const char *sha);

#endif
