/*
 * conf: bisectd.yaml and agent.yaml from a yamltree into structs. Every
 * key is checked against the list of keys its mapping may hold, so a typo
 * is an error at its line and column rather than a silently ignored value.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "conf.h"
#include "err.h"
#include "kconfig.h"
#include "log.h"
#include "methods.h"
#include "util.h"
#include "workload.h"
#include "yamltree.h"

#define CONF_MAX_BYTES (1 << 20)
#define NAME_MAX_LEN 64
/* glibc's cpu_set_t holds CPU_SETSIZE (1024) CPUs; run.c pins with one. */
#define MAX_CPU 1023

/* The file name for messages and the position of the mapping being read. */
struct ctx {
	const char *name;
	const struct ynode *root;
	const char *kconfig_dir; /* where kernel fragments are read from */
};

static const char *const bisectd_keys[] = {
	"listen", "database", "mirrors", "kconfig_dir", "log_level", "lease_seconds", "lease_grace_seconds",
	"agent_retire_seconds", "max_body",
	"default_runs", "repos", "workloads", "pools", "charts", "gnuplot", "chart_timeout",
	"threads", "max_connections", "max_connections_per_address", "idle_timeout", "tls_cert", "tls_key", "auth", NULL
};
static const char *const auth_keys[] = {
	"mode", "read", "admin_token_file", "secret_file", "max_failures", "failure_window", NULL
};
static const char *const repo_keys[] = { "url", NULL };
/* A workload's common keys; each kind's own (workload.h) follow them. */
static const char *const workload_keys[] = {
	"type", "boot", "build", "direction", "build_timeout", "run_timeout", "kernel_image", "qemu",
	"memory_mb", "cpus", "append", "boot_timeout", "kernel", "profile", "kexec", "ssh", NULL
};
static const char *const kernel_keys[] = { "base", "fragments", "target", "make_args", NULL };
static const char *const kernel_bases[] = { "tinyconfig", "defconfig", "allnoconfig", NULL };
static const char *const qemu_keys[] = {
	"kernel_image", "memory_mb", "cpus", "append", "boot_timeout", NULL
};
static const char *const kexec_keys[] = {
	"append", "initrd", "return_timeout", "good_kernel", "good_initrd", "reboot", NULL
};

/* boot ssh's settings: an 'ssh' mapping (docs/LAB.md). */
static const char *const ssh_keys[] = {
	"host", "user", "port", "identity", "known_hosts", "connect_timeout", "dir", "copy", "install",
	"power_cycle", "restore", "console", "boot_timeout", "power_tries", "good_kernel", "tools_dir", NULL
};

static const char *const pool_keys[] = { "labels", NULL };
static const char *const agent_keys[] = {
	"coordinator", "name", "labels", "workdir", "log_level", "heartbeat",
	"poll_wait", "cpu", "measure_lock", "build_lock", "build_jobs", "kcache_max", "ca_file",
	"enrol_token_file", "token_file", NULL
};

/* Every config message starts with the position it is about. */
__attribute__((format(printf, 3, 4)))
static int at(const struct ctx *x, const struct ynode *n, const char *fmt, ...)
{
	char msg[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(ERR_INVALID, "%s:%d:%d: %s", x->name, n ? n->line : 1, n ? n->col : 1, msg);
}

static int check_keys(const struct ctx *x, const struct ynode *map, const char *const *allowed,
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
		rc = at(x, k, "unknown key '%s'%s (expected one of: %s)", k->str, where, list.buf);
		sbuf_release(&list);
		return rc;
	}
	return 0;
}

/* Names end up in URLs, file names and log lines: keep them plain. */
static int name_ok(const char *s, size_t len, const char *extra)
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
		return at(x, v, "'%s'%s must be %s, not %s", key, where, expect, ynode_kind_name(v->kind));
	if (ynode_is_null(v) || v->len == 0)
		return at(x, v, "'%s'%s must be %s, not empty", key, where, expect);
	if (strlen(v->str) != v->len)
		return at(x, v, "'%s'%s must not contain NUL characters", key, where);
	return 0;
}

/*
 * Replaces *dst with the string value of key when present. When allow_null,
 * an empty value sets *dst to NULL (e.g. "measure_lock:" for none).
 */
