/*
 * jsonx: validated access to JSON from the network (jansson), so handlers
 * read fields in one line each and every bound is checked in one place.
 *
 * The getters set an ERR_INVALID message naming the field and return it.
 */
#ifndef BISECT_JSONX_H
#define BISECT_JSONX_H

#include <jansson.h>
#include <stddef.h>

/* Parses a body of at most max bytes that must be a JSON object. */
int jsonx_parse_object(json_t **out, const char *body, size_t len, size_t max);

/*
 * A string field of at most maxlen bytes, no control characters. When the
 * field is absent: *out = def and 0 if !required, else ERR_INVALID.
 * *out is borrowed from obj.
 */
int jsonx_str(const char **out, json_t *obj, const char *key, size_t maxlen,
	      int required, const char *def);
/* An integer field within [min, max]. */
int jsonx_int(long long *out, json_t *obj, const char *key, long long min, long long max,
	      int required, long long def);
/* A number field (integer or real) within [min, max], finite. */
int jsonx_num(double *out, json_t *obj, const char *key, double min, double max,
	      int required, double def);

/* The first object of array arr whose integer field key is v; NULL when none. Borrowed. */
json_t *jsonx_find(json_t *arr, const char *key, long long v);

/*
 * How many objects of array arr have the number field key within 1e-9
 * (relative) of arr[i]'s, i included; *first is 1 when none of them comes
 * before i.
 */
size_t jsonx_count_near(json_t *arr, size_t i, const char *key, int *first);

/* Dumps compactly; caller frees. */
char *jsonx_dump(const json_t *j);

#endif
