/*
 * repo: the coordinator's bare mirrors (libgit2). libgit2's errors are
 * translated here, once, into ERR_* codes with a message that names the
 * ref or the commits involved; nothing outside this file sees a git_error.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
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
#include "repo.h"
#include "util.h"

/* Refs come from the network; nothing git would accept is longer. */
#define REF_MAX 1024

struct repo {
	git_repository *git;
	char *path;
	char *url;
};

/* libgit2's message for the last failure on this thread. Borrowed. */
static const char *git_msg(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "libgit2 error";
}

/*
 * A mirror fetches every branch and every tag onto the same names, forced,
 * so that a rebased branch or a moved tag is followed.
 */
static char *mirror_specs[] = {
	"+refs/heads/*:refs/heads/*",
	"+refs/tags/*:refs/tags/*",
};

/*
 * Points the mirror's HEAD at upstream's default branch, as git clone
 * --mirror does, so that "HEAD" resolves and the mirror can be cloned.
 * Best effort: a mirror without a usable HEAD still bisects, so a failure
 * here is not the fetch's failure.
 */
static void follow_head(git_repository *git, git_remote *remote)
{
	git_buf name = GIT_BUF_INIT;
	git_reference *ref = NULL, *head = NULL;

	if (git_remote_default_branch(&name, remote) < 0 ||
	    git_reference_lookup(&ref, git, name.ptr) < 0)
		goto out;
	if (git_reference_lookup(&head, git, "HEAD") == 0 &&
	    git_reference_type(head) == GIT_REFERENCE_SYMBOLIC &&
	    !strcmp(git_reference_symbolic_target(head), name.ptr))
		goto out;
	git_repository_set_head(git, name.ptr);
out:
	git_error_clear();
	git_reference_free(head);
	git_reference_free(ref);
	git_buf_dispose(&name);
}

static int fetch_mirror(git_repository *git, const char *path, const char *url)
{
	git_remote *remote = NULL;
	int rc = gitx_fetch(&remote, git, path, url, mirror_specs, 2, "bisectd: fetch");

	if (rc == 0)
		follow_head(git, remote);
	git_remote_free(remote);
	return rc;
}

/*
 * A new mirror's first fetch. (Not git_clone: with a mirror's refspecs it
 * leaves HEAD dangling and adds a stray refs/remotes/origin/HEAD.)
 */
static int first_fetch(git_repository *git, const char *path, const char *url)
{
	int rc = gitx_set_origin(git, path, url, mirror_specs[0]);

	return rc < 0 ? rc : fetch_mirror(git, path, url);
}

