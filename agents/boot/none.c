/*
 * none: the build output runs on the agent itself; each run is the
 * workload's argv in the work tree, pinned to the agent's CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot.h"
#include "err.h"
#include "run.h"
#include "util.h"

#define RUN_OUTPUT_MAX (4 << 20)
#define DEFAULT_RUN_TIMEOUT 300

static int prepare(const struct boot_task *t)
{
	const char **argv = NULL;
	int rc;

	if ((rc = t->wl->argv(&argv, t->def)) < 0)
		return rc;
	/* With a '/', the program may be a build output yet. */
	if (!in_path(argv[0]))
		rc = err_set(ERR_NOTFOUND, "workload: program '%s' not found in PATH on this agent",
			     argv[0]);
	free(argv);
	return rc;
}

static int start(void **session, struct boot_result *r, const struct boot_task *t)
{
	(void)t;
	memset(r, 0, sizeof(*r));
	*session = NULL;
	r->status = "ok";
	return 0;
}

static int timeout_ms(json_t *def)
{
	json_t *v = json_object_get(def, "run_timeout");
	json_int_t s = json_is_integer(v) ? json_integer_value(v) : DEFAULT_RUN_TIMEOUT;

	if (s <= 0 || s > 7 * 24 * 3600)
		s = DEFAULT_RUN_TIMEOUT;
	return (int)s * 1000;
}

static int run(struct run_sample *s, void *session, const struct boot_task *t, int i)
{
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	const char **argv = NULL;
	int rc;

	(void)session;
	(void)i;
	memset(s, 0, sizeof(*s));
	if ((rc = boot_workload_argv(&argv, t)) < 0)
		return rc;
	o.argv = argv;
	o.cwd = t->srcdir;
	o.cpu = t->cpu;
	o.timeout_ms = timeout_ms(t->def);
	o.cancel = t->cancel;
	o.max_output = RUN_OUTPUT_MAX;
	if (run_cmd(&res, &o) < 0) {
		/* Could not fork or pipe: this run failed, the agent goes on. */
		snprintf(s->unit, sizeof(s->unit), "%s", workload_def_str(t->def, "unit", "ops/s"));
		workload_sample_fail(s, "cannot run %s: %s", argv[0], err_msg());
		free(argv);
		return 0;
	}
	boot_parse_output(s, t, &res);
	run_result_release(&res);
	free(argv);
	return 0;
}

static void stop(void *session, const struct boot_task *t)
{
	(void)session;
	(void)t;
}

const struct boot_ops boot_none = {
	.name = "none",
	.what = NULL,
	.prepare = prepare,
	.start = start,
	.run = run,
	.stop = stop,
};
