/* gitx: libgit2's initialisation and error translation, once. */
#include <git2.h>
#include <pthread.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "err.h"
#include "gitx.h"
#include "util.h"

static pthread_once_t git_once = PTHREAD_ONCE_INIT;

static void init_once(void)
{
	git_libgit2_init();
}

void gitx_init(void)
{
	pthread_once(&git_once, init_once);
}

int gitx_fail(int gitcode, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	char what[512];
	va_list ap;
	int code;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	switch (gitcode) {
	case GIT_ENOTFOUND: code = ERR_NOTFOUND; break;
	case GIT_EEXISTS: code = ERR_EXISTS; break;
	case GIT_EAMBIGUOUS:
	case GIT_EINVALIDSPEC: code = ERR_INVALID; break;
	case GIT_ELOCKED: code = ERR_BUSY; break;
	default: code = ERR_FAIL; break;
	}
	return err_set(code, "%s: %s", what, e && e->message ? e->message : "libgit2 error");
}

int gitx_set_origin(git_repository *git, const char *path, const char *url, const char *fetchspec)
{
	git_config *cfg = NULL;
	git_buf old = GIT_BUF_INIT;
	int rc;

	rc = git_repository_config(&cfg, git);
	if (rc < 0) {
		rc = gitx_fail(rc, "cannot read the config of %s", path);
		goto out;
	}
	if (git_config_get_string_buf(&old, cfg, "remote.origin.url") == 0 && !strcmp(old.ptr, url))
		goto out;
	git_error_clear();
	rc = git_config_set_string(cfg, "remote.origin.url", url);
	if (rc == 0)
		rc = git_config_set_string(cfg, "remote.origin.fetch", fetchspec);
	if (rc == 0)
		rc = git_config_set_string(cfg, "remote.origin.tagOpt", "--tags");
	if (rc < 0)
		rc = gitx_fail(rc, "cannot write remote origin of %s", path);
out:
	git_buf_dispose(&old);
	git_config_free(cfg);
	return rc;
}

/* This thread's progress hook, and the last line it was given. */
static __thread struct {
	void (*fn)(void *arg, const char *text);
	void *arg;
	char last[96];
} progress;

void gitx_set_progress(void (*fn)(void *arg, const char *text), void *arg)
{
	progress.fn = fn;
	progress.arg = arg;
	progress.last[0] = '\0';
}

/* n with thousands separators ("10,519,014") into buf. */
static void group3(char *buf, size_t len, size_t n)
{
	char digits[32];
	int nd = snprintf(digits, sizeof(digits), "%zu", n), o = 0;

	for (int i = 0; i < nd && (size_t)o + 2 < len; i++) {
		if (i > 0 && (nd - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
}

/* Says "what, P% [of total]" when it differs from what was said last; P in steps of 10. */
static void say_progress(const char *what, size_t done, size_t total, int show_total)
{
	char text[sizeof(progress.last)], tot[32];
	unsigned pct;

	if (!progress.fn || total == 0)
		return;
	pct = (unsigned)((double)done / (double)total * 10) * 10;
	group3(tot, sizeof(tot), total);
	if (show_total)
		snprintf(text, sizeof(text), "%s, %u%% of %s", what, pct, tot);
	else
		snprintf(text, sizeof(text), "%s, %u%%", what, pct);
	if (strcmp(text, progress.last)) {
		memcpy(progress.last, text, sizeof(text));
		progress.fn(progress.arg, text);
	}
}

static int transfer_progress(const git_indexer_progress *s, void *payload)
{
	(void)payload;
	if (s->received_objects < s->total_objects)
		say_progress("receiving objects", s->received_objects, s->total_objects, 1);
	else if (s->indexed_deltas < s->total_deltas)
		say_progress("resolving deltas", s->indexed_deltas, s->total_deltas, 0);
	return 0;
}

static void checkout_progress(const char *path, size_t done, size_t total, void *payload)
{
	(void)path;
	(void)payload;
	if (done < total)
		say_progress("checking out files", done, total, 1);
}

void gitx_checkout_progress(git_checkout_options *co)
{
	if (progress.fn)
		co->progress_cb = checkout_progress;
}

int gitx_fetch(git_remote **out, git_repository *git, const char *path, const char *url,
	       char **specs, size_t n, const char *reflog_message)
{
	git_remote_create_options ro;
	git_remote *remote = NULL;
	git_fetch_options fo;
	git_strarray sa = { specs, n };
	int rc;

	if (out)
		*out = NULL;
	git_remote_create_options_init(&ro, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	ro.repository = git;
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	rc = git_remote_create_with_opts(&remote, url, &ro);
	if (rc < 0) {
		rc = gitx_fail(rc, "cannot fetch '%s' into %s", url, path);
		goto out;
	}
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	fo.prune = GIT_FETCH_PRUNE;
	fo.proxy_opts.type = GIT_PROXY_AUTO;
	/* The tag refspec fetches every tag already; no auto-following. */
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	if (progress.fn)
		fo.callbacks.transfer_progress = transfer_progress;
	rc = git_remote_fetch(remote, &sa, &fo, reflog_message);
	if (rc < 0) {
		rc = gitx_fail(rc, "cannot fetch '%s' into %s", url, path);
		goto out;
	}
	if (out) {
		*out = remote;
		remote = NULL;
	}
out:
	git_remote_free(remote);
	return rc;
}

int gitx_clone_into(git_repository **out, const char *path, const char *url, int bare,
		    int (*fetch)(git_repository *git, const char *path, const char *url))
{
	const char *what = bare ? "mirror" : "work tree";
	char *tmp = xasprintf("%s.clone-%ld", path, (long)getpid());
	int rc;

	*out = NULL;
	remove_tree(tmp);
	rc = git_repository_init(out, tmp, bare);
	if (rc < 0) {
		rc = gitx_fail(rc, "cannot create a %s in %s", what, tmp);
		goto out;
	}
	rc = fetch(*out, path, url);
	if (rc < 0) {
		char *msg = xstrdup(err_msg());

		rc = err_set(ERR_NOTFOUND, "%s", msg);
		free(msg);
		goto out;
	}
	git_repository_free(*out);
	*out = NULL;
	if (rename(tmp, path) < 0) {
		rc = err_set(ERR_FAIL, "cannot move the new %s to %s: %s", what, path, strerror(errno));
		goto out;
	}
	rc = git_repository_open_ext(out, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (rc < 0)
		rc = gitx_fail(rc, "cannot open the new %s %s", what, path);
out:
	if (rc < 0) {
		git_repository_free(*out);
		*out = NULL;
	}
	remove_tree(tmp);
	free(tmp);
	return rc;
}
