/*
 * worktree: the agent's persistent checkout (libgit2). Moving one work tree
 * from commit to commit, rather than cloning per task, is what lets a
 * kernel rebuild after a one-file change take seconds instead of minutes.
 * libgit2's errors are translated into ERR_* codes here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "err.h"
#include "gitx.h"
#include "util.h"
#include "worktree.h"

/*
 * Branches go to remote-tracking names (a work tree must not have its
 * checked-out branch moved under it); tags are fetched whole, forced, so a
 * commit only a tag reaches is still found.
 */
static char *tree_specs[] = {
	"+refs/heads/*:refs/remotes/origin/*",
	"+refs/tags/*:refs/tags/*",
};

static int fetch_all(git_repository *git, const char *dir, const char *url)
{
	/* The task's url wins: the coordinator's config may have moved. */
	int rc = gitx_set_origin(git, dir, url, tree_specs[0]);

	if (rc == 0)
		rc = gitx_fetch(NULL, git, dir, url, tree_specs, 2, "bisect-agent: fetch");
	return rc;
}

static int open_tree(git_repository **out, const char *dir)
{
	int rc;

	gitx_init();
	rc = git_repository_open_ext(out, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (rc == GIT_ENOTFOUND)
		return err_set(ERR_NOTFOUND, "%s is not a git work tree", dir);
	if (rc < 0)
		return gitx_fail(rc, "cannot open %s", dir);
	return 0;
}

int worktree_checkout(const char *dir, const char *url, const char *sha)
{
	git_repository *git = NULL;
	git_commit *commit = NULL;
	git_checkout_options co;
	git_oid oid;
	struct stat st;
	char *lock = NULL;
	int rc;

	if (!dir || !*dir || !url || !*url)
		return err_set(ERR_INVALID, "worktree_checkout: empty dir or url");
	if (!sha || !is_sha1_hex(sha))
		return err_set(ERR_INVALID, "'%.64s' is not a full commit id", sha ? sha : "");
	git_oid_fromstr(&oid, sha);
	gitx_init();

	rc = git_repository_open_ext(&git, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (rc == GIT_ENOTFOUND) {
		/* An empty directory may become the work tree; anything else
		 * there is not ours to replace. */
		if (stat(dir, &st) == 0 && !(S_ISDIR(st.st_mode) && rmdir(dir) == 0)) {
			rc = err_set(ERR_INVALID, "%s exists and is not a git work tree", dir);
			goto out;
		}
		/* Nothing is checked out here; the task's commit is, next. */
		rc = gitx_clone_into(&git, dir, url, 0, fetch_all);
	} else if (rc < 0) {
		rc = gitx_fail(rc, "cannot open %s", dir);
	}
	if (rc < 0)
		goto out;
	if (git_repository_is_bare(git)) {
		rc = err_set(ERR_INVALID, "%s is a bare repository, not a work tree", dir);
		goto out;
	}

	rc = git_commit_lookup(&commit, git, &oid);
	if (rc == GIT_ENOTFOUND) {
		rc = fetch_all(git, dir, url);
		if (rc < 0)
			goto out;
		rc = git_commit_lookup(&commit, git, &oid);
		if (rc == GIT_ENOTFOUND) {
			rc = err_set(ERR_NOTFOUND, "commit %s is not in '%s'", sha, url);
			goto out;
		}
	}
	if (rc < 0) {
		rc = gitx_fail(rc, "cannot read commit %s in %s", sha, dir);
		goto out;
	}

	/* This work tree is the agent's alone, so an index lock in it was
	 * left by a run of ours that died; keeping it would fail every task
	 * from now on. */
	lock = xasprintf("%sindex.lock", git_repository_path(git));
	unlink(lock);

	/* FORCE overwrites local changes and deletes what the old commit
	 * tracked and the new one does not; untracked and ignored files (the
	 * build's output) stay, which is what makes rebuilds incremental. */
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	gitx_checkout_progress(&co);
	rc = git_checkout_tree(git, (const git_object *)commit, &co);
	if (rc < 0) {
		rc = gitx_fail(rc, "cannot check out %.12s in %s", sha, dir);
		goto out;
	}
	rc = git_repository_set_head_detached(git, &oid);
	if (rc < 0)
		rc = gitx_fail(rc, "cannot move HEAD of %s to %.12s", dir, sha);
out:
	free(lock);
	git_commit_free(commit);
	git_repository_free(git);
	return rc;
}

int worktree_tree_id(char out[41], const char *dir, const char *sha)
{
	git_repository *git = NULL;
	git_commit *commit = NULL;
	git_oid oid;
	int rc;

	out[0] = '\0';
	if (!sha || !is_sha1_hex(sha))
		return err_set(ERR_INVALID, "'%.64s' is not a full commit id", sha ? sha : "");
	git_oid_fromstr(&oid, sha);
	rc = open_tree(&git, dir);
	if (rc < 0)
		goto out;
	rc = git_commit_lookup(&commit, git, &oid);
	if (rc == GIT_ENOTFOUND) {
		rc = err_set(ERR_NOTFOUND, "commit %s is not in %s", sha, dir);
		goto out;
	}
	if (rc < 0) {
		rc = gitx_fail(rc, "cannot read commit %s in %s", sha, dir);
		goto out;
	}
	git_oid_tostr(out, 41, git_commit_tree_id(commit));
out:
	git_commit_free(commit);
	git_repository_free(git);
	return rc;
}