int repo_open(struct repo **out, const char *path, const char *url, int fetch)
{
	struct repo *r = NULL;
	struct stat st;
	int rc;

	*out = NULL;
	if (!path || !*path || !url || !*url)
		return err_set(ERR_INVALID, "repo_open: empty path or url");
	gitx_init();

	r = xcalloc(1, sizeof(*r));
	r->path = xstrdup(path);
	r->url = xstrdup(url);

	rc = git_repository_open_ext(&r->git, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (rc == GIT_ENOTFOUND) {
		/* An empty directory (made by a package, say) may become the
		 * mirror; anything else there is not ours to replace. */
		if (stat(path, &st) == 0 && !(S_ISDIR(st.st_mode) && rmdir(path) == 0)) {
			rc = err_set(ERR_INVALID, "%s exists and is not a git repository", path);
			goto out;
		}
		rc = gitx_clone_into(&r->git, path, url, 1, first_fetch);
		goto out;
	}
	if (rc < 0) {
		rc = gitx_fail(rc, "cannot open the mirror %s", path);
		goto out;
	}
	/* The configured url wins over whatever the mirror was cloned from. */
	rc = gitx_set_origin(r->git, r->path, r->url, mirror_specs[0]);
	if (rc == 0 && fetch)
		rc = repo_fetch(r);
out:
	if (rc < 0)
		repo_free(r);
	else
		*out = r;
	return rc;
}

void repo_free(struct repo *r)
{
	if (!r)
		return;
	git_repository_free(r->git);
	free(r->path);
	free(r->url);
	free(r);
}

int repo_fetch(struct repo *r)
{
	return fetch_mirror(r->git, r->path, r->url);
}

int repo_resolve(struct repo *r, char out[41], const char *ref)
{
	git_object *obj = NULL, *commit = NULL;
	int rc;

	out[0] = '\0';
	if (!ref || !*ref)
		return err_set(ERR_INVALID, "empty ref");
	if (strlen(ref) > REF_MAX)
		return err_set(ERR_INVALID, "ref is longer than %d bytes", REF_MAX);

	/* ":/text" and "rev^{/text}" walk the whole history with a regex a
	 * submitter wrote: a cheap way to keep the coordinator busy. */
	if (strstr(ref, ":/") || strstr(ref, "{/"))
		return err_set(ERR_INVALID, "ref '%s': searching commit messages is not supported",
			       ref);

	rc = git_revparse_single(&obj, r->git, ref);
	if (rc == GIT_EAMBIGUOUS) {
		rc = err_set(ERR_NOTFOUND, "ref '%s' is ambiguous in the mirror of %s: %s",
			     ref, r->url, git_msg());
		goto out;
	}
	if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC || rc == GIT_EPEEL) {
		rc = err_set(ERR_NOTFOUND, "ref '%s' does not resolve to a commit in the mirror of %s",
			     ref, r->url);
		goto out;
	}
	if (rc < 0) {
		rc = gitx_fail(rc, "cannot resolve '%s' in the mirror of %s", ref, r->url);
		goto out;
	}
	rc = git_object_peel(&commit, obj, GIT_OBJECT_COMMIT);
	if (rc < 0) {
		rc = err_set(ERR_NOTFOUND, "ref '%s' names a %s, not a commit, in the mirror of %s",
			     ref, git_object_type2string(git_object_type(obj)), r->url);
		goto out;
	}
	git_oid_tostr(out, 41, git_object_id(commit));
out:
	git_object_free(commit);
	git_object_free(obj);
	return rc;
}

/*
 * Commit messages and names are not always UTF-8 (old kernel history has
 * Latin-1); the JSON layer needs valid UTF-8, so invalid bytes become '?'.
 */
static char *utf8_dup(const char *s, size_t n)
{
	char *d = xstrndup(s, n);
	unsigned char *p = (unsigned char *)d;

	while (*p) {
		size_t len = 0, i;
		unsigned c = *p;

		if (c < 0x80) {
			if (c < 0x20 && c != '\t')
				*p = '?';
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4;
		for (i = 1; i < len; i++)
			if ((p[i] & 0xc0) != 0x80)
				break;
		/* Overlong and surrogate forms are rejected as JSON parsers do. */
		if (len && i == len &&
		    !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xed && p[1] >= 0xa0) &&
		    !(c == 0xf0 && p[1] < 0x90) && !(c == 0xf4 && p[1] >= 0x90)) {
			p += len;
			continue;
		}
		*p++ = '?';
	}
	return d;
}

