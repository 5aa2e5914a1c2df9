/*
 * jsonx: jansson at the network border. Bodies are bounded before they
 * are parsed, and every field a handler reads goes through one getter that
 * checks its type and bounds and names the field when it refuses it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jsonx.h"
#include "util.h"

int jsonx_parse_object(json_t **out, const char *body, size_t len, size_t max)
{
	json_error_t jerr;
	json_t *j;

	*out = NULL;
	if (len > max)
		return err_set(ERR_INVALID, "request body is larger than %zu bytes", max);
	/*
	 * Duplicate keys are refused: two "good" fields would otherwise be read
	 * as whichever jansson kept, not what the sender meant. Any value is
	 * decoded so that "5" is told it is not an object, not that it is not JSON.
	 */
	j = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!j)
		return err_set(ERR_INVALID, "request body is not valid JSON: %s at line %d column %d",
			       jerr.text, jerr.line, jerr.column);
	if (!json_is_object(j)) {
		json_decref(j);
		return err_set(ERR_INVALID, "request body must be a JSON object");
	}
	*out = j;
	return 0;
}

/* null counts as absent: clients often send {"pool": null} for "the default". */
static json_t *field(json_t *obj, const char *key)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_null(v) ? NULL : v;
}

int jsonx_str(const char **out, json_t *obj, const char *key, size_t maxlen,
	      int required, const char *def)
{
	json_t *v = field(obj, key);
	const char *s;
	size_t len;

	*out = def;
	if (!v) {
		if (required)
			return err_set(ERR_INVALID, "field '%s' is required", key);
		return 0;
	}
	if (!json_is_string(v))
		return err_set(ERR_INVALID, "field '%s' must be a string of at most %zu characters",
			       key, maxlen);
	s = json_string_value(v);
	len = json_string_length(v);
	if (len > maxlen)
		return err_set(ERR_INVALID, "field '%s' must be a string of at most %zu characters",
			       key, maxlen);
	/* These strings reach log lines, file names and git: no hidden bytes. */
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20 || ch == 0x7f)
			return err_set(ERR_INVALID, "field '%s' must not contain control characters", key);
	}
	*out = s;
	return 0;
}

int jsonx_int(long long *out, json_t *obj, const char *key, long long min, long long max,
	      int required, long long def)
{
	json_t *v = field(obj, key);
	long long n;

	*out = def;
	if (!v) {
		if (required)
			return err_set(ERR_INVALID, "field '%s' is required", key);
		return 0;
	}
	if (!json_is_integer(v))
		return err_set(ERR_INVALID, "field '%s' must be an integer from %lld to %lld", key, min, max);
	n = (long long)json_integer_value(v);
	if (n < min || n > max)
		return err_set(ERR_INVALID, "field '%s' must be an integer from %lld to %lld, not %lld",
			       key, min, max, n);
	*out = n;
	return 0;
}

int jsonx_num(double *out, json_t *obj, const char *key, double min, double max,
	      int required, double def)
{
	json_t *v = field(obj, key);
	double d;

	*out = def;
	if (!v) {
		if (required)
			return err_set(ERR_INVALID, "field '%s' is required", key);
		return 0;
	}
	if (!json_is_number(v))
		return err_set(ERR_INVALID, "field '%s' must be a number from %g to %g", key, min, max);
	d = json_number_value(v);
	if (!isfinite(d) || d < min || d > max)
		return err_set(ERR_INVALID, "field '%s' must be a number from %g to %g, not %g",
			       key, min, max, d);
	*out = d;
	return 0;
}

char *jsonx_dump(const json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));

	/* With JSON_ENCODE_ANY the only failure left is memory. */
	if (!s) {
		fputs("out of memory\n", stderr);
		abort();
	}
	return s;
}

size_t jsonx_count_near(json_t *arr, size_t i, const char *key, int *first)
{
	double v = json_number_value(json_object_get(json_array_get(arr, i), key));
	size_t n = 0, j;
	json_t *x;

	*first = 1;
	json_array_foreach(arr, j, x)
		if (fabs(json_number_value(json_object_get(x, key)) - v) <= 1e-9 * fabs(v)) {
			n++;
			*first = *first && j >= i;
		}
	return n;
}

json_t *jsonx_find(json_t *arr, const char *key, long long v)
{
	json_t *x;
	size_t i;

	json_array_foreach(arr, i, x)
		if (json_is_integer(json_object_get(x, key)) && json_integer_value(json_object_get(x, key)) == v)
			return x;
	return NULL;
}
