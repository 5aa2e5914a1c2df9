/*
 * conf_read: a mapping's keys read into C values, each checked against
 * what its mapping may hold and its type, every message placed at the
 * file, line and column it is about.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_internal.h"
#include "err.h"

/* Every config message starts with the position it is about. */
__attribute__((format(printf, 3, 4)))
int conf_at(const struct ctx *x, const struct ynode *n, const char *fmt, ...)
{
	char msg[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(ERR_INVALID, "%s:%d:%d: %s", x->name, n ? n->line : 1, n ? n->col : 1, msg);
}

int conf_check_keys(const struct ctx *x, const struct ynode *map, const char *const *allowed,
		    const char *where)
{
	if (!map || map->kind != YNODE_MAP)
		return 0;
	for (size_t i = 0; i < map->nr; i++) {
		const struct ynode *k = map->keys[i];
		struct sbuf list = SBUF_INIT;
		int found = 0, rc;

		for (const char *const *a = allowed; *a; a++)
			if (!strcmp(k->str, *a))
				found = 1;
		if (found)
			continue;
		for (const char *const *a = allowed; *a; a++)
			sbuf_addf(&list, "%s%s", a == allowed ? "" : ", ", *a);
		rc = conf_at(x, k, "unknown key '%s'%s (expected one of: %s)", k->str, where, list.buf);
		sbuf_release(&list);
		return rc;
	}
	return 0;
}

/* Names end up in URLs, file names and log lines: keep them plain. */
int conf_name_ok(const char *s, size_t len, const char *extra)
{
	if (len < 1 || len > NAME_MAX_LEN || strlen(s) != len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]) &&
		    !(extra && strchr(extra, s[i])))
			return 0;
	return 1;
}

/* A non-empty string scalar; NULL in YAML is refused unless allow_null. */
static int scalar_ok(const struct ctx *x, const struct ynode *v, const char *key,
		     const char *where, const char *expect)
{
	if (v->kind != YNODE_SCALAR)
		return conf_at(x, v, "'%s'%s must be %s, not %s", key, where, expect, ynode_kind_name(v->kind));
	if (ynode_is_null(v) || v->len == 0)
		return conf_at(x, v, "'%s'%s must be %s, not empty", key, where, expect);
	if (strlen(v->str) != v->len)
		return conf_at(x, v, "'%s'%s must not contain NUL characters", key, where);
	return 0;
}

/*
 * Replaces *dst with the string value of key when present. When allow_null,
 * an empty value sets *dst to NULL (e.g. "measure_lock:" for none).
 */
int conf_get_str(char **dst, const struct ctx *x, const struct ynode *map, const char *key,
		 const char *where, int allow_null)
{
	const struct ynode *v = ynode_get(map, key);
	int rc;

	if (!v)
		return 0;
	if (allow_null && ynode_is_null(v)) {
		free(*dst);
		*dst = NULL;
		return 0;
	}
	if ((rc = scalar_ok(x, v, key, where, "a string")) < 0)
		return rc;
	free(*dst);
	*dst = xstrdup(v->str);
	return 0;
}

int conf_get_ll(long long *dst, const struct ctx *x, const struct ynode *map, const char *key,
		const char *where, long long min, long long max)
{
	const struct ynode *v = ynode_get(map, key);
	char expect[96];
	char *end;
	long long n;
	int rc;

	if (!v)
		return 0;
	snprintf(expect, sizeof(expect), "an integer from %lld to %lld", min, max);
	if ((rc = scalar_ok(x, v, key, where, expect)) < 0)
		return rc;
	errno = 0;
	n = strtoll(v->str, &end, 10);
	/* strtoll would take " 5" and "+5"; a config value is digits only. */
	if (!(isdigit((unsigned char)v->str[0]) || (v->str[0] == '-' && isdigit((unsigned char)v->str[1]))) ||
	    *end || errno == ERANGE || n < min || n > max)
		return conf_at(x, v, "'%s'%s must be %s, not '%s'", key, where, expect, v->str);
	*dst = n;
	return 0;
}

int conf_get_int(int *dst, const struct ctx *x, const struct ynode *map, const char *key,
		 const char *where, int min, int max)
{
	long long n = *dst;
	int rc = conf_get_ll(&n, x, map, key, where, min, max);

	if (rc == 0)
		*dst = (int)n;
	return rc;
}

/*
 * A size in bytes: digits with an optional binary suffix K, M, G or T
 * ("20G" is 20 GiB). An absent or null value leaves *dst alone.
 */
