/*
 * conf: bisectd.yaml and agent.yaml from a yamltree into structs. Every
 * key is checked against the list of keys its mapping may hold, so a typo
 * is an error at its line and column rather than a silently ignored value.
 *
 * This room reads the two files and their sections (repos, pools,
 * auth); a mapping's keys are read by conf_read.c, a workload by
 * conf_workload.c and its kernel build and boot by conf_boot.c.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "conf_internal.h"
#include "err.h"
#include "kconfig.h"
#include "log.h"
#include "workload.h"

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
static const char *const pool_keys[] = { "labels", NULL };
static const char *const agent_keys[] = {
	"coordinator", "name", "labels", "workdir", "log_level", "heartbeat",
	"poll_wait", "cpu", "measure_lock", "build_lock", "build_jobs", "kcache_max", "ca_file",
	"enrol_token_file", "token_file", NULL
};

static int check_log_level(const struct ctx *x, const struct ynode *map, const char *level)
{
	if (level && log_level_parse(level) < 0)
		return conf_at(x, ynode_get(map, "log_level"),
			       "'log_level' must be one of debug, info, warn, error, not '%s'", level);
	return 0;
}

/*
 * An agent is offline after three lease periods: retiring it sooner would
 * retire agents that are only late. Without the keys: a grace of one
 * lease, and a day or three leases, whichever is longer.
 */
static int check_retire(struct conf_bisectd *c, const struct ctx *x, const struct ynode *map)
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
		return conf_at(x, ynode_get(map, "agent_retire_seconds"),
			       "'agent_retire_seconds' (%d) must be at least three lease periods "
			       "(3 x lease_seconds = %lld)", c->agent_retire_seconds, min);
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
	return conf_at(x, ynode_get(map, "listen"), "'listen' must be HOST:PORT with a port from 1 to 65535, not '%s'",
		       listen);
}

/* A certificate needs its key: both or neither. */
static int check_tls(const struct ctx *x, const struct ynode *map, const struct conf_bisectd *c)
{
	if (!c->tls_cert == !c->tls_key)
		return 0;
	return conf_at(x, ynode_get(map, c->tls_cert ? "tls_cert" : "tls_key"),
		       "'%s' needs '%s' too (TLS: the PEM certificate and its private key), or neither for plain HTTP",
		       c->tls_cert ? "tls_cert" : "tls_key", c->tls_cert ? "tls_key" : "tls_cert");
}

static int repo_entry(const struct ctx *x, void *elem, const struct ynode *key, const struct ynode *def)
{
	struct conf_repo *r = elem;
	char where[128];
	int rc;

	r->name = xstrdup(key->str);
	snprintf(where, sizeof(where), " in repo '%s'", r->name);
	if ((rc = conf_check_keys(x, def, repo_keys, where)) < 0 ||
	    (rc = conf_get_str(&r->url, x, def, "url", where, 0)) < 0)
		return rc;
	if (!r->url)
		return conf_at(x, key, "repo '%s' has no 'url' (required: a URL or path to clone from)", r->name);
	return 0;
}

