/*
 * taskwire: the claim reply's encoder and decoder. The decoder is the
 * agent's border: every field from the network is checked here once.
 */
#include <string.h>

#include "err.h"
#include "jsonx.h"
#include "taskwire.h"
#include "util.h"

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > TASKWIRE_MAX_NAME || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

static int check(const struct task_wire *t)
{
	if (t->task < 1 || t->attempt < 1 || t->attempt > TASKWIRE_MAX_ATTEMPT)
		return err_set(ERR_INVALID, "task %lld attempt %lld: out of range", t->task, t->attempt);
	if (t->runs < 1 || t->runs > TASKWIRE_MAX_RUNS)
		return err_set(ERR_INVALID, "'runs' must be 1..%d, not %lld", TASKWIRE_MAX_RUNS, t->runs);
	if (!t->commit || !is_sha1_hex(t->commit))
		return err_set(ERR_INVALID, "'commit' is not a 40-digit hex sha");
	if (!t->repo_name || !name_ok(t->repo_name))
		return err_set(ERR_INVALID, "repo name '%s' must be 1 to %d of A-Z a-z 0-9 . _ -",
			       t->repo_name ? t->repo_name : "", TASKWIRE_MAX_NAME);
	if (!t->repo_url || !*t->repo_url)
		return err_set(ERR_INVALID, "repo '%s' has an empty url", t->repo_name);
	if (strlen(t->repo_url) > TASKWIRE_MAX_URL)
		return err_set(ERR_INVALID, "repo '%s' has a url over %d bytes", t->repo_name,
			       TASKWIRE_MAX_URL);
	if (!json_is_object(t->workload))
		return err_set(ERR_INVALID, "'workload' must be an object");
	if (t->profile && strcmp(t->profile, "parent") && strcmp(t->profile, "culprit"))
		return err_set(ERR_INVALID, "'profile' must be \"parent\" or \"culprit\", not '%s'", t->profile);
	return 0;
}

int taskwire_encode(json_t **out, const struct task_wire *t)
{
	int rc;

	*out = NULL;
	if ((rc = check(t)) < 0)
		return rc;
	*out = json_pack("{s:I, s:I, s:I, s:s, s:I, s:I, s:{s:s, s:s}, s:O}", "task", (json_int_t)t->task,
			 "attempt", (json_int_t)t->attempt, "job", (json_int_t)t->job, "commit", t->commit,
			 "runs", (json_int_t)t->runs, "lease", (json_int_t)t->lease,
			 "repo", "name", t->repo_name, "url", t->repo_url, "workload", t->workload);
	if (!*out)
		return err_set(ERR_INVALID, "task %lld: a string is not UTF-8", t->task);
	if (t->profile)
		json_object_set_new(*out, "profile", json_string(t->profile));
	return 0;
}

int taskwire_decode(struct task_wire *t, json_t *j)
{
	json_t *repo;
	int rc;

	memset(t, 0, sizeof(*t));
	if (!json_is_object(j))
		return err_set(ERR_INVALID, "the claim reply must be an object");
	if (jsonx_int(&t->task, j, "task", 1, (1LL << 53), 1, 0) < 0 ||
	    jsonx_int(&t->attempt, j, "attempt", 1, TASKWIRE_MAX_ATTEMPT, 1, 0) < 0) {
		t->task = t->attempt = 0;
		return ERR_INVALID;
	}
	t->workload = json_object_get(j, "workload");
	repo = json_object_get(j, "repo");
	if (jsonx_int(&t->runs, j, "runs", 1, TASKWIRE_MAX_RUNS, 1, 0) < 0 ||
	    jsonx_int(&t->job, j, "job", 0, (1LL << 53), 0, 0) < 0 ||
	    jsonx_int(&t->lease, j, "lease", 0, 1LL << 31, 0, 0) < 0 ||
	    jsonx_str(&t->commit, j, "commit", 40, 1, NULL) < 0 ||
	    jsonx_str(&t->profile, j, "profile", 16, 0, NULL) < 0)
		return ERR_INVALID;
	if (!json_is_object(repo))
		return err_set(ERR_INVALID, "'repo' must be an object");
	if (jsonx_str(&t->repo_name, repo, "name", TASKWIRE_MAX_NAME, 1, NULL) < 0 ||
	    jsonx_str(&t->repo_url, repo, "url", TASKWIRE_MAX_URL, 1, NULL) < 0)
		return ERR_INVALID;
	if ((rc = check(t)) < 0)
		return rc;
	if (jsonx_str(&t->type, t->workload, "type", TASKWIRE_MAX_NAME, 0, "command") < 0 ||
	    jsonx_str(&t->boot, t->workload, "boot", TASKWIRE_MAX_NAME, 0, "none") < 0 ||
	    jsonx_int(&t->build_timeout, t->workload, "build_timeout", 1, TASKWIRE_MAX_BUILD_TIMEOUT,
		      0, 1800) < 0)
		return ERR_INVALID;
	return 0;
}
