/*
 * bisectctl_out: what every command prints with: JSON as the API sent it,
 * a field or its default, short ids, local times, durations, p-values, and
 * tables whose columns are as wide as their widest cell.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "bisectctl_internal.h"
#include "util.h"

void ctl_print_usage(FILE *f, const struct cmd *c)
{
	fprintf(f, "usage: bisectctl [--server URL] [--json] %s %s\n", c->name, c->args);
	if (c->help)
		fprintf(f, "\n%s", c->help);
}

int ctl_usage_error(const struct cmd *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bisectctl: %s: ", c->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: bisectctl %s %s (see 'bisectctl %s --help')\n",
		c->name, c->args, c->name);
	return RC_USAGE;
}

void ctl_print_json(const json_t *j, size_t flags)
{
	char *s = j ? json_dumps(j, flags | JSON_ENCODE_ANY) : NULL;

	puts(s ? s : "null");
	free(s);
	fflush(stdout);
}

const char *ctl_jstr(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *ctl_jstr_or(const json_t *o, const char *key, const char *def)
{
	const char *s = ctl_jstr(o, key);

	return s ? s : def;
}

long long ctl_jint(const json_t *o, const char *key, long long def)
{
	json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v) && isfinite(json_real_value(v)))
		return (long long)json_real_value(v);
	return def;
}

/* 1 and *out when key holds a finite number. */
int ctl_jnum(double *out, const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return 0;
	*out = json_number_value(v);
	return 1;
}

void ctl_short_sha(char out[13], const char *sha)
{
	snprintf(out, 13, "%.12s", sha && *sha ? sha : "-");
}

/* A job's culprit as a short sha, whatever shape the field has. */
void ctl_culprit_sha(char out[13], const json_t *job)
{
	json_t *c = json_object_get(job, "culprit");

	if (json_is_string(c))
		ctl_short_sha(out, json_string_value(c));
	else if (json_is_object(c))
		ctl_short_sha(out, ctl_jstr(c, "sha"));
	else
		ctl_short_sha(out, NULL);
}

void ctl_local_time(char *buf, size_t n, long long t, const char *fmt)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || !localtime_r(&tt, &tm)) {
		snprintf(buf, n, "-");
		return;
	}
	strftime(buf, n, fmt, &tm);
}

void ctl_fmt_duration(char *buf, size_t n, long long s)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, n, "%llds", s);
	else if (s < 3600)
		snprintf(buf, n, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, n, "%lldh%02lldm", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, n, "%lldd%02lldh", s / 86400, s % 86400 / 3600);
}

void ctl_fmt_p(char *buf, size_t n, double p)
{
	snprintf(buf, n, p < 0.0001 ? "%.1e" : "%.4f", p);
}

void ctl_table_row(struct table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->cells = xrealloc(t->cells, t->cap * t->ncols * sizeof(*t->cells));
	}
	for (size_t i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = xstrdup(cells[i] ? cells[i] : "-");
	t->nrows++;
}

void ctl_table_print(const struct table *t)
{
	size_t *w = xcalloc(t->ncols, sizeof(*w));

	for (size_t r = 0; r < t->nrows; r++)
		for (size_t i = 0; i < t->ncols; i++) {
			size_t l = strlen(t->cells[r * t->ncols + i]);

			if (l > w[i])
				w[i] = l;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t i = 0; i < t->ncols; i++) {
			const char *s = t->cells[r * t->ncols + i];

			if (i + 1 == t->ncols)
				printf("%s\n", s);
			else
				printf("%-*s  ", (int)w[i], s);
		}
	}
	free(w);
}

void ctl_table_release(struct table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

void ctl_time_cell(char *buf, size_t n, long long t)
{
	if (t > 0) {
		ctl_fmt_duration(buf, n - 4, now_unix() - t);
		strcat(buf, " ago");
	} else {
		snprintf(buf, n, "never");
	}
}
