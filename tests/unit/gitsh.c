/* gitsh: mkrepo.sh steps for the git tests. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gitsh.h"
#include "run.h"
#include "util.h"

static char *mkrepo_path;

int gitsh_init(void)
{
	char buf[PATH_MAX];
	const char *cands[3];
	const char *slash = strrchr(__FILE__, '/');
	char *rel = slash ? xasprintf("%.*s/../lib/mkrepo.sh", (int)(slash - __FILE__), __FILE__)
			  : xstrdup("../lib/mkrepo.sh");

	cands[0] = getenv("MKREPO");
	cands[1] = "tests/lib/mkrepo.sh";
	cands[2] = rel;
	for (int i = 0; i < 3 && !mkrepo_path; i++)
		if (cands[i] && realpath(cands[i], buf))
			mkrepo_path = xstrdup(buf);
	free(rel);
	return mkrepo_path ? 0 : -1;
}

void gitsh_release(void)
{
	free(mkrepo_path);
	mkrepo_path = NULL;
}

static char *vgitsh(const char *dir, const char *fmt, va_list ap)
{
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	const char *argv[4];
	char *body, *script, *out, *nl;

	if (vasprintf(&body, fmt, ap) < 0)
		abort();
	script = xasprintf("set -e; . '%s'; %s", mkrepo_path, body);
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = script;
	argv[3] = NULL;
	o.argv = argv;
	o.cwd = dir;
	o.timeout_ms = 60000;
	assert_int_equal(run_cmd(&res, &o), 0);
	if (!run_ok(&res))
		fail_msg("shell step failed: %s\n%s", body, res.err);
	out = xstrdup(res.out);
	if ((nl = strrchr(out, '\n')) && nl[1] == '\0')
		*nl = '\0';
	if ((nl = strrchr(out, '\n')))
		memmove(out, nl + 1, strlen(nl));
	run_result_release(&res);
	free(script);
	free(body);
	return out;
}

char *gitsh(const char *dir, const char *fmt, ...)
{
	va_list ap;
	char *out;

	va_start(ap, fmt);
	out = vgitsh(dir, fmt, ap);
	va_end(ap);
	return out;
}

void gitsh0(const char *dir, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	free(vgitsh(dir, fmt, ap));
	va_end(ap);
}
