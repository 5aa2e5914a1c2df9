/*
 * kconfig: fragments in, a verified .config out. The parser follows what
 * scripts/kconfig/confdata.c accepts for the lines a fragment uses, and
 * is stricter about the rest: a typo in a fragment should stop the job
 * here, with file:line, not become an option olddefconfig ignores.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "kconfig.h"
#include "util.h"


void kconfig_init(struct kconfig *kc)
{
	struct kconfig zero = KCONFIG_INIT;

	*kc = zero;
}

void kconfig_release(struct kconfig *kc)
{
	size_t i;

	for (i = 0; i < kc->nr; i++) {
		free(kc->opt[i].name);
		free(kc->opt[i].value);
		free(kc->opt[i].where);
	}
	free(kc->opt);
	free(kc->index);
	kconfig_init(kc);
}

void kconfig_overrides_release(struct kconfig_overrides *ov)
{
	size_t i;

	for (i = 0; i < ov->nr; i++) {
		free(ov->v[i].name);
		free(ov->v[i].old_value);
		free(ov->v[i].old_where);
		free(ov->v[i].new_value);
		free(ov->v[i].new_where);
	}
	free(ov->v);
	ov->v = NULL;
	ov->nr = ov->alloc = 0;
}

/* FNV-1a 64, the name index's hash and the config hash alike. */
#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME UINT64_C(0x100000001b3)

static uint64_t fnv_add(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= FNV_PRIME;
	}
	return h;
}

static size_t *index_slot(const struct kconfig *kc, const char *name)
{
	size_t mask = kc->index_cap - 1;
	size_t i = (size_t)fnv_add(FNV_OFFSET, name, strlen(name)) & mask;

	while (kc->index[i] && strcmp(kc->opt[kc->index[i] - 1].name, name))
		i = (i + 1) & mask;
	return &kc->index[i];
}

/* Keeps the index at most half full. */
static void index_grow(struct kconfig *kc)
{
	size_t i;

	if (kc->index_cap >= 2 * (kc->nr + 1))
		return;
	free(kc->index);
	kc->index_cap = kc->index_cap ? kc->index_cap * 2 : 64;
	while (kc->index_cap < 2 * (kc->nr + 1))
		kc->index_cap *= 2;
	kc->index = xcalloc(kc->index_cap, sizeof(*kc->index));
	for (i = 0; i < kc->nr; i++)
		*index_slot(kc, kc->opt[i].name) = i + 1;
}

const struct kconfig_opt *kconfig_get(const struct kconfig *kc, const char *name)
{
	size_t *slot;

	if (!kc->index_cap)
		return NULL;
	slot = index_slot(kc, name);
	return *slot ? &kc->opt[*slot - 1] : NULL;
}

static void add_override(struct kconfig_overrides *ov, const struct kconfig_opt *old,
			 const char *value, const char *where)
{
	struct kconfig_override *o;

	if (ov->nr == ov->alloc) {
		ov->alloc = ov->alloc ? ov->alloc * 2 : 8;
		ov->v = xrealloc(ov->v, ov->alloc * sizeof(*ov->v));
	}
	o = &ov->v[ov->nr++];
	o->name = xstrdup(old->name);
	o->old_value = xstrdup(old->value);
	o->old_where = xstrdup(old->where);
	o->new_value = xstrdup(value);
	o->new_where = xstrdup(where);
}

/* Sets name to value; a name set before keeps its place in the order. */
static void set_opt(struct kconfig *kc, struct kconfig_overrides *ov,
		    const char *name, const char *value, const char *where)
{
	struct kconfig_opt *o;
	size_t *slot;

	index_grow(kc);
	slot = index_slot(kc, name);
	if (*slot) {
		o = &kc->opt[*slot - 1];
		if (strcmp(o->value, value) && ov)
			add_override(ov, o, value, where);
		free(o->value);
		free(o->where);
		o->value = xstrdup(value);
		o->where = xstrdup(where);
		return;
	}
	if (kc->nr == kc->alloc) {
		kc->alloc = kc->alloc ? kc->alloc * 2 : 64;
		kc->opt = xrealloc(kc->opt, kc->alloc * sizeof(*kc->opt));
	}
	o = &kc->opt[kc->nr++];
	o->name = xstrdup(name);
	o->value = xstrdup(value);
	o->where = xstrdup(where);
	*slot = kc->nr;
}

/* Length of a symbol name at s ("CONFIG_" included), 0 when s starts none. */
static size_t symbol_len(const char *s, size_t n)
{
	size_t i = strlen("CONFIG_");

	if (n <= i || memcmp(s, "CONFIG_", i))
		return 0;
	while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
		i++;
	return i > strlen("CONFIG_") ? i : 0;
}

