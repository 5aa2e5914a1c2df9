/*
 * repo: the coordinator's mirrors of the configured repositories (libgit2),
 * resolving refs and computing a job's candidate commits.
 *
 * The candidate set of a range good..bad is ancestors(bad) - ancestors(good),
 * merges included, in a topological order where every parent comes before
 * its children (so index 0 has no parent inside the set and bad is last).
 */
#ifndef BISECT_REPO_H
#define BISECT_REPO_H

#include <stddef.h>

struct repo_commit {
	char sha[41];
	char *subject;       /* first line of the message */
	char *author;        /* "Name <email>" */
	long long time;      /* committer time, unix seconds */
	int *parents;        /* indices into the range of parents inside the set */
	int nr_parents;
};

struct repo_range {
	char good[41], bad[41];
	struct repo_commit *commits;  /* topological, parents first; bad is last */
	int nr;
};

/*
 * Opens (cloning as a bare mirror when missing) the mirror of url at path
 * and fetches all refs from url when fetch is set. ERR_NOTFOUND when url
 * is not a repository.
 */
struct repo;
int repo_open(struct repo **out, const char *path, const char *url, int fetch);
void repo_free(struct repo *r);
/* Fetches again from the url (all branches and tags, forced). */
int repo_fetch(struct repo *r);

/*
 * Resolves a ref, tag, abbreviated or full id (anything git rev-parse takes
 * for a single commit) to a full commit id. ERR_NOTFOUND with a message
 * naming the ref when it does not resolve to a commit.
 */
int repo_resolve(struct repo *r, char out[41], const char *ref);

/*
 * Computes the candidates of good..bad. ERR_INVALID when good is not an
 * ancestor of bad, or the range is empty (good == bad); max_commits bounds
 * the set (ERR_INVALID past it).
 */
int repo_range(struct repo_range *out, struct repo *r, const char *good_sha,
	       const char *bad_sha, int max_commits);
void repo_range_release(struct repo_range *rr);

/*
 * The subject and author ("Name <email>") of the full commit id sha, as
 * heap strings the caller frees. ERR_NOTFOUND when the mirror lacks it.
 */
int repo_commit_info(char **subject, char **author, struct repo *r, const char *sha);

#endif
