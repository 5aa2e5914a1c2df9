/*
 * workload: the checks every workload kind shares, and the small helpers
 * their files use. The table of kinds is workload_table.c, above them.
 */
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "util.h"
#include "workload.h"

#define MAX_ARGS 256
#define MAX_ARG_LEN 4096
#define MAX_STR 4096

static int key_type_ok(struct workload_bad *bad, const struct workload_key *k, json_t *v)
{
	size_t i;
	json_t *item;

	bad->key = k->name;
	bad->item = -1;
	switch (k->kind) {
	case WKEY_STR:
		if (!json_is_string(v) || json_string_length(v) > MAX_STR ||
		    strlen(json_string_value(v)) != json_string_length(v))
			return err_set(ERR_INVALID, " must be a string");
		return 0;
	case WKEY_INT:
		if (!json_is_integer(v) || json_integer_value(v) < k->min || json_integer_value(v) > k->max)
			return err_set(ERR_INVALID, " must be an integer from %lld to %lld", k->min, k->max);
		return 0;
	case WKEY_BOOL:
		if (!json_is_boolean(v))
			return err_set(ERR_INVALID, " must be true or false");
		return 0;
	case WKEY_ARGV:
		if (!json_is_array(v) || json_array_size(v) > MAX_ARGS)
			return err_set(ERR_INVALID, " must be an array of at most %d strings", MAX_ARGS);
		json_array_foreach(v, i, item) {
			if (!json_is_string(item) || json_string_length(item) > MAX_ARG_LEN ||
			    strlen(json_string_value(item)) != json_string_length(item)) {
				bad->item = (long)i;
				return err_set(ERR_INVALID, " must hold strings of at most %d bytes", MAX_ARG_LEN);
			}
		}
		return 0;
	case WKEY_LIST:
		if (json_is_string(v) && json_string_length(v) <= MAX_STR &&
		    strlen(json_string_value(v)) == json_string_length(v))
			return 0;
		if (!json_is_array(v) || json_array_size(v) > MAX_ARGS)
			return err_set(ERR_INVALID, " must be a string or an array of at most %d items", MAX_ARGS);
		json_array_foreach(v, i, item) {
			if (!json_is_integer(item) && (!json_is_string(item) || json_string_length(item) > MAX_ARG_LEN ||
			    strlen(json_string_value(item)) != json_string_length(item))) {
				bad->item = (long)i;
				return err_set(ERR_INVALID, " must hold strings or integers");
			}
		}
		return 0;
	}
	return err_set(ERR_INVALID, " has no known type");
}

int workload_check(struct workload_bad *bad, const struct workload_ops *ops, json_t *def)
{
	memset(bad, 0, sizeof(*bad));
	bad->item = -1;
	if (!json_is_object(def)) {
		bad->key = "workload";
		return err_set(ERR_INVALID, " must be an object");
	}
	for (const struct workload_key *k = ops->keys; k->name; k++) {
		json_t *v = json_object_get(def, k->name);

		if (v && !json_is_null(v) && key_type_ok(bad, k, v) < 0)
			return ERR_INVALID;
	}
	bad->key = NULL;
	return ops->check(def, bad);
}

int workload_check_msg(const struct workload_ops *ops, json_t *def)
{
	struct workload_bad bad;
	int rc = workload_check(&bad, ops, def);
	char *msg;

	if (!rc)
		return 0;
	msg = xstrdup(err_msg());
	if (bad.missing)
		err_set(rc, "workload: '%s' is missing (%s)", bad.key, msg);
	else if (bad.item >= 0)
		err_set(rc, "workload: '%s'[%ld]%s", bad.key ? bad.key : "?", bad.item, msg);
	else
		err_set(rc, "workload: '%s'%s", bad.key ? bad.key : "?", msg);
	free(msg);
	return rc;
}

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

int workload_def_argv(const char ***out, json_t *def, const char *key)
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

const char *workload_def_str(json_t *def, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(def, key));

	return s && *s ? s : dflt;
}

void workload_sample_fail(struct run_sample *s, const char *fmt, ...)
{
	va_list ap;

	s->value = 0;
	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
}

void workload_sh_quote(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, "'", 1);
	for (; *s; s++) {
		if (*s == '\'')
			sbuf_adds(sb, "'\\''");
		else
			sbuf_add(sb, s, 1);
	}
	sbuf_add(sb, "'", 1);
}

void workload_sh_quote_argv(struct sbuf *sb, const char *const *argv)
{
	for (size_t n = 0; argv[n]; n++) {
		if (n)
			sbuf_add(sb, " ", 1);
		workload_sh_quote(sb, argv[n]);
	}
}

void workload_sh_need_tool(struct sbuf *sb, const char *path, const char *what)
{
	char *msg = xasprintf("%s not found in the guest: the initramfs lacks %s", path, what);

	sbuf_adds(sb, "\tif [ ! -x ");
	workload_sh_quote(sb, path);
	sbuf_adds(sb, " ]; then\n\t\techo ");
	workload_sh_quote(sb, msg);
	sbuf_adds(sb, " >&2\n\t\treturn 127\n\tfi\n");
	free(msg);
}

int workload_guest_path_ok(const char *p)
{
	return p && p[0] == '/' && strlen(p) < 256 && !strchr(p, '\n');
}

int workload_only(const char *s, const char *alphabet, size_t maxlen)
{
	return s && *s && strlen(s) <= maxlen && strspn(s, alphabet) == strlen(s);
}

void workload_note_exit(struct run_sample *s, const struct run_output *o)
{
	if (s->value <= 0 && o->rc > 0) {
		size_t n = strlen(s->error);

		snprintf(s->error + n, sizeof(s->error) - n, " (exit %d)", o->rc);
	}
}