/* A Kconfig value as .config files write them: tristate, string, int, hex. */
static int valid_value(const char *v, size_t n)
{
	size_t i;

	if (n == 1 && (v[0] == 'y' || v[0] == 'm' || v[0] == 'n'))
		return 1;
	if (n >= 2 && v[0] == '"') {
		for (i = 1; i < n - 1; i++) {
			if (v[i] == '\\') {
				/* an escaped NUL too: the value is kept as a C string */
				if (++i == n - 1 || v[i] == '\0')
					return 0;
			} else if (v[i] == '"' || v[i] == '\0') {
				return 0;
			}
		}
		return v[n - 1] == '"';
	}
	if (n > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		for (i = 2; i < n; i++)
			if (!isxdigit((unsigned char)v[i]))
				return 0;
		return 1;
	}
	i = (n > 1 && v[0] == '-') ? 1 : 0;
	if (i == n)
		return 0;
	for (; i < n; i++)
		if (!isdigit((unsigned char)v[i]))
			return 0;
	return 1;
}

/* The first bytes of a bad line, printable, for a message. */
static void show_line(char *buf, size_t bufsz, const char *s, size_t n)
{
	size_t i, j = 0;

	for (i = 0; i < n && j + 4 < bufsz; i++)
		buf[j++] = isprint((unsigned char)s[i]) ? s[i] : '?';
	if (i < n && j + 4 <= bufsz) {
		memcpy(buf + j, "...", 3);
		j += 3;
	}
	buf[j] = '\0';
}

int kconfig_parse(struct kconfig *kc, struct kconfig_overrides *ov,
		  const char *text, size_t len, const char *fname)
{
	static const char not_set[] = " is not set";
	const char *p = text, *end = text + len;
	unsigned line = 0;
	char where[PATH_MAX + 32];
	char shown[64];

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		size_t n, sl;
		char *name, *value;

		line++;
		while (e > p && isspace((unsigned char)e[-1]))
			e--;
		n = (size_t)(e - p);
		snprintf(where, sizeof(where), "%s:%u", fname, line);
		if (n == 0) {
			goto next;
		}
		if (p[0] == '#') {
			/* "# CONFIG_X is not set" and nothing else; other '#' lines are comments. */
			if (n > 2 && p[1] == ' ' && (sl = symbol_len(p + 2, n - 2)) &&
			    n - 2 - sl == strlen(not_set) && !memcmp(p + 2 + sl, not_set, strlen(not_set))) {
				name = xstrndup(p + 2, sl);
				set_opt(kc, ov, name, "n", where);
				free(name);
			}
			goto next;
		}
		sl = symbol_len(p, n);
		show_line(shown, sizeof(shown), p, n);
		if (!sl || sl >= n || p[sl] != '=')
			return err_set(ERR_INVALID, "%s: expected CONFIG_NAME=value or "
				       "'# CONFIG_NAME is not set', got '%s'", where, shown);
		if (!valid_value(p + sl + 1, n - sl - 1))
			return err_set(ERR_INVALID, "%s: bad value for %.*s (y, m, n, a \"string\", "
				       "a number or 0x hex), got '%s'", where, (int)sl, p, shown);
		name = xstrndup(p, sl);
		value = xstrndup(p + sl + 1, n - sl - 1);
		set_opt(kc, ov, name, value, where);
		free(name);
		free(value);
next:
		p = nl ? nl + 1 : end;
	}
	return 0;
}

int kconfig_load(struct kconfig *kc, struct kconfig_overrides *ov, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	rc = file_read(&text, &len, path, KCONFIG_MAX_FILE);
	if (rc == 0)
		rc = kconfig_parse(kc, ov, text, len, path);
	free(text);
	return rc;
}

void kconfig_set(struct kconfig *kc, const char *name, const char *value, const char *where)
{
	set_opt(kc, NULL, name, value, where);
}

void kconfig_merge(struct kconfig *dst, struct kconfig_overrides *ov, const struct kconfig *src)
{
	size_t i;

	for (i = 0; i < src->nr; i++)
		set_opt(dst, ov, src->opt[i].name, src->opt[i].value, src->opt[i].where);
}

static void opt_text(char *buf, size_t n, const char *name, const char *value)
{
	if (!strcmp(value, "n"))
		snprintf(buf, n, "# %s is not set", name);
	else
		snprintf(buf, n, "%s=%s", name, value);
}

const char *kconfig_override_describe(const struct kconfig_override *o, char *buf, size_t n)
{
	char old[256], new[256];

	opt_text(old, sizeof(old), o->name, o->old_value);
	opt_text(new, sizeof(new), o->name, o->new_value);
	snprintf(buf, n, "%s (%s) overrides %s (%s)", new, o->new_where, old, o->old_where);
	return buf;
}