static int get_str(char **dst, const struct ctx *x, const struct ynode *map, const char *key,
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

static int get_ll(long long *dst, const struct ctx *x, const struct ynode *map, const char *key,
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
		return at(x, v, "'%s'%s must be %s, not '%s'", key, where, expect, v->str);
	*dst = n;
	return 0;
}

static int get_int(int *dst, const struct ctx *x, const struct ynode *map, const char *key,
		   const char *where, int min, int max)
{
	long long n = *dst;
	int rc = get_ll(&n, x, map, key, where, min, max);

	if (rc == 0)
		*dst = (int)n;
	return rc;
}

/*
 * A size in bytes: digits with an optional binary suffix K, M, G or T
 * ("20G" is 20 GiB). An absent or null value leaves *dst alone.
 */
static int get_size(long long *dst, const struct ctx *x, const struct ynode *map, const char *key,
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
		return at(x, v, "'%s'%s must be %s, not '%s'", key, where, expect, v->str);
	if (*end)
		for (const char *p = suffixes; p <= s; p++) {
			if (n > (unsigned long long)LLONG_MAX / 1024)
				return at(x, v, "'%s'%s is too large: '%s'", key, where, v->str);
			n *= 1024;
		}
	if (n > (unsigned long long)LLONG_MAX)
		return at(x, v, "'%s'%s is too large: '%s'", key, where, v->str);
	*dst = (long long)n;
	return 0;
}

static int get_bool(int *dst, const struct ctx *x, const struct ynode *map, const char *key,
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
		return at(x, v, "'%s'%s must be true or false, not '%s'", key, where, v->str);
	return 0;
}

/*
 * A sequence of strings into a new NULL-terminated vector. An absent or
 * null value leaves *dst alone; labels use an extra character set.
 */
static int get_strv(char ***dst, const struct ctx *x, const struct ynode *map, const char *key,
		    const char *where, int is_label)
{
	const struct ynode *v = ynode_get(map, key);
	const char *expect = is_label ? "a sequence of labels" : "a sequence of strings (an argv)";
	char **out;
	int rc;

	if (!v || ynode_is_null(v))
		return 0;
	if (v->kind != YNODE_SEQ)
		return at(x, v, "'%s'%s must be %s, not %s", key, where, expect, ynode_kind_name(v->kind));
	out = xcalloc(v->nr + 1, sizeof(*out));
	for (size_t i = 0; i < v->nr; i++) {
		const struct ynode *item = v->items[i];

		if (item->kind != YNODE_SCALAR) {
			rc = at(x, item, "'%s'%s must be %s, not a sequence holding %s", key, where,
				expect, ynode_kind_name(item->kind));
			goto fail;
		}
		if (is_label && !name_ok(item->str, item->len, ":=")) {
			rc = at(x, item, "label '%s'%s must be 1 to %d characters of A-Z a-z 0-9 . _ - : =",
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

static int check_log_level(const struct ctx *x, const struct ynode *map, const char *level)
{
	if (level && log_level_parse(level) < 0)
		return at(x, ynode_get(map, "log_level"),
			  "'log_level' must be one of debug, info, warn, error, not '%s'", level);
	return 0;
}

/*
 * An agent is offline after three lease periods: retiring it sooner would
 * retire agents that are only late. Without the keys: a grace of one
 * lease, and a day or three leases, whichever is longer.
 */
static int check_retire(const struct ctx *x, const struct ynode *map, struct conf_bisectd *c)
{
	long long min = 3LL * c->lease_seconds;

	if (c->lease_grace_seconds < 0)
		c->lease_grace_seconds = c->lease_seconds;
	if (!ynode_get(map, "agent_retire_seconds")) {
		if (c->agent_retire_seconds < min)
			c->agent_retire_seconds = (int)min;
		return 0;
	}
	if (c->agent_retire_seconds < min)
		return at(x, ynode_get(map, "agent_retire_seconds"),
			  "'agent_retire_seconds' (%d) must be at least three lease periods (3 x lease_seconds = %lld)",
			  c->agent_retire_seconds, min);
	return 0;
}

/* "HOST:PORT" with a port the HTTP server can bind. */
static int check_listen(const struct ctx *x, const struct ynode *map, const char *listen)
{
	const char *colon = strrchr(listen, ':');
	char *end;
	long port;

	if (colon && colon != listen && colon[1]) {
		errno = 0;
		port = strtol(colon + 1, &end, 10);
		if (!*end && !errno && isdigit((unsigned char)colon[1]) && port >= 1 && port <= 65535)
			return 0;
	}
	return at(x, ynode_get(map, "listen"), "'listen' must be HOST:PORT with a port from 1 to 65535, not '%s'",
		  listen);
}

/* A certificate needs its key: both or neither. */
static int check_tls(const struct ctx *x, const struct ynode *map, const struct conf_bisectd *c)
{
	if (!c->tls_cert == !c->tls_key)
		return 0;
	return at(x, ynode_get(map, c->tls_cert ? "tls_cert" : "tls_key"),
		  "'%s' needs '%s' too (TLS: the PEM certificate and its private key), or neither for plain HTTP",
		  c->tls_cert ? "tls_cert" : "tls_key", c->tls_cert ? "tls_key" : "tls_cert");
}

static const struct ynode *root_map(const struct ctx *x, int *rc)
{
	const struct ynode *root = x->root;

	*rc = 0;
	if (!root || ynode_is_null(root))
		return NULL;
	if (root->kind != YNODE_MAP)
		*rc = at(x, root, "the top level must be a mapping of keys, not %s", ynode_kind_name(root->kind));
	return root;
}

typedef int (*entry_fn)(const struct ctx *x, void *elem, const struct ynode *key,
			const struct ynode *def);

/*
 * Reads a mapping from names to definitions (repos, workloads, pools) in
 * file order into a new array; *out and *nr are set even on error so the
 * caller's release frees what was built.
 */
static int load_section(void **out, size_t *nr, const struct ctx *x, const struct ynode *root,
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
		return at(x, v, "'%s' must be a mapping from %s names to their definitions, not %s",
			  section, what, ynode_kind_name(v->kind));
	arr = xcalloc(v->nr ? v->nr : 1, elem_size);
	*out = arr;
	for (size_t i = 0; i < v->nr; i++) {
		const struct ynode *k = v->keys[i], *def = v->items[i];

		if (!name_ok(k->str, k->len, NULL)) {
			rc = at(x, k, "%s name '%s' must be 1 to %d characters of A-Z a-z 0-9 . _ -",
				what, k->str, NAME_MAX_LEN);
			break;
		}
		if (!ynode_is_null(def) && def->kind != YNODE_MAP) {
			rc = at(x, def, "%s '%s' must be a mapping of keys, not %s", what, k->str,
				ynode_kind_name(def->kind));
			break;
		}
		(*nr)++;
		if ((rc = fn(x, arr + i * elem_size, k, ynode_is_null(def) ? NULL : def)) < 0)
			break;
	}
	return rc;
}

static int repo_entry(const struct ctx *x, void *elem, const struct ynode *key, const struct ynode *def)
{
	struct conf_repo *r = elem;
	char where[128];
	int rc;

	r->name = xstrdup(key->str);
	snprintf(where, sizeof(where), " in repo '%s'", r->name);
	if ((rc = check_keys(x, def, repo_keys, where)) < 0 ||
	    (rc = get_str(&r->url, x, def, "url", where, 0)) < 0)
		return rc;
	if (!r->url)
		return at(x, key, "repo '%s' has no 'url' (required: a URL or path to clone from)", r->name);
	return 0;
}

static int one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

static int qemu_settings(struct conf_workload *w, const struct ctx *x, const struct ynode *map,
			 const char *where)
{
	int rc;

	if ((rc = get_str(&w->kernel_image, x, map, "kernel_image", where, 0)) < 0 ||
	    (rc = get_int(&w->memory_mb, x, map, "memory_mb", where, 64, 65536)) < 0 ||
	    (rc = get_int(&w->cpus, x, map, "cpus", where, 1, 64)) < 0 ||
	    (rc = get_str(&w->append, x, map, "append", where, 1)) < 0 ||
	    (rc = get_int(&w->boot_timeout, x, map, "boot_timeout", where, 1, 3600)) < 0)
		return rc;
	return 0;
}

static void kernel_free(struct conf_kernel *k)
{
	if (!k)
		return;
	free(k->base);
	free(k->base_text);
	strv_free(k->fragments);
	strv_free(k->fragment_text);
	free(k->target);
	strv_free(k->make_args);
	free(k);
}

/* Reads a config file of the kernel build and checks that it parses. */
static int kernel_file(char **text, const struct ctx *x, const struct ynode *n, const char *path,
		       const char *what, const char *where)
{
	struct kconfig kc = KCONFIG_INIT;
	size_t len;
	int rc;

	if ((rc = file_read(text, &len, path, KCONFIG_MAX_FILE)) < 0)
		return at(x, n, "%s%s: %s", what, where, err_msg());
	/* It travels to the agents in JSON. */
	json_t *probe = json_stringn(*text, len);

	if (!probe)
		return at(x, n, "%s%s: %s is not UTF-8 text", what, where, path);
	json_decref(probe);
	rc = kconfig_parse(&kc, NULL, *text, len, path);
	kconfig_release(&kc);
	if (rc < 0)
		return at(x, n, "%s%s: %s", what, where, err_msg());
	return 0;
}

/* The names of the fragments in dir, for a message: "egress, pedit, udp". */
static void fragment_names(struct sbuf *out, const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), shown = 0;

	for (int i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name);

		if (len > 7 && !strcmp(names[i]->d_name + len - 7, ".config"))
			sbuf_addf(out, "%s%.*s", shown++ ? ", " : "", (int)(len - 7), names[i]->d_name);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	if (!shown)
		sbuf_adds(out, "none");
}

/*
 * The 'kernel' mapping: base, fragments (names of kconfig_dir/NAME.config),
 * target and make_args. Files are read and parsed here, so that a missing
 * fragment or a bad line stops bisectd, not every task on every agent.
 */
static int kernel_entry(struct conf_workload *w, const struct ctx *x, const struct ynode *def,
			const char *where)
{
	const struct ynode *kn = ynode_get(def, "kernel"), *fr;
	struct conf_kernel *k;
	char kwhere[160];
	size_t nr;
	int rc;

	if (!kn || ynode_is_null(kn))
		return 0;
	if (kn->kind != YNODE_MAP)
		return at(x, kn, "'kernel'%s must be a mapping (base, fragments, target, make_args), not %s",
			  where, ynode_kind_name(kn->kind));
	snprintf(kwhere, sizeof(kwhere), " in the kernel build of workload '%s'", w->name);
	k = w->kernel = xcalloc(1, sizeof(*k));
	k->base = xstrdup("tinyconfig");
	k->target = xstrdup("bzImage");
	if ((rc = check_keys(x, kn, kernel_keys, kwhere)) < 0 ||
	    (rc = get_str(&k->base, x, kn, "base", kwhere, 0)) < 0 ||
	    (rc = get_strv(&k->fragments, x, kn, "fragments", kwhere, 0)) < 0 ||
	    (rc = get_str(&k->target, x, kn, "target", kwhere, 0)) < 0 ||
	    (rc = get_strv(&k->make_args, x, kn, "make_args", kwhere, 0)) < 0)
		return rc;
	if (!k->fragments)
		k->fragments = xcalloc(1, sizeof(char *));
	if (!k->make_args)
		k->make_args = xcalloc(1, sizeof(char *));
	if (!name_ok(k->target, strlen(k->target), "/"))
		return at(x, ynode_get(kn, "target"), "'target'%s must be a make target such as bzImage, "
			  "not '%s'", kwhere, k->target);
	for (char **p = k->make_args; *p; p++)
		if (!strchr(*p, '=') || **p == '-' || !strncmp(*p, "O=", 2))
			return at(x, ynode_get(kn, "make_args"), "'make_args'%s takes VAR=value arguments "
				  "(LLVM=1, KCFLAGS=...), not '%s' (the agent sets -j and O= itself)",
				  kwhere, *p);
	if (!one_of(k->base, kernel_bases)) {
		char *path = k->base[0] == '/' ? xstrdup(k->base) : xasprintf("%s/%s", x->kconfig_dir, k->base);

		rc = kernel_file(&k->base_text, x, ynode_get(kn, "base"), path,
				 "'base' (tinyconfig, defconfig, allnoconfig or a .config file)", kwhere);
		free(path);
		if (rc < 0)
			return rc;
	}
	fr = ynode_get(kn, "fragments");
	nr = strv_len(k->fragments);
	k->fragment_text = xcalloc(nr + 1, sizeof(char *));
	for (size_t i = 0; i < nr; i++) {
		char *path = xasprintf("%s/%s.config", x->kconfig_dir, k->fragments[i]);

		if (!name_ok(k->fragments[i], strlen(k->fragments[i]), "") || access(path, F_OK) < 0) {
			struct sbuf names = SBUF_INIT;

			fragment_names(&names, x->kconfig_dir);
			rc = at(x, fr->items[i], "fragment '%s'%s is not in %s (there: %s)", k->fragments[i],
				kwhere, x->kconfig_dir, names.buf);
			sbuf_release(&names);
		} else {
			rc = kernel_file(&k->fragment_text[i], x, fr->items[i], path, "fragment", kwhere);
		}
		free(path);
		if (rc < 0)
			return rc;
	}
	if (w->build)
		return at(x, ynode_get(def, "build"), "workload '%s' has both 'build' and 'kernel': the "
			  "kernel mapping is the build", w->name);
	return 0;
}

int conf_boot_places(const char *name)
{
	const struct boot_method *m = boot_method_find(name);

	return m ? m->places : 0;
}

/* "'a', 'b' or 'c'" (quoted) or "a, b or c" of the names that match places (0: all). */
static void names_list(struct sbuf *sb, int boots, int places, int quote)
{
	const char *names[32];
	size_t n = 0, nr;

	if (boots) {
		size_t nm;
		const struct boot_method *m = boot_methods(&nm);

		for (size_t i = 0; i < nm && n < 32; i++)
			if (!places || (m[i].places & places))
				names[n++] = m[i].name;
	} else {
		const struct workload_ops *const *all = workload_all(&nr);

		for (size_t i = 0; i < nr && n < 32; i++)
			if (!places || (all[i]->places & places))
				names[n++] = all[i]->name;
	}
	for (size_t i = 0; i < n; i++)
		sbuf_addf(sb, "%s%s%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", quote ? "'" : "",
			  names[i], quote ? "'" : "");
}

/* Every key a workload may hold: the common ones, then each kind's. */
static char **all_workload_keys(void)
{
	const struct workload_ops *const *all;
	size_t nr, n = 0, cap = 64;
	char **keys = xcalloc(cap, sizeof(*keys));

	for (const char *const *k = workload_keys; *k; k++)
		keys[n++] = xstrdup(*k);
	all = workload_all(&nr);
	for (size_t i = 0; i < nr; i++) {
		for (const struct workload_key *k = all[i]->keys; k->name; k++) {
			int dup = 0;

			for (size_t j = 0; j < n; j++)
				dup |= !strcmp(keys[j], k->name);
			if (dup)
				continue;
			if (n + 2 > cap)
				keys = xrealloc(keys, (cap *= 2) * sizeof(*keys));
			keys[n++] = xstrdup(k->name);
			keys[n] = NULL;
		}
	}
	keys[n] = NULL;
	return keys;
}

static const struct workload_key *own_key(const struct workload_ops *ops, const char *name)
{
	for (const struct workload_key *k = ops->keys; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

/* A key the workload's kind does not own, but another kind does: for that kind. */
static int foreign_keys(const struct workload_ops *ops, const struct ctx *x, const struct ynode *def,
			const char *where)
{
	const struct workload_ops *const *all;
	size_t nr;

	all = workload_all(&nr);
	for (size_t i = 0; i < nr; i++) {
		if (all[i] == ops)
			continue;
		for (const struct workload_key *k = all[i]->keys; k->name; k++)
			if (ynode_get(def, k->name) && !own_key(ops, k->name))
				return at(x, ynode_get(def, k->name), "'%s'%s is for type %s, not %s", k->name,
					  where, all[i]->name, ops->name);
	}
	return 0;
}

/* The kind's own keys from YAML into w->params, typed as the kind says. */
static int own_params(struct conf_workload *w, const struct workload_ops *ops, const struct ctx *x,
		      const struct ynode *def, const char *where)
{
	w->params = json_object();
	for (const struct workload_key *k = ops->keys; k->name; k++) {
		char *str = NULL, **argv = NULL;
		long long ll = 0;
		int b = 0, rc = 0;
		json_t *v = NULL;

		if (!ynode_get(def, k->name))
			continue;
		switch (k->kind) {
		case WKEY_STR:
			if ((rc = get_str(&str, x, def, k->name, where, 0)) == 0 && str)
				v = json_string(str);
			break;
		case WKEY_INT:
			if ((rc = get_ll(&ll, x, def, k->name, where, k->min, k->max)) == 0)
				v = json_integer(ll);
			break;
		case WKEY_BOOL:
			if ((rc = get_bool(&b, x, def, k->name, where)) == 0)
				v = json_boolean(b);
			break;
		case WKEY_ARGV:
			if ((rc = get_strv(&argv, x, def, k->name, where, 0)) == 0 && argv) {
				v = json_array();
				for (char **p = argv; *p; p++)
					json_array_append_new(v, json_string(*p));
			}
			break;
		case WKEY_LIST:
			/* One scalar ("0,1") or a sequence ([0, 1]): the kind's check reads either. */
			if (ynode_get(def, k->name)->kind == YNODE_SEQ)
				rc = get_strv(&argv, x, def, k->name, where, 0);
			else
				rc = get_str(&str, x, def, k->name, where, 0);
			if (rc == 0 && argv) {
				v = json_array();
				for (char **p = argv; *p; p++)
					json_array_append_new(v, json_string(*p));
			} else if (rc == 0 && str) {
				v = json_string(str);
			}
			break;
		}
		free(str);
		strv_free(argv);
		if (rc < 0)
			return rc;
		if (!v)
			return at(x, ynode_get(def, k->name), "'%s'%s is not UTF-8 text", k->name, where);
		json_object_set_new(w->params, k->name, v);
	}
	return 0;
}

/* The kind's check over w->params, its complaint placed on the key it names. */
static int check_params(struct conf_workload *w, const struct workload_ops *ops, const struct ctx *x,
			const struct ynode *key, const struct ynode *def, const char *where)
{
	struct workload_bad bad;
	const struct ynode *n;
	char *msg;
	int rc;

	if (workload_check(ops, w->params, &bad) == 0) {
		free(w->unit);
		w->unit = xstrdup(json_string_value(json_object_get(w->params, "unit")) ?: "ops/s");
		return 0;
	}
	msg = xstrdup(err_msg());
	n = bad.key ? ynode_get(def, bad.key) : NULL;
	if (n && bad.item >= 0 && n->kind == YNODE_SEQ && (size_t)bad.item < n->nr)
		n = n->items[bad.item];
	if (bad.missing || !n)
		rc = at(x, key, "workload '%s' has no '%s' (%s)", w->name, bad.key ? bad.key : "?", msg);
	else
		rc = at(x, n, "'%s'%s%s", bad.key, where, msg);
	free(msg);
	return rc;
}

/* A sequence of strings into obj[key] as a JSON array; absent: nothing. */
static int ssh_argv(json_t *obj, const struct ctx *x, const struct ynode *map, const char *key,
		    const char *where, int required, const struct ynode *at_node)
{
	char **v = NULL;
	json_t *a;
	int rc;

	if ((rc = get_strv(&v, x, map, key, where, 0)) < 0)
		return rc;
	if (!v || !v[0]) {
		strv_free(v);
		if (required)
			return at(x, ynode_get(map, key) ? ynode_get(map, key) : at_node,
				  "'%s'%s is required: %s", key, where,
				  !strcmp(key, "install") ? "the argv run on the device to install {kernel}"
				  : "the argv run on the agent to power-cycle the device");
		return 0;
	}
	a = json_array();
	for (char **p = v; *p; p++)
		json_array_append_new(a, json_string(*p));
	json_object_set_new(obj, key, a);
	strv_free(v);
	return 0;
}

/*
 * boot ssh's 'ssh' mapping into w->ssh, the definition's "ssh" object:
 * the device, how to reach it, and the commands that install, power-cycle
 * and restore it (agents/boot/ssh.c runs them).
 */
static int ssh_entry(struct conf_workload *w, const struct ctx *x, const struct ynode *def,
		     const struct ynode *key, const char *where)
{
	const struct ynode *m = ynode_get(def, "ssh");
	char *host = NULL, *user = NULL, *identity = NULL, *kh = NULL, *dir = NULL, *good = NULL, **copy = NULL;
	char *tools = NULL;
	int port = 22, cto = 10, bto = 300, tries = 2, rc;
	char swhere[160];
	json_t *o;

	if (!m || ynode_is_null(m))
		return at(x, key, "workload '%s' boots ssh but has no 'ssh' mapping (host, known_hosts, "
			  "install, power_cycle)", w->name);
	if (m->kind != YNODE_MAP)
		return at(x, m, "'ssh'%s must be a mapping of keys, not %s", where, ynode_kind_name(m->kind));
	snprintf(swhere, sizeof(swhere), " in the ssh settings of workload '%s'", w->name);
	o = json_object();
	if ((rc = check_keys(x, m, ssh_keys, swhere)) < 0 ||
	    (rc = get_str(&host, x, m, "host", swhere, 0)) < 0 ||
	    (rc = get_str(&user, x, m, "user", swhere, 0)) < 0 ||
	    (rc = get_int(&port, x, m, "port", swhere, 1, 65535)) < 0 ||
	    (rc = get_str(&identity, x, m, "identity", swhere, 0)) < 0 ||
	    (rc = get_str(&kh, x, m, "known_hosts", swhere, 0)) < 0 ||
	    (rc = get_int(&cto, x, m, "connect_timeout", swhere, 1, 300)) < 0 ||
	    (rc = get_str(&dir, x, m, "dir", swhere, 0)) < 0 ||
	    (rc = get_strv(&copy, x, m, "copy", swhere, 0)) < 0 ||
	    (rc = get_int(&bto, x, m, "boot_timeout", swhere, 1, 7200)) < 0 ||
	    (rc = get_int(&tries, x, m, "power_tries", swhere, 1, 10)) < 0 ||
	    (rc = get_str(&good, x, m, "good_kernel", swhere, 0)) < 0 ||
	    (rc = get_str(&tools, x, m, "tools_dir", swhere, 0)) < 0 ||
	    (rc = ssh_argv(o, x, m, "install", swhere, 1, m)) < 0 ||
	    (rc = ssh_argv(o, x, m, "power_cycle", swhere, 1, m)) < 0 ||
	    (rc = ssh_argv(o, x, m, "restore", swhere, 0, m)) < 0 ||
	    (rc = ssh_argv(o, x, m, "console", swhere, 0, m)) < 0)
		goto out;
	/* Words ssh would take for its own options, or a remote shell would split. */
	if (!host || host[0] == '-' || strpbrk(host, " \t\n@'\"\\;") || strlen(host) > 255) {
		rc = at(x, host ? ynode_get(m, "host") : m, "'host'%s %s", swhere,
			host ? "must be a host name or address (no spaces, quotes, '@' or leading '-')"
			     : "is required: the device's host name or address");
		goto out;
	}
	if (user && (!name_ok(user, strlen(user), NULL) || user[0] == '-')) {
		rc = at(x, ynode_get(m, "user"), "'user'%s must be a login name of A-Z a-z 0-9 . _ -", swhere);
		goto out;
	}
	/* ssh -o reads a value with spaces as a list of files. */
	if (!kh || kh[0] != '/' || strpbrk(kh, " \t\n")) {
		rc = at(x, kh ? ynode_get(m, "known_hosts") : m, "'known_hosts'%s %s", swhere,
			kh ? "must be an absolute path on the agent, without spaces"
			   : "is required: the agent's file of the device's host key (ssh checks it strictly)");
		goto out;
	}
	if (identity && identity[0] != '/') {
		rc = at(x, ynode_get(m, "identity"), "'identity'%s must be an absolute path on the agent", swhere);
		goto out;
	}
	if (dir && (dir[0] != '/' || strchr(dir, '\n') || strlen(dir) > 256)) {
		rc = at(x, ynode_get(m, "dir"), "'dir'%s must be an absolute path on the device", swhere);
		goto out;
	}
	/* The guest workloads' scripts name their tools by absolute path, quoted. */
	if (tools && (tools[0] != '/' || strpbrk(tools, " \t\n'\"\\$`") || strlen(tools) > 200)) {
		rc = at(x, ynode_get(m, "tools_dir"), "'tools_dir'%s must be an absolute path on the device, "
			"without spaces or quotes", swhere);
		goto out;
	}
	for (size_t i = 0; copy && copy[i]; i++) {
		const char *base = strrchr(copy[i], '/') ? strrchr(copy[i], '/') + 1 : copy[i];

		if (i >= 8 || !path_inside(copy[i]) || strlen(copy[i]) > 256 ||
		    !name_ok(base, strlen(base), "+") || !strcmp(base, "kernel")) {
			rc = at(x, ynode_get(m, "copy")->items[i], "'copy'%s: '%s' must be a path inside the build "
				"output with a plain file name other than 'kernel' (at most 8 of them)", swhere,
				copy[i]);
			goto out;
		}
	}
	json_object_set_new(o, "host", json_string(host));
	json_object_set_new(o, "user", json_string(user ? user : "root"));
	json_object_set_new(o, "port", json_integer(port));
	if (identity)
		json_object_set_new(o, "identity", json_string(identity));
	json_object_set_new(o, "known_hosts", json_string(kh));
	json_object_set_new(o, "connect_timeout", json_integer(cto));
	json_object_set_new(o, "dir", json_string(dir ? dir : "/tmp/bisect"));
	json_object_set_new(o, "tools_dir", json_string(tools ? tools : "/usr/bin"));
	if (copy) {
		json_t *a = json_array();

		for (char **p = copy; *p; p++)
			json_array_append_new(a, json_string(*p));
		json_object_set_new(o, "copy", a);
	}
	json_object_set_new(o, "boot_timeout", json_integer(bto));
	json_object_set_new(o, "power_tries", json_integer(tries));
	if (good)
		json_object_set_new(o, "good_kernel", json_string(good));
	json_decref(w->ssh);
	w->ssh = o;
	o = NULL;
	rc = 0;
out:
	json_decref(o);
	free(host);
	free(user);
	free(identity);
	free(kh);
	free(dir);
	free(good);
	free(tools);
	strv_free(copy);
	return rc;
}

/* A boot into the built kernel on a machine (ssh, kexec): its image, command line and build. */
static int kernel_boot_entry(struct conf_workload *w, const struct ctx *x, const struct ynode *def,
			     const char *where)
{
	static const char *const guest_only[] = { "qemu", "memory_mb", "cpus", "boot_timeout", NULL };
	int rc;

	for (const char *const *k = guest_only; *k; k++)
		if (ynode_get(def, *k))
			return at(x, ynode_get(def, *k), "'%s'%s is a setting of boot qemu, not of boot %s", *k,
				  where, w->boot);
	if ((rc = get_str(&w->kernel_image, x, def, "kernel_image", where, 0)) < 0 ||
	    (rc = get_str(&w->append, x, def, "append", where, 1)) < 0 ||
	    (rc = kernel_entry(w, x, def, where)) < 0)
		return rc;
	return 0;
}

/*
 * Boot kexec's settings, in a 'kexec' mapping, into w->kexec as the agent
 * reads them (agents/boot/kexec.c): its append (the pool's whole command
 * line; none: the running kernel's is reused) goes where qemu's does, so
 * that the job's variant follows it.
 */
static int kexec_entry(struct conf_workload *w, const struct ctx *x, const struct ynode *def,
		       const struct ynode *key, const char *where)
{
	const struct ynode *m = ynode_get(def, "kexec");
	char kwhere[160], *initrd = NULL, *good = NULL, *good_initrd = NULL, **reboot = NULL;
	int rc, ret = 300;

	(void)key;
	w->kexec = json_object();
	if (!m || ynode_is_null(m))
		goto done;
	if (m->kind != YNODE_MAP)
		return at(x, m, "'kexec'%s must be a mapping of keys, not %s", where, ynode_kind_name(m->kind));
	snprintf(kwhere, sizeof(kwhere), " in the kexec settings of workload '%s'", w->name);
	if ((rc = check_keys(x, m, kexec_keys, kwhere)) < 0 ||
	    (rc = get_str(&w->append, x, m, "append", kwhere, 1)) < 0 ||
	    (rc = get_str(&initrd, x, m, "initrd", kwhere, 1)) < 0 ||
	    (rc = get_int(&ret, x, m, "return_timeout", kwhere, 10, 86400)) < 0 ||
	    (rc = get_str(&good, x, m, "good_kernel", kwhere, 1)) < 0 ||
	    (rc = get_str(&good_initrd, x, m, "good_initrd", kwhere, 1)) < 0 ||
	    (rc = get_strv(&reboot, x, m, "reboot", kwhere, 0)) < 0)
		goto out;
	if ((good && good[0] != '/') || (good_initrd && good_initrd[0] != '/')) {
		rc = at(x, ynode_get(m, good && good[0] != '/' ? "good_kernel" : "good_initrd"),
			"'%s'%s must be an absolute path on the agent",
			good && good[0] != '/' ? "good_kernel" : "good_initrd", kwhere);
		goto out;
	}
	if (good_initrd && !good) {
		rc = at(x, ynode_get(m, "good_initrd"), "'good_initrd'%s goes with a good_kernel", kwhere);
		goto out;
	}
	if (reboot && (!reboot[0] || !reboot[0][0])) {
		rc = at(x, ynode_get(m, "reboot"), "'reboot'%s must be a command (an argv), not empty", kwhere);
		goto out;
	}
	if (ynode_get(m, "append"))
		json_object_set_new(w->kexec, "append", json_string(w->append ? w->append : ""));
	if (initrd)
		json_object_set_new(w->kexec, "initrd", json_string(initrd));
	if (good)
		json_object_set_new(w->kexec, "good_kernel", json_string(good));
	if (good_initrd)
		json_object_set_new(w->kexec, "good_initrd", json_string(good_initrd));
	if (reboot) {
		json_t *a = json_array();

		for (char **p = reboot; *p; p++)
			json_array_append_new(a, json_string(*p));
		json_object_set_new(w->kexec, "reboot", a);
	}
done:
	json_object_set_new(w->kexec, "return_timeout", json_integer(ret));
	rc = 0;
out:
	free(initrd);
	free(good);
	free(good_initrd);
	strv_free(reboot);
	return rc;
}

/*
 * The boot methods with settings of their own in a mapping named after
 * them ("ssh:", "kexec:"), one line each: the mapping's reader, called
 * for a workload of that boot only (key: the workload's, for errors).
 */
static const struct boot_settings {
	const char *boot;
	int (*entry)(struct conf_workload *w, const struct ctx *x, const struct ynode *def, const struct ynode *key,
		     const char *where);
} boot_settings[] = {
	{ "ssh", ssh_entry },
	{ "kexec", kexec_entry },
};

/* The settings of w's boot; refuses another method's mapping in w. NULL with *rc 0: none. */
static const struct boot_settings *boot_settings_of(int *rc, const struct conf_workload *w, const struct ctx *x,
						    const struct ynode *def, const char *where)
{
	const struct boot_settings *mine = NULL;

	*rc = 0;
	for (size_t i = 0; i < sizeof(boot_settings) / sizeof(boot_settings[0]); i++) {
		const struct ynode *m = ynode_get(def, boot_settings[i].boot);

		if (!strcmp(boot_settings[i].boot, w->boot))
			mine = &boot_settings[i];
		else if (m && !*rc)
			*rc = at(x, m, "'%s'%s holds the settings of boot %s, not of boot %s", boot_settings[i].boot,
				 where, boot_settings[i].boot, w->boot);
	}
	return *rc ? NULL : mine;
}

/* The settings of a boot into the built kernel, flat or in a 'qemu' mapping. */
static int guest_boot_entry(struct conf_workload *w, const struct ctx *x, const struct ynode *def,
			    const char *where)
{
	const struct ynode *q = ynode_get(def, "qemu");
	char qwhere[160];
	int rc;

	if ((rc = qemu_settings(w, x, def, where)) < 0 || (rc = kernel_entry(w, x, def, where)) < 0)
		return rc;
	if (q && !ynode_is_null(q)) {
		if (q->kind != YNODE_MAP)
			return at(x, q, "'qemu'%s must be a mapping of keys, not %s", where,
				  ynode_kind_name(q->kind));
		snprintf(qwhere, sizeof(qwhere), " in the qemu settings of workload '%s'", w->name);
		if ((rc = check_keys(x, q, qemu_keys, qwhere)) < 0 ||
		    (rc = qemu_settings(w, x, q, qwhere)) < 0)
			return rc;
	}
	return 0;
}

static int workload_entry(const struct ctx *x, void *elem, const struct ynode *key,
			  const struct ynode *def)
{
	struct conf_workload *w = elem;
	const struct workload_ops *ops;
	const struct boot_settings *bs;
	struct sbuf list = SBUF_INIT, list2 = SBUF_INIT;
	char where[128], *direction = NULL, **keys = all_workload_keys();
	int rc, places;

	w->name = xstrdup(key->str);
	w->type = xstrdup("command");
	w->boot = xstrdup("none");
	w->unit = xstrdup("ops/s");
	w->direction = DIR_HIGHER;
	w->build_timeout = 1800;
	w->run_timeout = 300;
	w->kernel_image = xstrdup("arch/x86/boot/bzImage");
	w->memory_mb = 512;
	w->cpus = 2;
	w->boot_timeout = 120;
	snprintf(where, sizeof(where), " in workload '%s'", w->name);
	if ((rc = check_keys(x, def, (const char *const *)keys, where)) < 0 ||
	    (rc = get_str(&w->type, x, def, "type", where, 0)) < 0 ||
	    (rc = get_str(&w->boot, x, def, "boot", where, 0)) < 0 ||
	    (rc = get_strv(&w->build, x, def, "build", where, 0)) < 0 ||
	    (rc = get_str(&direction, x, def, "direction", where, 0)) < 0 ||
	    (rc = get_int(&w->build_timeout, x, def, "build_timeout", where, 1, 7 * 86400)) < 0 ||
	    (rc = get_int(&w->run_timeout, x, def, "run_timeout", where, 1, 86400)) < 0 ||
	    (rc = get_bool(&w->profile, x, def, "profile", where)) < 0)
		goto out;

	/* Only what the agents implement; a typo must not reach them. */
	if (!(ops = workload_find(w->type))) {
		names_list(&list, 0, 0, 1);
		rc = at(x, ynode_get(def, "type"), "'type'%s must be %s, not '%s'", where, list.buf, w->type);
		goto out;
	}
	if (!(places = conf_boot_places(w->boot))) {
		names_list(&list, 1, 0, 1);
		rc = at(x, ynode_get(def, "boot"), "'boot'%s must be %s, not '%s'", where, list.buf, w->boot);
		goto out;
	}
	/* perf profiles at the culprit: only where the boot method records them (methods.c). */
	if (w->profile && !boot_method_profiles(w->boot)) {
		rc = at(x, ynode_get(def, "profile"), "'profile'%s: boot %s cannot record perf profiles (boot %s can)",
			where, w->boot, boot_profile_methods);
		goto out;
	}
	if (direction && !strcmp(direction, "lower")) {
		w->direction = DIR_LOWER;
	} else if (direction && strcmp(direction, "higher")) {
		rc = at(x, ynode_get(def, "direction"), "'direction'%s must be 'higher' or 'lower', not '%s'",
			where, direction);
		goto out;
	}
	/* An empty build list means the same as none: nothing to build. */
	if (w->build && !w->build[0]) {
		strv_free(w->build);
		w->build = NULL;
	}
	bs = boot_settings_of(&rc, w, x, def, where);
	if (rc < 0)
		goto out;
	if (places & BOOT_KERNEL) {
		/* A boot of the built kernel on a machine (ssh: a device; kexec: this machine). */
		if ((rc = kernel_boot_entry(w, x, def, where)) < 0)
			goto out;
	} else if (places & WORKLOAD_GUEST) {
		if ((rc = guest_boot_entry(w, x, def, where)) < 0)
			goto out;
	} else if (ynode_get(def, "kernel")) {
		names_list(&list, 0, WORKLOAD_GUEST, 0);
		names_list(&list2, 1, WORKLOAD_GUEST, 0);
		rc = at(x, ynode_get(def, "kernel"), "'kernel'%s builds a kernel to boot: it needs type "
			"%s with boot %s", where, list.buf, list2.buf);
		goto out;
	}
	if (!(ops->places & places)) {
		if (ops->places & WORKLOAD_GUEST) {
			names_list(&list, 1, ops->places, 0);
			rc = at(x, ynode_get(def, "boot") ? ynode_get(def, "boot") : key,
				"workload '%s' of type %s needs 'boot: %s' (it runs inside the built kernel)",
				w->name, w->type, list.buf);
		} else {
			names_list(&list, 0, places, 0);
			names_list(&list2, 1, ops->places, 0);
			rc = at(x, ynode_get(def, "boot"), "'boot: %s'%s needs type %s (type %s runs on "
				"the agent: boot %s)", w->boot, where, list.buf, w->type, list2.buf);
		}
		goto out;
	}
	/* The boot's own mapping once the type is known to run on it. */
	if ((bs && (rc = bs->entry(w, x, def, key, where)) < 0) ||
	    (rc = foreign_keys(ops, x, def, where)) < 0 ||
	    (rc = own_params(w, ops, x, def, where)) < 0)
		goto out;
	rc = check_params(w, ops, x, key, def, where);
out:
	sbuf_release(&list);
	sbuf_release(&list2);
	strv_free(keys);
	free(direction);
	return rc;
}

json_t *conf_workload_def(const struct conf_workload *w, const char *append)
{
	return conf_workload_def_job(w, append, NULL);
}

json_t *conf_workload_def_job(const struct conf_workload *w, const char *append, json_t *config)
{
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i}", "name", w->name, "type", w->type,
			      "boot", w->boot, "unit", w->unit,
			      "direction", w->direction == DIR_LOWER ? "lower" : "higher",
			      "build_timeout", w->build_timeout, "run_timeout", w->run_timeout);
	json_t *b = json_array();
	const char *own = w->append;
	char *line = NULL;

	for (char **p = w->build; p && *p; p++)
		json_array_append_new(b, json_string(*p));
	json_object_set_new(j, "build", b);
	if (w->profile)
		json_object_set_new(j, "profile", json_true());
	if (conf_boot_places(w->boot) & BOOT_KERNEL) {
		json_object_set_new(j, "kernel_image", json_string(w->kernel_image));
	} else if (conf_boot_places(w->boot) & WORKLOAD_GUEST) {
		json_object_set_new(j, "kernel_image", json_string(w->kernel_image));
		json_object_set_new(j, "memory_mb", json_integer(w->memory_mb));
		json_object_set_new(j, "cpus", json_integer(w->cpus));
		json_object_set_new(j, "boot_timeout", json_integer(w->boot_timeout));
	}
	if (w->kexec)
		json_object_set_new(j, "kexec", json_deep_copy(w->kexec));
	if (w->ssh)
		json_object_set_new(j, "ssh", json_deep_copy(w->ssh));
	/* The job's variant after the workload's own parameters: the later one wins. */
	if (own && append)
		line = xasprintf("%s %s", own, append);
	if (own || append)
		json_object_set_new(j, "append", json_string(line ? line : own ? own : append));
	free(line);
	if (w->kernel) {
		const struct conf_kernel *k = w->kernel;
		json_t *kj = json_pack("{s:s, s:s}", "base", k->base, "target", k->target);
		json_t *fr = json_array(), *ma = json_array();

		if (k->base_text)
			json_object_set_new(kj, "base_config", json_string(k->base_text));
		for (size_t i = 0; k->fragments[i]; i++)
			json_array_append_new(fr, json_pack("{s:s, s:s}", "name", k->fragments[i],
							    "text", k->fragment_text[i]));
		for (char **p = k->make_args; *p; p++)
			json_array_append_new(ma, json_string(*p));
		json_object_set_new(kj, "fragments", fr);
		json_object_set_new(kj, "make_args", ma);
		if (json_array_size(config))
			json_object_set_new(kj, "config", json_deep_copy(config));
		json_object_set_new(j, "kernel", kj);
	}
	/* The kind's own keys last: they are its whole knowledge. */
	if (w->params)
		json_object_update_missing(j, w->params);
	return j;
}

static int pool_entry(const struct ctx *x, void *elem, const struct ynode *key, const struct ynode *def)
{
	struct conf_pool *p = elem;
	char where[128];
	int rc;

	p->name = xstrdup(key->str);
	snprintf(where, sizeof(where), " in pool '%s'", p->name);
	if ((rc = check_keys(x, def, pool_keys, where)) < 0 ||
	    (rc = get_strv(&p->labels, x, def, "labels", where, 1)) < 0)
		return rc;
	/* No labels: every agent is in the pool. */
	if (!p->labels)
		p->labels = xcalloc(1, sizeof(char *));
	return 0;
}

/* auth: none | token | {mode, read, admin_token_file, secret_file, max_failures, failure_window}. */
static int get_auth(struct conf_auth *a, const struct ctx *x, const struct ynode *root)
{
	const struct ynode *v = ynode_get(root, "auth"), *m;
	char *mode = NULL, *read = NULL;
	int rc;

	if (!v)
		return 0;
	if (v->kind == YNODE_SCALAR) {
		if (!strcmp(v->str, "none") || !strcmp(v->str, "token")) {
			a->none = !strcmp(v->str, "none");
			return 0;
		}
		return at(x, v, "'auth' must be none, token or a mapping (mode, read, ...), not '%s'", v->str);
	}
	if (v->kind != YNODE_MAP)
		return at(x, v, "'auth' must be none, token or a mapping, not %s", ynode_kind_name(v->kind));
	if ((rc = check_keys(x, v, auth_keys, " in auth")) < 0 ||
	    (rc = get_str(&mode, x, v, "mode", " in auth", 0)) < 0 ||
	    (rc = get_str(&read, x, v, "read", " in auth", 0)) < 0 ||
	    (rc = get_str(&a->admin_token_file, x, v, "admin_token_file", " in auth", 1)) < 0 ||
	    (rc = get_str(&a->secret_file, x, v, "secret_file", " in auth", 1)) < 0 ||
	    (rc = get_int(&a->max_failures, x, v, "max_failures", " in auth", 1, 1000000)) < 0 ||
	    (rc = get_int(&a->failure_window, x, v, "failure_window", " in auth", 1, 86400)) < 0)
		goto out;
	if (mode && strcmp(mode, "none") && strcmp(mode, "token")) {
		m = ynode_get(v, "mode");
		rc = at(x, m, "'mode' in auth must be none or token, not '%s'", mode);
		goto out;
	}
	if (read && strcmp(read, "open") && strcmp(read, "token")) {
		m = ynode_get(v, "read");
		rc = at(x, m, "'read' in auth must be open (GETs need no token) or token, not '%s'", read);
		goto out;
	}
	a->none = mode && !strcmp(mode, "none");
	a->read_open = !read || !strcmp(read, "open");
out:
	free(mode);
	free(read);
	return rc;
}

int conf_bisectd_parse(struct conf_bisectd *c, const char *name, const char *text, size_t len)
{
	struct ctx x = { name, NULL, NULL };
	struct ynode *tree = NULL;
	const struct ynode *root;
	long long max_body = 1 << 20;
	void *arr;
	int rc;

	memset(c, 0, sizeof(*c));
	c->listen = xstrdup("127.0.0.1:7878");
	c->database = xstrdup("bisectd.db");
	c->mirrors = xstrdup("mirrors");
	c->log_level = xstrdup("info");
	{
		/* Beside the config file: etc/bisectd.yaml reads etc/kconfig/. */
		const char *slash = strrchr(name, '/');

		c->kconfig_dir = slash ? xasprintf("%.*s/kconfig", (int)(slash - name), name) : xstrdup("kconfig");
	}
	c->lease_seconds = 60;
	c->lease_grace_seconds = -1;
	c->agent_retire_seconds = 86400;
	c->max_body = 1 << 20;
	c->default_runs = 5;
	c->gnuplot = xstrdup("gnuplot");
	c->chart_timeout = 30;
	c->threads = CONF_THREADS_DEFAULT;
	c->max_connections = CONF_MAX_CONNECTIONS_DEFAULT;
	c->max_per_address = CONF_MAX_PER_ADDRESS_DEFAULT;
	c->idle_timeout = 120;
	c->auth.read_open = 1;
	c->auth.max_failures = 10;
	c->auth.failure_window = 60;

	if ((rc = ytree_parse(&tree, name, text, len)) < 0)
		goto out;
	x.root = tree;
	root = root_map(&x, &rc);
	if (rc < 0)
		goto out;
	if ((rc = check_keys(&x, root, bisectd_keys, "")) < 0 ||
	    (rc = get_str(&c->listen, &x, root, "listen", "", 0)) < 0 ||
	    (rc = get_str(&c->database, &x, root, "database", "", 0)) < 0 ||
	    (rc = get_str(&c->mirrors, &x, root, "mirrors", "", 0)) < 0 ||
	    (rc = get_str(&c->kconfig_dir, &x, root, "kconfig_dir", "", 0)) < 0 ||
	    (rc = get_str(&c->log_level, &x, root, "log_level", "", 0)) < 0 ||
	    (rc = get_int(&c->lease_seconds, &x, root, "lease_seconds", "", 1, 86400)) < 0 ||
	    (rc = get_int(&c->lease_grace_seconds, &x, root, "lease_grace_seconds", "", 0, 86400)) < 0 ||
	    (rc = get_int(&c->agent_retire_seconds, &x, root, "agent_retire_seconds", "", 3, 31536000)) < 0 ||
	    (rc = check_retire(&x, root, c)) < 0 ||
	    (rc = get_ll(&max_body, &x, root, "max_body", "", 1024, 1 << 30)) < 0 ||
	    (rc = get_int(&c->default_runs, &x, root, "default_runs", "", 1, 100)) < 0 ||
	    (rc = get_str(&c->charts, &x, root, "charts", "", 0)) < 0 ||
	    (rc = get_str(&c->gnuplot, &x, root, "gnuplot", "", 0)) < 0 ||
	    (rc = get_int(&c->chart_timeout, &x, root, "chart_timeout", "", 1, 600)) < 0 ||
	    (rc = get_int(&c->threads, &x, root, "threads", "", 1, 256)) < 0 ||
	    (rc = get_int(&c->max_connections, &x, root, "max_connections", "", 16, 1000000)) < 0 ||
	    (rc = get_int(&c->max_per_address, &x, root, "max_connections_per_address", "", 0, 1000000)) < 0 ||
	    (rc = get_int(&c->idle_timeout, &x, root, "idle_timeout", " (seconds, longer than the longest "
			  "claim wait)", CONF_MAX_CLAIM_WAIT + 1, 86400)) < 0 ||
	    (rc = get_str(&c->tls_cert, &x, root, "tls_cert", "", 1)) < 0 ||
	    (rc = get_str(&c->tls_key, &x, root, "tls_key", "", 1)) < 0 ||
	    (rc = get_auth(&c->auth, &x, root)) < 0 ||
	    (rc = check_log_level(&x, root, c->log_level)) < 0 ||
	    (rc = check_listen(&x, root, c->listen)) < 0 ||
	    (rc = check_tls(&x, root, c)) < 0)
		goto out;
	c->max_body = (size_t)max_body;
	x.kconfig_dir = c->kconfig_dir;
	if (!c->charts) {
		/* Beside the database: a bisectd started in a source tree does not fill it with charts. */
		const char *slash = c->database ? strrchr(c->database, '/') : NULL;

		c->charts = slash ? xasprintf("%.*s/charts", (int)(slash - c->database), c->database)
				  : xstrdup("charts");
	}

	rc = load_section(&arr, &c->nr_repos, &x, root, "repos", "repo", sizeof(*c->repos), repo_entry);
	c->repos = arr;
	if (rc < 0)
		goto out;
	rc = load_section(&arr, &c->nr_workloads, &x, root, "workloads", "workload",
			  sizeof(*c->workloads), workload_entry);
	c->workloads = arr;
	if (rc < 0)
		goto out;
	rc = load_section(&arr, &c->nr_pools, &x, root, "pools", "pool", sizeof(*c->pools), pool_entry);
	c->pools = arr;
out:
	ynode_free(tree);
	if (rc < 0)
		conf_bisectd_release(c);
	return rc;
}

int conf_bisectd_load(struct conf_bisectd *c, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(c, 0, sizeof(*c));
	if ((rc = file_read(&text, &len, path, CONF_MAX_BYTES)) < 0)
		return rc;
	rc = conf_bisectd_parse(c, path, text, len);
	free(text);
	return rc;
}

void conf_bisectd_release(struct conf_bisectd *c)
{
	for (size_t i = 0; i < c->nr_repos; i++) {
		free(c->repos[i].name);
		free(c->repos[i].url);
	}
	for (size_t i = 0; i < c->nr_workloads; i++) {
		struct conf_workload *w = &c->workloads[i];

		free(w->name);
		free(w->type);
		free(w->boot);
		strv_free(w->build);
		kernel_free(w->kernel);
		free(w->unit);
		free(w->kernel_image);
		free(w->append);
		json_decref(w->kexec);
		json_decref(w->params);
		json_decref(w->ssh);
	}
	for (size_t i = 0; i < c->nr_pools; i++) {
		free(c->pools[i].name);
		strv_free(c->pools[i].labels);
	}
	free(c->repos);
	free(c->workloads);
	free(c->pools);
	free(c->listen);
	free(c->database);
	free(c->mirrors);
	free(c->kconfig_dir);
	free(c->log_level);
	free(c->charts);
	free(c->gnuplot);
	free(c->tls_cert);
	free(c->tls_key);
	free(c->auth.admin_token_file);
	free(c->auth.secret_file);
	memset(c, 0, sizeof(*c));
}

int conf_agent_parse(struct conf_agent *c, const char *name, const char *text, size_t len)
{
	struct ctx x = { name, NULL, NULL };
	struct ynode *tree = NULL;
	const struct ynode *root;
	const char *co;
	int rc;

	memset(c, 0, sizeof(*c));
	c->coordinator = xstrdup("http://127.0.0.1:7878");
	c->labels = xcalloc(1, sizeof(char *));
	c->log_level = xstrdup("info");
	c->heartbeat = 5;
	c->poll_wait = 20;
	c->cpu = -1;
	c->kcache_max = KCACHE_MAX_DEFAULT;

	if ((rc = ytree_parse(&tree, name, text, len)) < 0)
		goto out;
	x.root = tree;
	root = root_map(&x, &rc);
	if (rc < 0)
		goto out;
	if ((rc = check_keys(&x, root, agent_keys, "")) < 0 ||
	    (rc = get_str(&c->coordinator, &x, root, "coordinator", "", 0)) < 0 ||
	    (rc = get_str(&c->name, &x, root, "name", "", 0)) < 0 ||
	    (rc = get_strv(&c->labels, &x, root, "labels", "", 1)) < 0 ||
	    (rc = get_str(&c->workdir, &x, root, "workdir", "", 0)) < 0 ||
	    (rc = get_str(&c->log_level, &x, root, "log_level", "", 0)) < 0 ||
	    (rc = get_int(&c->heartbeat, &x, root, "heartbeat", "", 1, 3600)) < 0 ||
	    (rc = get_int(&c->poll_wait, &x, root, "poll_wait", "", 0, 300)) < 0 ||
	    (rc = get_int(&c->cpu, &x, root, "cpu", "", -1, MAX_CPU)) < 0 ||
	    (rc = get_str(&c->measure_lock, &x, root, "measure_lock", "", 1)) < 0 ||
	    (rc = get_str(&c->build_lock, &x, root, "build_lock", "", 1)) < 0 ||
	    (rc = get_int(&c->build_jobs, &x, root, "build_jobs", "", 0, 1024)) < 0 ||
	    (rc = get_size(&c->kcache_max, &x, root, "kcache_max", "")) < 0 ||
	    (rc = get_str(&c->ca_file, &x, root, "ca_file", "", 1)) < 0 ||
	    (rc = get_str(&c->enrol_token_file, &x, root, "enrol_token_file", "", 1)) < 0 ||
	    (rc = get_str(&c->token_file, &x, root, "token_file", "", 1)) < 0 ||
	    (rc = check_log_level(&x, root, c->log_level)) < 0)
		goto out;

	co = c->coordinator;
	if (strncmp(co, "http://", 7) && strncmp(co, "https://", 8)) {
		rc = at(&x, ynode_get(root, "coordinator"),
			"'coordinator' must be a URL starting with http:// or https://, not '%s'", co);
		goto out;
	}
	if (!c->name) {
		rc = at(&x, root, "'name' is missing (required: this agent's name)");
		goto out;
	}
	if (!name_ok(c->name, strlen(c->name), NULL)) {
		rc = at(&x, ynode_get(root, "name"), "'name' must be 1 to %d characters of A-Z a-z 0-9 . _ -, not '%s'",
			NAME_MAX_LEN, c->name);
		goto out;
	}
	if (!c->workdir) {
		rc = at(&x, root, "'workdir' is missing (required: the directory for work trees)");
		goto out;
	}
out:
	ynode_free(tree);
	if (rc < 0)
		conf_agent_release(c);
	return rc;
}

int conf_agent_load(struct conf_agent *c, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(c, 0, sizeof(*c));
	if ((rc = file_read(&text, &len, path, CONF_MAX_BYTES)) < 0)
		return rc;
	rc = conf_agent_parse(c, path, text, len);
	free(text);
	return rc;
}

void conf_agent_release(struct conf_agent *c)
{
	free(c->coordinator);
	free(c->name);
	strv_free(c->labels);
	free(c->workdir);
	free(c->log_level);
	free(c->measure_lock);
	free(c->build_lock);
	free(c->ca_file);
	free(c->enrol_token_file);
	free(c->token_file);
	memset(c, 0, sizeof(*c));
}

const struct conf_repo *conf_repo_find(const struct conf_bisectd *c, const char *name)
{
	for (size_t i = 0; i < c->nr_repos; i++)
		if (!strcmp(c->repos[i].name, name))
			return &c->repos[i];
	return NULL;
}

const struct conf_workload *conf_workload_find(const struct conf_bisectd *c, const char *name)
{
	for (size_t i = 0; i < c->nr_workloads; i++)
		if (!strcmp(c->workloads[i].name, name))
			return &c->workloads[i];
	return NULL;
}

const struct conf_pool *conf_pool_find(const struct conf_bisectd *c, const char *name)
{
	for (size_t i = 0; i < c->nr_pools; i++)
		if (!strcmp(c->pools[i].name, name))
			return &c->pools[i];
	return NULL;
}

int conf_pool_matches(const struct conf_pool *p, char *const *labels)
{
	for (char *const *want = p->labels; want && *want; want++) {
		int found = 0;

		for (char *const *have = labels; have && *have; have++)
			if (!strcmp(*want, *have)) {
				found = 1;
				break;
			}
		if (!found)
			return 0;
	}
	return 1;
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
