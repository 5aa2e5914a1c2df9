/*
 * workload: the adapters that measure one run of a built commit, chosen by
 * the "type" of the task's workload definition. "command" runs an argv from
 * the coordinator's config and reads the metric from its output.
 */
#include <math.h>
#include <stdarg.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "run.h"
#include "util.h"
#include "workload.h"

#define MAX_ARGS 256
#define MAX_ARG_LEN 4096
#define MAX_PATTERN 1024
#define RUN_OUTPUT_MAX (4 << 20)
#define DEFAULT_RUN_TIMEOUT 300
#define DEFAULT_UNIT "ops/s"

int workload_metric_from_text(double *out, const char *text, const char *pattern)
{
	regex_t re;
	regmatch_t m[2];
	const regmatch_t *g;
	char *num = NULL, *end;
	double v;
	int rc, ec;

	*out = 0;
	ec = regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE);
	if (ec) {
		char why[128];

		regerror(ec, &re, why, sizeof(why));
		return err_set(ERR_INVALID, "bad pattern '%s': %s", pattern, why);
	}
	if (regexec(&re, text, 2, m, 0) != 0) {
		rc = err_set(ERR_NOTFOUND, "pattern '%s' not found in output", pattern);
		goto out;
	}
	/* Without a group the whole match is the number. */
	g = re.re_nsub >= 1 ? &m[1] : &m[0];
	if (g->rm_so < 0) {
		rc = err_set(ERR_INVALID, "pattern '%s' matched without its first group", pattern);
		goto out;
	}
	num = xstrndup(text + g->rm_so, (size_t)(g->rm_eo - g->rm_so));
	v = strtod(num, &end);
	while (*end == ' ' || *end == '\t')
		end++;
	if (end == num || *end != '\0' || !isfinite(v)) {
		rc = err_set(ERR_INVALID, "pattern '%s' matched '%.64s', not a number", pattern, num);
		goto out;
	}
	if (v <= 0) {
		rc = err_set(ERR_INVALID, "pattern '%s' matched %g, not a positive number", pattern, v);
		goto out;
	}
	*out = v;
	rc = 0;
out:
	free(num);
	regfree(&re);
	return rc;
}

/*
 * The argv of a definition's key (an array of 1..MAX_ARGS strings) as a
 * NULL-terminated array whose strings are borrowed from def; caller frees
 * the array.
 */
static int def_argv(const char ***out, json_t *def, const char *key)
{
	json_t *a = json_object_get(def, key), *v;
	const char **argv;
	size_t i;

	*out = NULL;
	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > MAX_ARGS)
		return err_set(ERR_INVALID, "workload: '%s' must be an array of 1 to %d strings",
			       key, MAX_ARGS);
	argv = xcalloc(json_array_size(a) + 1, sizeof(*argv));
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || json_string_length(v) > MAX_ARG_LEN ||
		    strlen(json_string_value(v)) != json_string_length(v) ||
		    (i == 0 && json_string_length(v) == 0)) {
			free(argv);
			return err_set(ERR_INVALID, "workload: '%s'[%zu] is not a valid argument",
				       key, i);
		}
		argv[i] = json_string_value(v);
	}
	*out = argv;
	return 0;
}

static const char *def_str(json_t *def, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(def, key));

	return s && *s ? s : dflt;
}

static int def_timeout_ms(json_t *def, const char *key, int dflt_s)
{
	json_t *v = json_object_get(def, key);
	json_int_t s = json_is_integer(v) ? json_integer_value(v) : dflt_s;

	if (s <= 0 || s > 7 * 24 * 3600)
		s = dflt_s;
	return (int)s * 1000;
}

static int command_prepare(json_t *def)
{
	const char **argv = NULL;
	const char *pattern;
	regex_t re;
	int rc, ec;

	rc = def_argv(&argv, def, "command");
	if (rc)
		goto out;
	pattern = json_string_value(json_object_get(def, "pattern"));
	if (!pattern || !*pattern || strlen(pattern) > MAX_PATTERN) {
		rc = err_set(ERR_INVALID, "workload: 'pattern' must be a regex of 1 to %d bytes",
			     MAX_PATTERN);
		goto out;
	}
	ec = regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE);
	if (ec) {
		char why[128];

		regerror(ec, &re, why, sizeof(why));
		rc = err_set(ERR_INVALID, "workload: bad pattern '%s': %s", pattern, why);
		goto out;
	}
	regfree(&re);
	if (!in_path(argv[0]))
		rc = err_set(ERR_NOTFOUND, "workload: program '%s' not found in PATH on this agent",
			     argv[0]);
out:
	free(argv);
	return rc;
}

/* The last non-empty line of s, for an error message. */
static void last_line(char *buf, size_t n, const char *s)
{
	const char *end = s + strlen(s), *start;

	while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	start = end;
	while (start > s && start[-1] != '\n')
		start--;
	snprintf(buf, n, "%.*s", (int)(end - start), start);
}

static void sample_fail(struct sample *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sample_fail(struct sample *s, const char *fmt, ...)
{
	va_list ap;

	s->value = 0;
	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
}

static int command_run(struct sample *s, json_t *def, const struct run_env *env)
{
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	const char **argv = NULL;
	const char *pattern = def_str(def, "pattern", NULL);
	double v;
	int rc;

	memset(s, 0, sizeof(*s));
	snprintf(s->unit, sizeof(s->unit), "%s", def_str(def, "unit", DEFAULT_UNIT));
	rc = def_argv(&argv, def, "command");
	if (rc)
		return rc;
	if (!pattern) {
		free(argv);
		return err_set(ERR_INVALID, "workload: 'pattern' is missing");
	}
	o.argv = argv;
	o.cwd = env->srcdir;
	o.cpu = env->cpu;
	o.timeout_ms = def_timeout_ms(def, "run_timeout", DEFAULT_RUN_TIMEOUT);
	o.max_output = RUN_OUTPUT_MAX;
	if (run_cmd(&res, &o) < 0) {
		/* Could not fork or pipe: this run failed, the agent goes on. */
		sample_fail(s, "cannot run %s: %s", argv[0], err_msg());
		free(argv);
		return 0;
	}
	if (!run_ok(&res)) {
		char how[64], line[160];

		run_describe(&res, how, sizeof(how));
		last_line(line, sizeof(line), res.err_len ? res.err : res.out);
		if (*line)
			sample_fail(s, "%s: %s: %s", argv[0], how, line);
		else
			sample_fail(s, "%s: %s", argv[0], how);
	} else if (workload_metric_from_text(&v, res.out, pattern) < 0) {
		sample_fail(s, "%s", err_msg());
	} else {
		s->value = v;
	}
	run_result_release(&res);
	free(argv);
	return 0;
}

static const struct workload_ops workloads[] = {
	{ "command", command_prepare, command_run },
};

const struct workload_ops *workload_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (!strcmp(workloads[i].name, name))
			return &workloads[i];
	return NULL;
}