char *kconfig_format(const struct kconfig *kc, const char *header)
{
	struct sbuf sb = SBUF_INIT;
	const char *h = header;
	size_t i;

	while (h && *h) {
		const char *nl = strchr(h, '\n');
		size_t n = nl ? (size_t)(nl - h) : strlen(h);

		sbuf_addf(&sb, "#%s%.*s\n", n ? " " : "", (int)n, h);
		h = nl ? nl + 1 : h + n;
	}
	for (i = 0; i < kc->nr; i++) {
		if (!strcmp(kc->opt[i].value, "n"))
			sbuf_addf(&sb, "# %s is not set\n", kc->opt[i].name);
		else
			sbuf_addf(&sb, "%s=%s\n", kc->opt[i].name, kc->opt[i].value);
	}
	return sbuf_detach(&sb);
}

/* Equal as Kconfig values: hex digits in either case, 0x or 0X. */
static int same_value(const char *a, const char *b)
{
	if (a[0] == '0' && (a[1] == 'x' || a[1] == 'X') && b[0] == '0' && (b[1] == 'x' || b[1] == 'X'))
		return !strcasecmp(a + 2, b + 2);
	return !strcmp(a, b);
}

/* Why want is not met by got (NULL: absent), into sb; 0 when it is met. */
static int check_one(struct sbuf *sb, const struct kconfig_opt *want, const struct kconfig_opt *got)
{
	char asked[256];

	opt_text(asked, sizeof(asked), want->name, want->value);
	if (!strcmp(want->value, "n")) {
		if (!got || !strcmp(got->value, "n"))
			return 0;
		sbuf_addf(sb, "%s requested (%s) but the final .config has %s=%s "
			  "(another option selects it)", asked, want->where, got->name, got->value);
		return 1;
	}
	if (got && same_value(got->value, want->value))
		return 0;
	if (!got)
		sbuf_addf(sb, "%s requested (%s) but the kernel's olddefconfig dropped it "
			  "(its dependencies are not met, or this kernel has no such option)",
			  asked, want->where);
	else if (!strcmp(got->value, "n"))
		sbuf_addf(sb, "%s requested (%s) but the kernel's olddefconfig left it unset "
			  "(a dependency or a choice overrules it)", asked, want->where);
	else if (!strcmp(want->value, "y") && !strcmp(got->value, "m"))
		sbuf_addf(sb, "%s requested (%s) but the kernel's olddefconfig made it %s=m "
			  "(a dependency is only =m)", asked, want->where, got->name);
	else
		sbuf_addf(sb, "%s requested (%s) but the final .config has %s=%s",
			  asked, want->where, got->name, got->value);
	return 1;
}

int kconfig_verify(char **report, const struct kconfig *want, const struct kconfig *got)
{
	struct sbuf names = SBUF_INIT, flat = SBUF_INIT, why = SBUF_INIT;
	size_t i, bad = 0;
	int rc = 0;

	if (report)
		*report = NULL;
	for (i = 0; i < want->nr; i++) {
		const struct kconfig_opt *w = &want->opt[i];
		struct sbuf one = SBUF_INIT;

		if (check_one(&one, w, kconfig_get(got, w->name))) {
			sbuf_addf(&names, "%s%s", bad ? ", " : "", w->name);
			sbuf_addf(&flat, "%s%s", bad ? "; " : "", one.buf);
			sbuf_addf(&why, "%s\n", one.buf);
			bad++;
		}
		sbuf_release(&one);
	}
	if (bad) {
		/* Names first: the message is bounded, the report is not. */
		rc = err_set(ERR_UNPROCESSABLE, "kconfig: %zu of %zu requested options not in the "
			     ".config (%s): %s", bad, want->nr, names.buf, flat.buf);
		if (report)
			*report = sbuf_detach(&why);
	}
	sbuf_release(&names);
	sbuf_release(&flat);
	sbuf_release(&why);
	return rc;
}

