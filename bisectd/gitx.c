/* gitx: libgit2's initialisation and error translation, once. */
#include <git2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "err.h"
#include "gitx.h"

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