static int pool_entry(const struct ctx *x, void *elem, const struct ynode *key, const struct ynode *def)
{
	struct conf_pool *p = elem;
	char where[128];
	int rc;

	p->name = xstrdup(key->str);
	snprintf(where, sizeof(where), " in pool '%s'", p->name);
	if ((rc = conf_check_keys(x, def, pool_keys, where)) < 0 ||
	    (rc = conf_get_strv(&p->labels, x, def, "labels", where, 1)) < 0)
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
		return conf_at(x, v, "'auth' must be none, token or a mapping (mode, read, ...), not '%s'", v->str);
	}
	if (v->kind != YNODE_MAP)
		return conf_at(x, v, "'auth' must be none, token or a mapping, not %s", ynode_kind_name(v->kind));
	if ((rc = conf_check_keys(x, v, auth_keys, " in auth")) < 0 ||
	    (rc = conf_get_str(&mode, x, v, "mode", " in auth", 0)) < 0 ||
	    (rc = conf_get_str(&read, x, v, "read", " in auth", 0)) < 0 ||
	    (rc = conf_get_str(&a->admin_token_file, x, v, "admin_token_file", " in auth", 1)) < 0 ||
	    (rc = conf_get_str(&a->secret_file, x, v, "secret_file", " in auth", 1)) < 0 ||
	    (rc = conf_get_int(&a->max_failures, x, v, "max_failures", " in auth", 1, 1000000)) < 0 ||
	    (rc = conf_get_int(&a->failure_window, x, v, "failure_window", " in auth", 1, 86400)) < 0)
		goto out;
	if (mode && strcmp(mode, "none") && strcmp(mode, "token")) {
		m = ynode_get(v, "mode");
		rc = conf_at(x, m, "'mode' in auth must be none or token, not '%s'", mode);
		goto out;
	}
	if (read && strcmp(read, "open") && strcmp(read, "token")) {
		m = ynode_get(v, "read");
		rc = conf_at(x, m, "'read' in auth must be open (GETs need no token) or token, not '%s'", read);
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
	root = conf_root_map(&x, &rc);
	if (rc < 0)
		goto out;
	if ((rc = conf_check_keys(&x, root, bisectd_keys, "")) < 0 ||
	    (rc = conf_get_str(&c->listen, &x, root, "listen", "", 0)) < 0 ||
	    (rc = conf_get_str(&c->database, &x, root, "database", "", 0)) < 0 ||
	    (rc = conf_get_str(&c->mirrors, &x, root, "mirrors", "", 0)) < 0 ||
	    (rc = conf_get_str(&c->kconfig_dir, &x, root, "kconfig_dir", "", 0)) < 0 ||
	    (rc = conf_get_str(&c->log_level, &x, root, "log_level", "", 0)) < 0 ||
	    (rc = conf_get_int(&c->lease_seconds, &x, root, "lease_seconds", "", 1, 86400)) < 0 ||
	    (rc = conf_get_int(&c->lease_grace_seconds, &x, root, "lease_grace_seconds", "", 0, 86400)) < 0 ||
	    (rc = conf_get_int(&c->agent_retire_seconds, &x, root, "agent_retire_seconds", "", 3, 31536000)) < 0 ||
	    (rc = check_retire(c, &x, root)) < 0 ||
	    (rc = conf_get_ll(&max_body, &x, root, "max_body", "", 1024, 1 << 30)) < 0 ||
	    (rc = conf_get_int(&c->default_runs, &x, root, "default_runs", "", 1, 100)) < 0 ||
	    (rc = conf_get_str(&c->charts, &x, root, "charts", "", 0)) < 0 ||
	    (rc = conf_get_str(&c->gnuplot, &x, root, "gnuplot", "", 0)) < 0 ||
	    (rc = conf_get_int(&c->chart_timeout, &x, root, "chart_timeout", "", 1, 600)) < 0 ||
	    (rc = conf_get_int(&c->threads, &x, root, "threads", "", 1, 256)) < 0 ||
	    (rc = conf_get_int(&c->max_connections, &x, root, "max_connections", "", 16, 1000000)) < 0 ||
	    (rc = conf_get_int(&c->max_per_address, &x, root, "max_connections_per_address", "", 0, 1000000)) < 0 ||
	    (rc = conf_get_int(&c->idle_timeout, &x, root, "idle_timeout", " (seconds, longer than the longest "
			       "claim wait)", CONF_MAX_CLAIM_WAIT + 1, 86400)) < 0 ||
	    (rc = conf_get_str(&c->tls_cert, &x, root, "tls_cert", "", 1)) < 0 ||
	    (rc = conf_get_str(&c->tls_key, &x, root, "tls_key", "", 1)) < 0 ||
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

	rc = conf_load_section(&arr, &c->nr_repos, &x, root, "repos", "repo", sizeof(*c->repos), repo_entry);
	c->repos = arr;
	if (rc < 0)
		goto out;
	rc = conf_load_section(&arr, &c->nr_workloads, &x, root, "workloads", "workload",
			       sizeof(*c->workloads), conf_workload_entry);
	c->workloads = arr;
	if (rc < 0)
		goto out;
	rc = conf_load_section(&arr, &c->nr_pools, &x, root, "pools", "pool", sizeof(*c->pools), pool_entry);
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
		conf_kernel_free(w->kernel);
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
	root = conf_root_map(&x, &rc);
	if (rc < 0)
		goto out;
	if ((rc = conf_check_keys(&x, root, agent_keys, "")) < 0 ||
	    (rc = conf_get_str(&c->coordinator, &x, root, "coordinator", "", 0)) < 0 ||
	    (rc = conf_get_str(&c->name, &x, root, "name", "", 0)) < 0 ||
	    (rc = conf_get_strv(&c->labels, &x, root, "labels", "", 1)) < 0 ||
	    (rc = conf_get_str(&c->workdir, &x, root, "workdir", "", 0)) < 0 ||
	    (rc = conf_get_str(&c->log_level, &x, root, "log_level", "", 0)) < 0 ||
	    (rc = conf_get_int(&c->heartbeat, &x, root, "heartbeat", "", 1, 3600)) < 0 ||
	    (rc = conf_get_int(&c->poll_wait, &x, root, "poll_wait", "", 0, 300)) < 0 ||
	    (rc = conf_get_int(&c->cpu, &x, root, "cpu", "", -1, MAX_CPU)) < 0 ||
	    (rc = conf_get_str(&c->measure_lock, &x, root, "measure_lock", "", 1)) < 0 ||
	    (rc = conf_get_str(&c->build_lock, &x, root, "build_lock", "", 1)) < 0 ||
	    (rc = conf_get_int(&c->build_jobs, &x, root, "build_jobs", "", 0, 1024)) < 0 ||
	    (rc = conf_get_size(&c->kcache_max, &x, root, "kcache_max", "")) < 0 ||
	    (rc = conf_get_str(&c->ca_file, &x, root, "ca_file", "", 1)) < 0 ||
	    (rc = conf_get_str(&c->enrol_token_file, &x, root, "enrol_token_file", "", 1)) < 0 ||
	    (rc = conf_get_str(&c->token_file, &x, root, "token_file", "", 1)) < 0 ||
	    (rc = check_log_level(&x, root, c->log_level)) < 0)
		goto out;

	co = c->coordinator;
	if (strncmp(co, "http://", 7) && strncmp(co, "https://", 8)) {
		rc = conf_at(&x, ynode_get(root, "coordinator"),
			     "'coordinator' must be a URL starting with http:// or https://, not '%s'", co);
		goto out;
	}
	if (!c->name) {
		rc = conf_at(&x, root, "'name' is missing (required: this agent's name)");
		goto out;
	}
	if (!conf_name_ok(c->name, strlen(c->name), NULL)) {
		rc = conf_at(&x, ynode_get(root, "name"),
			     "'name' must be 1 to %d characters of A-Z a-z 0-9 . _ -, not '%s'", NAME_MAX_LEN, c->name);
		goto out;
	}
	if (!c->workdir) {
		rc = conf_at(&x, root, "'workdir' is missing (required: the directory for work trees)");
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
