/*
 * boot: a boot method's ops by name (the table is methods.c's).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot.h"
#include "err.h"
#include "run.h"
#include "methods.h"
#include "perfreport.h"
#include "util.h"

const struct boot_ops *boot_find(const char *name)
{
	const struct boot_method *m = boot_method_find(name);

	return m ? m->ops : NULL;
}

void boot_result_release(struct boot_result *r)
{
	free(r->log_tail);
	free(r->console);
	free(r->profile);
	memset(r, 0, sizeof(*r));
}

int boot_fail(struct boot_result *r, const char *status, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return ERR_FAIL;
}

int boot_workload_argv(const char ***argv, const struct boot_task *t)
{
	int rc = t->wl->argv(argv, t->def);

	if (rc == 0 && t->perf_data) {
		const char **rec = perfreport_record_argv(*argv, t->perf_data);

		free(*argv);
		*argv = rec;
	}
	return rc;
}

void boot_parse_output(struct run_sample *s, const struct boot_task *t, const struct run_result *res)
{
	struct run_output out;
	char how[64];

	memset(&out, 0, sizeof(out));
	out.out = res->out ? res->out : "";
	out.out_len = res->out ? res->out_len : 0;
	out.err = res->err;
	out.err_len = res->err ? res->err_len : 0;
	out.ok = run_ok(res);
	out.rc = res->exited ? res->status : -1;
	out.how = out.ok ? "" : run_describe(res, how, sizeof(how));
	t->wl->parse(s, t->def, &out);
}

int boot_profile_text(char **text, const struct boot_ops *ops, void *session, const struct boot_task *t,
		      const struct boot_result *r)
{
	*text = NULL;
	if (r->profile) {
		*text = xstrdup(r->profile);
		return 0;
	}
	if (r->profile_error[0])
		return err_set(ERR_FAIL, "%s", r->profile_error);
	if (!ops->report)
		return 1;
	return ops->report(text, session, t) < 0 ? ERR_FAIL : 0;
}
