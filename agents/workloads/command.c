/*
 * command: any program from the coordinator's config, run on the agent
 * (boot none); the metric is the first group of a regex over its stdout.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "util.h"
#include "workload.h"

#define MAX_PATTERN 1024
#define DEFAULT_UNIT "ops/s"

static const struct workload_key keys[] = {
	{ "command", WKEY_ARGV, 0, 0 },
	{ "pattern", WKEY_STR, 0, 0 },
	{ "unit", WKEY_STR, 0, 0 },
	{ NULL, 0, 0, 0 },
};

static int check(json_t *def, struct workload_bad *bad)
{
	json_t *cmd = json_object_get(def, "command");
	const char *pattern = json_string_value(json_object_get(def, "pattern"));
	const char **argv = NULL;
	regex_t re;
	char why[128];
	int ec, rc;

	bad->item = -1;
	bad->key = "command";
	if (!cmd || json_is_null(cmd)) {
		bad->missing = 1;
		return err_set(ERR_INVALID, "required for type command: the argv of one run");
	}
	if (json_array_size(cmd) == 0)
		return err_set(ERR_INVALID, " must not be empty");
	if ((rc = workload_def_argv(&argv, def, "command")) < 0)
		return err_set(rc, " must be an argv whose first string is not empty");
	free(argv);
	bad->key = "pattern";
	if (!pattern) {
		bad->missing = 1;
		return err_set(ERR_INVALID, "required for type command: a regex whose first group is the metric");
	}
	if (!*pattern || strlen(pattern) > MAX_PATTERN)
		return err_set(ERR_INVALID, " must be a regex of 1 to %d bytes", MAX_PATTERN);
	ec = regcomp(&re, pattern, REG_EXTENDED);
	if (ec != 0) {
		regerror(ec, &re, why, sizeof(why));
		return err_set(ERR_INVALID, " does not compile as an extended regex: %s", why);
	}
	rc = re.re_nsub < 1 ? err_set(ERR_INVALID, " must have a group ( ) around the metric, as in "
				      "'ops: ([0-9.]+)'") : 0;
	regfree(&re);
	if (rc)
		return rc;
	bad->key = NULL;
	if (!workload_def_str(def, "unit", NULL))
		json_object_set_new(def, "unit", json_string(DEFAULT_UNIT));
	return 0;
}

static int argv_of(const char ***argv, json_t *def)
{
	return workload_def_argv(argv, def, "command");
}

static void parse(struct run_sample *s, json_t *def, const struct run_output *o)
{
	const char *pattern = workload_def_str(def, "pattern", NULL);
	const char *prog = json_string_value(json_array_get(json_object_get(def, "command"), 0));
	double v;

	memset(s, 0, sizeof(*s));
	snprintf(s->unit, sizeof(s->unit), "%s", workload_def_str(def, "unit", DEFAULT_UNIT));
	if (!prog)
		prog = "command";
	if (!o->ok) {
		char line[160];

		if (o->err_len)
			str_last_line(line, sizeof(line), o->err, o->err_len);
		else
			str_last_line(line, sizeof(line), o->out ? o->out : "", o->out ? o->out_len : 0);
		if (*line)
			workload_sample_fail(s, "%s: %s: %s", prog, o->how, line);
		else
			workload_sample_fail(s, "%s: %s", prog, o->how);
	} else if (!pattern) {
		workload_sample_fail(s, "workload: 'pattern' is missing");
	} else if (workload_metric_from_text(&v, o->out ? o->out : "", pattern) < 0) {
		workload_sample_fail(s, "%s", err_msg());
	} else {
		s->value = v;
	}
}

/* The argv as given, each word single-quoted; argv[0] a full guest path. */
static int script(struct sbuf *sb, json_t *def, const char *const *paths)
{
	const char **argv = NULL;
	int rc;

	(void)paths;
	if ((rc = workload_def_argv(&argv, def, "command")) < 0)
		return rc;
	if (!workload_guest_path_ok(argv[0])) {
		free(argv);
		return err_set(ERR_INVALID, "qemu: a command workload needs argv[0] as a full guest path");
	}
	sbuf_adds(sb, "run_once() {\n");
	workload_sh_need_tool(sb, argv[0], argv[0]);
	sbuf_add(sb, "\t", 1);
	workload_sh_quote_argv(sb, argv);
	sbuf_adds(sb, "\n}\n");
	free(argv);
	return 0;
}

/*
 * On the agent only, for now: in a guest argv[0] would need to be a guest
 * path, which the coordinator's config does not say yet.
 */
const struct workload_ops workload_command = {
	.name = "command",
	.places = WORKLOAD_HOST,
	.keys = keys,
	.about = "any program; the metric is read from its output by a regex",
	.check = check,
	.argv = argv_of,
	.script = script,
	.parse = parse,
};