static char *subject_of(const char *msg)
{
	const char *end;

	if (!msg)
		return xstrdup("");
	while (*msg == '\n' || *msg == ' ' || *msg == '\t' || *msg == '\r')
		msg++;
	end = strchr(msg, '\n');
	if (!end)
		end = msg + strlen(msg);
	while (end > msg && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	return utf8_dup(msg, (size_t)(end - msg));
}

static char *author_of(const git_signature *sig)
{
	char *s, *d;

	if (!sig)
		return xstrdup("");
	s = xasprintf("%s <%s>", sig->name ? sig->name : "", sig->email ? sig->email : "");
	d = utf8_dup(s, strlen(s));
	free(s);
	return d;
}

struct oid_idx {
	git_oid oid;
	int idx;
};

static int oid_idx_cmp(const void *a, const void *b)
{
	return git_oid_cmp(&((const struct oid_idx *)a)->oid, &((const struct oid_idx *)b)->oid);
}

static int index_of(const struct oid_idx *map, int n, const git_oid *oid)
{
	struct oid_idx key;
	const struct oid_idx *hit;

	git_oid_cpy(&key.oid, oid);
	hit = bsearch(&key, map, (size_t)n, sizeof(*map), oid_idx_cmp);
	return hit ? hit->idx : -1;
}

/*
 * libgit2's topological sort is what the engine relies on (parents first),
 * but it is a promise kept by code we do not own; Kahn's algorithm over the
 * walk's order, run only when that order is broken, keeps the contract
 * without trusting it.
 */
static void reorder_parents_first(struct repo_commit *c, int nr)
{
	int *indeg = xcalloc((size_t)nr, sizeof(int));
	int *first = xcalloc((size_t)nr + 1, sizeof(int));
	int *kids, *fill, *queue, *newidx;
	struct repo_commit *sorted;
	int i, j, head = 0, tail = 0, nkids = 0;

	for (i = 0; i < nr; i++) {
		indeg[i] = c[i].nr_parents;
		nkids += c[i].nr_parents;
		for (j = 0; j < c[i].nr_parents; j++)
			first[c[i].parents[j] + 1]++;
	}
	for (i = 0; i < nr; i++)
		first[i + 1] += first[i];
	kids = xmalloc(((size_t)nkids + 1) * sizeof(int));
	fill = xmalloc(((size_t)nr + 1) * sizeof(int));
	memcpy(fill, first, ((size_t)nr + 1) * sizeof(int));
	for (i = 0; i < nr; i++)
		for (j = 0; j < c[i].nr_parents; j++)
			kids[fill[c[i].parents[j]]++] = i;

	queue = xmalloc((size_t)nr * sizeof(int));
	for (i = 0; i < nr; i++)
		if (indeg[i] == 0)
			queue[tail++] = i;
	while (head < tail) {
		int p = queue[head++];

		for (j = first[p]; j < first[p + 1]; j++)
			if (--indeg[kids[j]] == 0)
				queue[tail++] = kids[j];
	}
	/* git objects cannot form a cycle, so every commit was queued. */
	assert(tail == nr);

	newidx = xmalloc((size_t)nr * sizeof(int));
	for (i = 0; i < nr; i++)
		newidx[queue[i]] = i;
	sorted = xmalloc((size_t)nr * sizeof(*sorted));
	for (i = 0; i < nr; i++) {
		sorted[i] = c[queue[i]];
		for (j = 0; j < sorted[i].nr_parents; j++)
			sorted[i].parents[j] = newidx[sorted[i].parents[j]];
	}
	memcpy(c, sorted, (size_t)nr * sizeof(*c));
	free(sorted);
	free(newidx);
	free(queue);
	free(fill);
	free(kids);
	free(first);
	free(indeg);
}

static int fill_commit(struct repo_commit *rc, git_repository *git, const git_oid *oid,
		       const struct oid_idx *map, int nr)
{
	git_commit *c = NULL;
	unsigned i, np;
	int err;

	err = git_commit_lookup(&c, git, oid);
	if (err < 0)
		return gitx_fail(err, "cannot read commit %s", git_oid_tostr_s(oid));
	git_oid_tostr(rc->sha, sizeof(rc->sha), oid);
	rc->subject = subject_of(git_commit_message(c));
	rc->author = author_of(git_commit_author(c));
	rc->time = (long long)git_commit_time(c);
	np = git_commit_parentcount(c);
	rc->parents = xcalloc(np ? np : 1, sizeof(int));
	rc->nr_parents = 0;
	for (i = 0; i < np; i++) {
		int idx = index_of(map, nr, git_commit_parent_id(c, i));

		if (idx >= 0)
			rc->parents[rc->nr_parents++] = idx;
	}
	git_commit_free(c);
	return 0;
}

static int lookup_end(git_oid *oid, struct repo *r, const char *sha, const char *which)
{
	git_commit *c = NULL;
	int rc;

	if (!sha || !is_sha1_hex(sha))
		return err_set(ERR_INVALID, "%s is not a full commit id: '%.64s'", which,
			       sha ? sha : "");
	git_oid_fromstr(oid, sha);
	rc = git_commit_lookup(&c, r->git, oid);
	if (rc == GIT_ENOTFOUND)
		return err_set(ERR_NOTFOUND, "%s (%.12s) is not a commit in the mirror of %s",
			       which, sha, r->url);
	if (rc < 0)
		return gitx_fail(rc, "cannot read %s (%.12s)", which, sha);
	git_commit_free(c);
	return 0;
}

int repo_range(struct repo_range *out, struct repo *r, const char *good_sha,
	       const char *bad_sha, int max_commits)
{
	git_revwalk *walk = NULL;
	git_oid good, bad, oid;
	git_oid *oids = NULL;
	struct oid_idx *map = NULL;
	size_t n = 0, cap = 0;
	int rc, i, broken = 0;

	memset(out, 0, sizeof(*out));
	rc = lookup_end(&good, r, good_sha, "good");
	if (rc < 0)
		goto out;
	rc = lookup_end(&bad, r, bad_sha, "bad");
	if (rc < 0)
		goto out;
	if (git_oid_equal(&good, &bad)) {
		rc = err_set(ERR_INVALID, "good and bad are the same commit (%.12s): empty range",
			     good_sha);
		goto out;
	}
	rc = git_graph_descendant_of(r->git, &bad, &good);
	if (rc < 0) {
		rc = gitx_fail(rc, "cannot tell whether %.12s is an ancestor of %.12s",
			      good_sha, bad_sha);
		goto out;
	}
	if (rc == 0) {
		rc = err_set(ERR_INVALID, "good (%.12s) is not an ancestor of bad (%.12s): nothing to bisect",
			     good_sha, bad_sha);
		goto out;
	}

	rc = git_revwalk_new(&walk, r->git);
	if (rc == 0)
		rc = git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if (rc == 0)
		rc = git_revwalk_push(walk, &bad);
	if (rc == 0)
		rc = git_revwalk_hide(walk, &good);
	if (rc < 0) {
		rc = gitx_fail(rc, "cannot walk %.12s..%.12s", good_sha, bad_sha);
		goto out;
	}
	/* Ids only, and all of them, so an oversized range is refused with
	 * its real size before any commit is read. */
	while ((rc = git_revwalk_next(&oid, walk)) == 0) {
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			oids = xrealloc(oids, cap * sizeof(*oids));
		}
		git_oid_cpy(&oids[n++], &oid);
	}
	if (rc != GIT_ITEROVER) {
		rc = gitx_fail(rc, "cannot walk %.12s..%.12s", good_sha, bad_sha);
		goto out;
	}
	rc = 0;
	if (n > (size_t)INT_MAX || (max_commits > 0 && n > (size_t)max_commits)) {
		rc = err_set(ERR_INVALID, "range has %zu commits, more than the limit %d",
			     n, max_commits);
		goto out;
	}

	map = xmalloc((n ? n : 1) * sizeof(*map));
	for (i = 0; i < (int)n; i++) {
		git_oid_cpy(&map[i].oid, &oids[i]);
		map[i].idx = i;
	}
	qsort(map, n, sizeof(*map), oid_idx_cmp);

	out->commits = xcalloc(n, sizeof(*out->commits));
	out->nr = (int)n;
	for (i = 0; i < (int)n; i++) {
		int k;

		rc = fill_commit(&out->commits[i], r->git, &oids[i], map, (int)n);
		if (rc < 0)
			goto out;
		for (k = 0; k < out->commits[i].nr_parents; k++)
			if (out->commits[i].parents[k] >= i)
				broken = 1;
	}
	if (broken)
		reorder_parents_first(out->commits, out->nr);
	/* bad is the only commit of the set without a child in it, so any
	 * parents-first order ends with it. */
	if (n == 0 || strcmp(out->commits[n - 1].sha, bad_sha)) {
		rc = err_set(ERR_FAIL, "walk of %.12s..%.12s did not end at bad", good_sha, bad_sha);
		goto out;
	}
	memcpy(out->good, good_sha, 41);
	memcpy(out->bad, bad_sha, 41);
out:
	if (rc < 0)
		repo_range_release(out);
	free(map);
	free(oids);
	git_revwalk_free(walk);
	return rc;
}

void repo_range_release(struct repo_range *rr)
{
	int i;

	if (!rr)
		return;
	for (i = 0; i < rr->nr; i++) {
		free(rr->commits[i].subject);
		free(rr->commits[i].author);
		free(rr->commits[i].parents);
	}
	free(rr->commits);
	memset(rr, 0, sizeof(*rr));
}

int repo_commit_info(char **subject, char **author, struct repo *r, const char *sha)
{
	git_commit *c = NULL;
	git_oid oid;
	int rc;

	*subject = *author = NULL;
	if ((rc = lookup_end(&oid, r, sha, "the commit")))
		return rc;
	if ((rc = git_commit_lookup(&c, r->git, &oid)) < 0)
		return gitx_fail(rc, "cannot read commit %.12s", sha);
	*subject = subject_of(git_commit_message(c));
	*author = author_of(git_commit_author(c));
	git_commit_free(c);
	return 0;
}
