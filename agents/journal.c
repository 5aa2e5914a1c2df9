/*
 * journal: the task a kexec reboot carries over, on disk (journal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "journal.h"
#include "jsonx.h"
#include "taskwire.h"
#include "util.h"

#define MAX_LINE 4096        /* a kernel command line (COMMAND_LINE_SIZE is 2048 on x86) */
#define MAX_PATH 4096
#define MAX_BOOT_ID 64

char *journal_path(const char *agent_workdir)
{
	return xasprintf("%s/kexec/journal.json", agent_workdir);
}

int journal_build_id_ok(const char *s)
{
	return s && strlen(s) == JOURNAL_BUILD_ID_LEN && strspn(s, "0123456789abcdef") == JOURNAL_BUILD_ID_LEN;
}

int journal_cmdline_marker(char *out, const char *cmdline)
{
	static const char key[] = "bisect.build=";
	const char *p = cmdline;

	out[0] = '\0';
	while (p && *p) {
		size_t n;

		p += strspn(p, " \t\n");
		n = strcspn(p, " \t\n");
		if (n > sizeof(key) - 1 && !strncmp(p, key, sizeof(key) - 1)) {
			size_t v = n - (sizeof(key) - 1);

			if (v != JOURNAL_BUILD_ID_LEN)
				return err_set(ERR_INVALID, "bisect.build= must be %d hex digits, not %zu bytes",
					       JOURNAL_BUILD_ID_LEN, v);
			memcpy(out, p + sizeof(key) - 1, v);
			out[v] = '\0';
			if (!journal_build_id_ok(out)) {
				out[0] = '\0';
				return err_set(ERR_INVALID, "bisect.build= must be %d lower-case hex digits",
					       JOURNAL_BUILD_ID_LEN);
			}
			return 0;
		}
		p += n;
	}
	return ERR_NOTFOUND;
}

static int samples_ok(json_t *a, long long runs)
{
	size_t i;
	json_t *s;

	if (!json_is_array(a))
		return err_set(ERR_INVALID, "field 'samples' must be an array");
	if ((long long)json_array_size(a) > runs)
		return err_set(ERR_INVALID, "field 'samples' holds %zu runs of a task of %lld",
			       json_array_size(a), runs);
	json_array_foreach(a, i, s) {
		const char *unit, *error;
		double v;

		if (!json_is_object(s) || jsonx_num(&v, s, "value", 0, 1e300, 1, 0) < 0 ||
		    jsonx_str(&unit, s, "unit", 31, 1, NULL) < 0 ||
		    jsonx_str(&error, s, "error", 255, 0, NULL) < 0)
			return err_set(ERR_INVALID, "field 'samples': entry %zu must be {\"value\": >= 0, "
				       "\"unit\": TEXT[, \"error\": TEXT]}", i);
	}
	return 0;
}