static int cmp_opt_ptr(const void *a, const void *b)
{
	const struct kconfig_opt *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

void kconfig_hash(char out[KCONFIG_HASH_HEX + 1], const struct kconfig *kc, const char *base)
{
	const struct kconfig_opt **sorted = NULL;
	uint64_t h = FNV_OFFSET;
	size_t i;

	/* NUL and '\n' separate fields: no two inputs hash the same bytes. */
	h = fnv_add(h, "kconfig-v1", strlen("kconfig-v1") + 1);
	h = fnv_add(h, base ? base : "", strlen(base ? base : "") + 1);
	if (kc->nr) {
		sorted = xmalloc(kc->nr * sizeof(*sorted));
		for (i = 0; i < kc->nr; i++)
			sorted[i] = &kc->opt[i];
		qsort(sorted, kc->nr, sizeof(*sorted), cmp_opt_ptr);
	}
	for (i = 0; i < kc->nr; i++) {
		h = fnv_add(h, sorted[i]->name, strlen(sorted[i]->name));
		h = fnv_add(h, "=", 1);
		h = fnv_add(h, sorted[i]->value, strlen(sorted[i]->value));
		h = fnv_add(h, "\n", 1);
	}
	free(sorted);
	snprintf(out, KCONFIG_HASH_HEX + 1, "%016" PRIx64, h);
}

/* --- the merged fragments and their name ---------------------------------- */

static int is_make_target(const char *base)
{
	return !strcmp(base, "tinyconfig") || !strcmp(base, "defconfig") ||
	       !strcmp(base, "allnoconfig");
}

/*
 * The fragments merged into want, and the base's name for the hash: a
 * make target as it is, a file as "file:" and the hash of its content
 * (left in *text), so that editing the file misses the cache.
 */
int kconfig_merged(struct kconfig *want, struct kconfig_overrides *ov, char **text, size_t *len,
		   char **base_name, const char *base, const char *const *fragments)
{
	int rc;

	for (size_t i = 0; fragments && fragments[i]; i++)
		if ((rc = kconfig_load(want, ov, fragments[i])))
			return rc;
	if (is_make_target(base)) {
		*base_name = xstrdup(base);
	} else {
		struct kconfig none = KCONFIG_INIT;
		char h[KCONFIG_HASH_HEX + 1];

		if ((rc = file_read(text, len, base, KCONFIG_MAX_FILE)))
			return rc;
		kconfig_hash(h, &none, *text);
		*base_name = xasprintf("file:%s", h);
	}
	return 0;
}

int kconfig_config_hash(char hash[KCONFIG_HASH_HEX + 1], const char *base, const char *const *fragments)
{
	return kconfig_config_hash_job(hash, base, fragments, NULL);
}

/* --- a job's own options ------------------------------------------------- */

int kconfig_job_check(const char *opt)
{
	const char *eq = strchr(opt, '='), *v;
	size_t i, n;

	if (strlen(opt) > KCONFIG_JOB_OPT_MAX)
		return err_set(ERR_INVALID, "config option '%.40s...' is longer than %d characters", opt,
			       KCONFIG_JOB_OPT_MAX);
	if (strncmp(opt, "CONFIG_", 7) || !eq || eq == opt + 7)
		goto name;
	for (const char *p = opt + 7; p < eq; p++)
		if (!(isupper((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
			goto name;
	v = eq + 1;
	n = strlen(v);
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			goto value;
	if (n && valid_value(v, n))
		return 0;
value:
	return err_set(ERR_INVALID, "config option '%s': the value must be y, m, n (not set), a number, 0x hex "
		       "or a \"quoted string\"", opt);
name:
	return err_set(ERR_INVALID, "config option '%s' must be CONFIG_NAME=value with a name of A-Z 0-9 _ "
		       "(\"CONFIG_MITIGATION_RETPOLINE=n\")", opt);
}

int kconfig_job_parse(struct kconfig *kc, const char *const *opts, size_t n)
{
	int rc;

	if (n > KCONFIG_JOB_MAX)
		return err_set(ERR_INVALID, "at most %d config options a job, not %zu", KCONFIG_JOB_MAX, n);
	for (size_t i = 0; i < n; i++) {
		const char *eq;
		char *name;

		if ((rc = kconfig_job_check(opts[i])))
			return rc;
		eq = strchr(opts[i], '=');
		name = xstrndup(opts[i], (size_t)(eq - opts[i]));
		if (kconfig_get(kc, name)) {
			rc = err_set(ERR_INVALID, "config option %s is given twice", name);
			free(name);
			return rc;
		}
		set_opt(kc, NULL, name, eq + 1, KCONFIG_JOB_WHERE);
		free(name);
	}
	return 0;
}

char *kconfig_job_base_name(const char *base_name, const struct kconfig *job)
{
	char h[KCONFIG_HASH_HEX + 1];

	if (!job || !job->nr)
		return xstrdup(base_name);
	kconfig_hash(h, job, "job");
	return xasprintf("%s+job:%s", base_name, h);
}

int kconfig_config_hash_job(char hash[KCONFIG_HASH_HEX + 1], const char *base, const char *const *fragments,
			    const struct kconfig *job)
{
	struct kconfig want = KCONFIG_INIT;
	char *text = NULL, *base_name = NULL, *name = NULL;
	size_t len = 0;
	int rc = kconfig_merged(&want, NULL, &text, &len, &base_name, base, fragments);

	if (rc == 0) {
		if (job)
			kconfig_merge(&want, NULL, job);
		name = kconfig_job_base_name(base_name, job);
		kconfig_hash(hash, &want, name);
	}
	free(name);
	free(text);
	free(base_name);
	kconfig_release(&want);
	return rc;
}