int conf_get_size(long long *dst, const struct ctx *x, const struct ynode *map, const char *key,
		  const char *where)
{
	static const char expect[] = "a size such as 512M or 20G (K, M, G, T: powers of 1024), or 0";
	const struct ynode *v = ynode_get(map, key);
	const char *suffixes = "KMGT", *s = NULL;
	char *end;
	unsigned long long n;
	int rc;

	if (!v)
		return 0;
	if ((rc = scalar_ok(x, v, key, where, expect)) < 0)
		return rc;
	errno = 0;
	n = strtoull(v->str, &end, 10);
	if (!isdigit((unsigned char)v->str[0]) || errno == ERANGE ||
	    (*end && (end[1] || !(s = strchr(suffixes, toupper((unsigned char)*end))))))
		return conf_at(x, v, "'%s'%s must be %s, not '%s'", key, where, expect, v->str);
	if (*end)
		for (const char *p = suffixes; p <= s; p++) {
			if (n > (unsigned long long)LLONG_MAX / 1024)
				return conf_at(x, v, "'%s'%s is too large: '%s'", key, where, v->str);
			n *= 1024;
		}
	if (n > (unsigned long long)LLONG_MAX)
		return conf_at(x, v, "'%s'%s is too large: '%s'", key, where, v->str);
	*dst = (long long)n;
	return 0;
}

int conf_get_bool(int *dst, const struct ctx *x, const struct ynode *map, const char *key,
		  const char *where)
{
	const struct ynode *v = ynode_get(map, key);
	int rc;

	if (!v)
		return 0;
	if ((rc = scalar_ok(x, v, key, where, "true or false")) < 0)
		return rc;
	if (!strcmp(v->str, "true"))
		*dst = 1;
	else if (!strcmp(v->str, "false"))
		*dst = 0;
	else
		return conf_at(x, v, "'%s'%s must be true or false, not '%s'", key, where, v->str);
	return 0;
}

/*
 * A sequence of strings into a new NULL-terminated vector. An absent or
 * null value leaves *dst alone; labels use an extra character set.
 */
int conf_get_strv(char ***dst, const struct ctx *x, const struct ynode *map, const char *key,
		  const char *where, int is_label)
{
	const struct ynode *v = ynode_get(map, key);
	const char *expect = is_label ? "a sequence of labels" : "a sequence of strings (an argv)";
	char **out;
	int rc;

	if (!v || ynode_is_null(v))
		return 0;
	if (v->kind != YNODE_SEQ)
		return conf_at(x, v, "'%s'%s must be %s, not %s", key, where, expect, ynode_kind_name(v->kind));
	out = xcalloc(v->nr + 1, sizeof(*out));
	for (size_t i = 0; i < v->nr; i++) {
		const struct ynode *item = v->items[i];

		if (item->kind != YNODE_SCALAR) {
			rc = conf_at(x, item, "'%s'%s must be %s, not a sequence holding %s", key, where,
				     expect, ynode_kind_name(item->kind));
			goto fail;
		}
		if (is_label && !conf_name_ok(item->str, item->len, ":=")) {
			rc = conf_at(x, item, "label '%s'%s must be 1 to %d characters of A-Z a-z 0-9 . _ - : =",
				     item->str, where, NAME_MAX_LEN);
			goto fail;
		}
		if ((rc = scalar_ok(x, item, key, where, "a sequence of non-empty strings")) < 0)
			goto fail;
		out[i] = xstrdup(item->str);
	}
	strv_free(*dst);
	*dst = out;
	return 0;
fail:
	strv_free(out);
	return rc;
}

const struct ynode *conf_root_map(const struct ctx *x, int *rc)
{
	const struct ynode *root = x->root;

	*rc = 0;
	if (!root || ynode_is_null(root))
		return NULL;
	if (root->kind != YNODE_MAP)
		*rc = conf_at(x, root, "the top level must be a mapping of keys, not %s", ynode_kind_name(root->kind));
	return root;
}

/*
 * Reads a mapping from names to definitions (repos, workloads, pools) in
 * file order into a new array; *out and *nr are set even on error so the
 * caller's release frees what was built.
 */
int conf_load_section(void **out, size_t *nr, const struct ctx *x, const struct ynode *root,
		      const char *section, const char *what, size_t elem_size, entry_fn fn)
{
	const struct ynode *v = ynode_get(root, section);
	char *arr;
	int rc = 0;

	*out = NULL;
	*nr = 0;
	if (!v || ynode_is_null(v))
		return 0;
	if (v->kind != YNODE_MAP)
		return conf_at(x, v, "'%s' must be a mapping from %s names to their definitions, not %s",
			       section, what, ynode_kind_name(v->kind));
	arr = xcalloc(v->nr ? v->nr : 1, elem_size);
	*out = arr;
	for (size_t i = 0; i < v->nr; i++) {
		const struct ynode *k = v->keys[i], *def = v->items[i];

		if (!conf_name_ok(k->str, k->len, NULL)) {
			rc = conf_at(x, k, "%s name '%s' must be 1 to %d characters of A-Z a-z 0-9 . _ -",
				     what, k->str, NAME_MAX_LEN);
			break;
		}
		if (!ynode_is_null(def) && def->kind != YNODE_MAP) {
			rc = conf_at(x, def, "%s '%s' must be a mapping of keys, not %s", what, k->str,
				     ynode_kind_name(def->kind));
			break;
		}
		(*nr)++;
		if ((rc = fn(x, arr + i * elem_size, k, ynode_is_null(def) ? NULL : def)) < 0)
			break;
	}
	return rc;
}

int conf_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

void strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

size_t strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}