int journal_parse(struct journal *j, const char *text, size_t len)
{
	struct task_wire w;
	json_t *root = NULL;
	long long version;
	int rc;

	memset(j, 0, sizeof(*j));
	if ((rc = jsonx_parse_object(&root, text, len, JOURNAL_MAX)) < 0)
		return rc;
	if ((rc = jsonx_int(&version, root, "version", 1, 1000, 1, 0)) < 0)
		goto out;
	if (version != JOURNAL_VERSION) {
		rc = err_set(ERR_INVALID, "journal version %lld (this agent writes %d)", version, JOURNAL_VERSION);
		goto out;
	}
	if ((rc = jsonx_int(&j->task, root, "task", 1, 1LL << 53, 1, 0)) < 0 ||
	    (rc = jsonx_int(&j->attempt, root, "attempt", 1, TASKWIRE_MAX_ATTEMPT, 1, 0)) < 0 ||
	    (rc = jsonx_int(&j->lease, root, "lease", 0, 7 * 86400, 1, 0)) < 0 ||
	    (rc = jsonx_int(&j->deadline, root, "deadline", 1, 1LL << 40, 1, 0)) < 0 ||
	    (rc = jsonx_str(&j->state, root, "state", 16, 1, NULL)) < 0 ||
	    (rc = jsonx_str(&j->commit, root, "commit", 40, 1, NULL)) < 0 ||
	    (rc = jsonx_str(&j->image, root, "image", MAX_PATH, 1, NULL)) < 0 ||
	    (rc = jsonx_str(&j->build_id, root, "build_id", JOURNAL_BUILD_ID_LEN, 1, NULL)) < 0 ||
	    (rc = jsonx_str(&j->release, root, "release", 64, 1, NULL)) < 0 ||
	    (rc = jsonx_str(&j->cmdline, root, "cmdline", MAX_LINE, 1, NULL)) < 0 ||
	    (rc = jsonx_str(&j->srcdir, root, "srcdir", MAX_PATH, 1, NULL)) < 0 ||
	    (rc = jsonx_str(&j->from_boot, root, "from_boot", MAX_BOOT_ID, 1, NULL)) < 0 ||
	    (rc = jsonx_str(&j->run_boot, root, "run_boot", MAX_BOOT_ID, 1, NULL)) < 0 ||
	    (rc = jsonx_str(&j->good_cmdline, root, "good_cmdline", MAX_LINE, 1, NULL)) < 0)
		goto out;
	if (strcmp(j->state, JOURNAL_KEXEC) && strcmp(j->state, JOURNAL_RUNNING)) {
		rc = err_set(ERR_INVALID, "field 'state' must be '%s' or '%s', not '%s'", JOURNAL_KEXEC,
			     JOURNAL_RUNNING, j->state);
		goto out;
	}
	if (!is_sha1_hex(j->commit) || !journal_build_id_ok(j->build_id) || j->image[0] != '/' ||
	    j->srcdir[0] != '/' || !j->from_boot[0]) {
		rc = err_set(ERR_INVALID, "fields 'commit' (40 hex), 'build_id' (%d hex), 'image' and "
			     "'srcdir' (absolute paths) and 'from_boot' (a boot id) must be set",
			     JOURNAL_BUILD_ID_LEN);
		goto out;
	}
	if (!strcmp(j->state, JOURNAL_RUNNING) && !j->run_boot[0]) {
		rc = err_set(ERR_INVALID, "a journal in state '%s' needs 'run_boot'", JOURNAL_RUNNING);
		goto out;
	}
	/* The claim must be the task the journal says, and one the agent can run. */
	j->claim = json_object_get(root, "claim");
	if (!json_is_object(j->claim)) {
		rc = err_set(ERR_INVALID, "field 'claim' must be the claim reply (an object)");
		goto out;
	}
	if ((rc = taskwire_decode(&w, j->claim)) < 0) {
		rc = err_set(ERR_INVALID, "field 'claim': %s", err_msg());
		goto out;
	}
	if (w.task != j->task || w.attempt != j->attempt || strcmp(w.commit, j->commit)) {
		rc = err_set(ERR_INVALID, "field 'claim' is task %lld attempt %lld of %.12s, the journal's "
			     "task %lld attempt %lld of %.12s", w.task, w.attempt, w.commit, j->task, j->attempt,
			     j->commit);
		goto out;
	}
	j->samples = json_object_get(root, "samples");
	if ((rc = samples_ok(j->samples, w.runs)) < 0)
		goto out;
	j->root = root;
	root = NULL;
out:
	json_decref(root);
	if (rc < 0)
		memset(j, 0, sizeof(*j));
	return rc;
}

int journal_load(struct journal *j, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(j, 0, sizeof(*j));
	if ((rc = file_read(&text, &len, path, JOURNAL_MAX)) < 0)
		return rc;
	if ((rc = journal_parse(j, text, len)) < 0)
		rc = err_set(rc, "%s: %s", path, err_msg());
	free(text);
	return rc;
}

/* A rename or an unlink is durable once its folder is synced. */
static int sync_dir(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int fd, rc = 0;

	if (slash && slash != dir)
		*slash = '\0';
	else
		strcpy(dir, slash ? "/" : ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		rc = err_set(ERR_FAIL, "sync %s: %s", dir, strerror(errno));
	if (fd >= 0)
		close(fd);
	free(dir);
	return rc;
}

int journal_save(const char *path, json_t *doc)
{
	struct journal check;
	char *text = json_dumps(doc, JSON_COMPACT), *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int rc;

	if (!text) {
		rc = err_set(ERR_INVALID, "journal: cannot encode");
		goto out;
	}
	/* What is written is what the next boot will read: refuse it now rather than then. */
	if ((rc = journal_parse(&check, text, strlen(text))) < 0) {
		rc = err_set(rc, "journal: %s", err_msg());
		goto out;
	}
	journal_release(&check);
	if (slash && slash != dir) {
		*slash = '\0';
		if ((rc = mkdir_p(dir, 0755)) < 0)
			goto out;
	}
	if ((rc = file_write_atomic(path, text, strlen(text))) < 0 || (rc = sync_dir(path)) < 0)
		goto out;
out:
	free(text);
	free(dir);
	return rc;
}

int journal_clear(const char *path)
{
	if (unlink(path) < 0) {
		if (errno == ENOENT)
			return 0;
		return err_set(ERR_FAIL, "%s: %s", path, strerror(errno));
	}
	return sync_dir(path);
}

int journal_set_aside(const char *path)
{
	char *to = xasprintf("%s.bad", path);
	int rc = 0;

	if (rename(path, to) < 0)
		rc = err_set(ERR_FAIL, "rename %s: %s", path, strerror(errno));
	else
		rc = sync_dir(path);
	free(to);
	return rc;
}

void journal_release(struct journal *j)
{
	json_decref(j->root);
	memset(j, 0, sizeof(*j));
}
