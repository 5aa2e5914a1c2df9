/* kbuild: configure and build a kernel, with a cache of built images. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "kbuild.h"
#include "kconfig.h"
#include "kconfig_apply.h"
#include "log.h"
#include "run.h"
#include "util.h"

#define KBUILD_OUTPUT_MAX (32 << 20) /* per stream; a tinyconfig build prints about 200 KiB */
#define KBUILD_TAIL_MAX 4096
#define KBUILD_MAX_ARGS 64

/* What building a kernel needs besides a compiler; checked so that a missing one is the agent's fault. */
static const char *const kbuild_tools[] = { "make", "gcc", "flex", "bison", "bc", "perl", NULL };

__attribute__((format(printf, 3, 4)))
static int say(struct kbuild_result *r, const char *status, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return ERR_FAIL;
}

/* Counts "  CC      net/ipv4/udp.o" lines as make prints them, across reads. */
struct counter {
	const struct kbuild *k;
	long files;
	char head[6];     /* the start of the current line */
	size_t head_len;
};

static void count_output(void *arg, int stream, const char *data, size_t n)
{
	struct counter *c = arg;
	long before = c->files;

	if (stream != 1)
		return;
	for (size_t i = 0; i < n; i++) {
		if (data[i] == '\n') {
			c->head_len = 0;
			continue;
		}
		if (c->head_len < sizeof(c->head)) {
			c->head[c->head_len++] = data[i];
			if (c->head_len == 5 && !memcmp(c->head, "  CC ", 5))
				c->files++;
		}
	}
	if (c->files != before && c->k->progress)
		c->k->progress(c->k->arg, c->files);
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Copies src to dst (created 0644, replaced). */
static int copy_file(const char *src, const char *dst)
{
	char *data = NULL;
	size_t len = 0;
	int rc = file_read(&data, &len, src, 1u << 30);

	if (rc == 0)
		rc = file_write_atomic(dst, data, len);
	free(data);
	return rc;
}

/* Bytes in the files under path (not following links). */
static long long tree_bytes(const char *path)
{
	struct stat st;
	struct dirent *e;
	long long sum = 0;
	DIR *d;

	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return S_ISREG(st.st_mode) ? (long long)st.st_size : 0;
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d))) {
		char *sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		sub = xasprintf("%s/%s", path, e->d_name);
		sum += tree_bytes(sub);
		free(sub);
	}
	closedir(d);
	return sum;
}

struct centry {
	char *name;
	struct timespec used;   /* the entry's mtime: when it was built or last used */
	long long bytes;
};

static int cmp_used(const void *a, const void *b)
{
	const struct centry *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Keeps the cache within k->cache_max bytes: the entries used longest ago
 * go first (a hit touches its entry), but never the entry named keep, the
 * one just built. A bisection comes back to the commits it measured last,
 * and the ends of a range are used again by its next jobs; an entry
 * removed is only a rebuild, mostly from ccache. What it removed goes
 * into the build log.
 */
static void cache_trim(struct sbuf *log, const struct kbuild *k, const char *keep)
{
	struct centry *es = NULL;
	size_t n = 0, cap = 0, removed = 0;
	long long total = 0, freed = 0;
	struct dirent *e;
	DIR *d;

	if (k->cache_max <= 0 || !(d = opendir(k->cachedir)))
		return;
	while ((e = readdir(d))) {
		struct stat st;
		char *path;

		if (e->d_name[0] == '.')   /* ., .., and entries being written (.new-*) */
			continue;
		path = xasprintf("%s/%s", k->cachedir, e->d_name);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				es = xrealloc(es, cap * sizeof(*es));
			}
			es[n] = (struct centry){ xstrdup(e->d_name), st.st_mtim, tree_bytes(path) };
			total += es[n++].bytes;
		}
		free(path);
	}
	closedir(d);
	qsort(es, n, sizeof(*es), cmp_used);
	for (size_t i = 0; i < n && total > k->cache_max; i++) {
		char *path;

		if (!strcmp(es[i].name, keep))
			continue;
		path = xasprintf("%s/%s", k->cachedir, es[i].name);
		if (remove_tree(path) == 0) {
			total -= es[i].bytes;
			freed += es[i].bytes;
			removed++;
		} else {
			log_warn("kernel cache: cannot remove %s: %s", path, err_msg());
		}
		free(path);
	}
	if (removed) {
		sbuf_addf(log, "# kernel cache: removed %zu image%s used longest ago (%.1f MiB) to stay within "
			  "%.1f MiB; %.1f MiB kept\n", removed, removed == 1 ? "" : "s", freed / 1048576.0,
			  k->cache_max / 1048576.0, total / 1048576.0);
		log_info("kernel cache: removed %zu image%s used longest ago (%.1f MiB), %.1f MiB kept",
			 removed, removed == 1 ? "" : "s", freed / 1048576.0, total / 1048576.0);
	}
	for (size_t i = 0; i < n; i++)
		free(es[i].name);
	free(es);
}

/* The parts of the "kernel" object, checked. */
struct kdef {
	const char *base, *base_config, *target;
	const char *make_args[KBUILD_MAX_ARGS + 1];
	json_t *fragments;
	struct kconfig job;   /* the job's own options ("config"), after the fragments */
};

static int kdef_parse(struct kdef *d, json_t *kernel)
{
	json_t *x;
	size_t i;

	memset(d, 0, sizeof(*d));
	kconfig_init(&d->job);
	if (!json_is_object(kernel))
		return err_set(ERR_INVALID, "workload 'kernel' must be an object");
	d->base = json_string_value(json_object_get(kernel, "base"));
	d->target = json_string_value(json_object_get(kernel, "target"));
	d->base_config = json_string_value(json_object_get(kernel, "base_config"));
	d->fragments = json_object_get(kernel, "fragments");
	if (!d->base || !*d->base || !d->target || !*d->target || strchr(d->target, '='))
		return err_set(ERR_INVALID, "workload 'kernel' needs a 'base' and a make 'target'");
	if (d->fragments && !json_is_array(d->fragments))
		return err_set(ERR_INVALID, "workload 'kernel': 'fragments' must be an array");
	json_array_foreach(d->fragments, i, x) {
		const char *name = json_string_value(json_object_get(x, "name"));

		if (!name || !*name || strchr(name, '/') || name[0] == '.' ||
		    !json_is_string(json_object_get(x, "text")))
			return err_set(ERR_INVALID, "workload 'kernel': fragment %zu needs a plain 'name' "
				       "and its 'text'", i);
	}
	json_array_foreach(json_object_get(kernel, "make_args"), i, x) {
		const char *a = json_string_value(x);

		if (i >= KBUILD_MAX_ARGS || !a || !strchr(a, '=') || a[0] == '-')
			return err_set(ERR_INVALID, "workload 'kernel': 'make_args' takes at most %d "
				       "VAR=value strings", KBUILD_MAX_ARGS);
		d->make_args[i] = a;
	}
	x = json_object_get(kernel, "config");
	if (x) {
		const char *opts[KCONFIG_JOB_MAX];
		json_t *o;

		if (!json_is_array(x) || json_array_size(x) > KCONFIG_JOB_MAX)
			return err_set(ERR_INVALID, "workload 'kernel': 'config' must be an array of at most %d "
				       "\"CONFIG_X=value\" strings", KCONFIG_JOB_MAX);
		json_array_foreach(x, i, o)
			if (!(opts[i] = json_string_value(o)))
				return err_set(ERR_INVALID, "workload 'kernel': 'config' %zu is not a string", i);
		if (kconfig_job_parse(&d->job, opts, json_array_size(x)))
			return err_set(ERR_INVALID, "workload 'kernel': %s", err_msg());
	}
	return 0;
}

/*
 * Writes the fragments (and a base file) into dir, where verification
 * messages name them ("udp.config:3"); paths into frags (NULL-terminated)
 * and *base (a make target, or the base file's path).
 */
static int write_config_files(char ***frags, char **base, const struct kdef *d, const char *dir)
{
	size_t n = json_array_size(d->fragments), i;
	json_t *x;
	int rc;

	*frags = xcalloc(n + 1, sizeof(char *));
	*base = NULL;
	if ((rc = remove_tree(dir)) || (rc = mkdir_p(dir, 0755)))
		return rc;
	json_array_foreach(d->fragments, i, x) {
		const char *text = json_string_value(json_object_get(x, "text"));

		(*frags)[i] = xasprintf("%s/%s.config", dir, json_string_value(json_object_get(x, "name")));
		if ((rc = file_write_atomic((*frags)[i], text, strlen(text))))
			return rc;
	}
	if (!d->base_config) {
		*base = xstrdup(d->base);
		return 0;
	}
	*base = xasprintf("%s/base-%s", dir, strrchr(d->base, '/') ? strrchr(d->base, '/') + 1 : d->base);
	return file_write_atomic(*base, d->base_config, strlen(d->base_config));
}

static void log_cmd(struct sbuf *log, const char *const *argv)
{
	sbuf_adds(log, "# $");
	for (; *argv; argv++)
		sbuf_addf(log, " %s", *argv);
	sbuf_adds(log, "\n");
}

int kbuild_run(struct kbuild_result *r, const struct kbuild *k)
{
	struct kconfig_apply_opts ko = KCONFIG_APPLY_OPTS_INIT;
	struct run_opts ro = RUN_OPTS_INIT;
	struct run_result res;
	struct counter counter = { k, 0, "", 0 };
	struct sbuf log = SBUF_INIT;
	struct kconfig_overrides ov = KCONFIG_OVERRIDES_INIT;
	struct kdef d;
	char **frags = NULL, *base = NULL, *fragdir = NULL, *entry = NULL, *image = NULL;
	char *tmp = NULL, *built = NULL, *cc = NULL, *o_arg = NULL, *j_arg = NULL, *basedir = NULL;
	const char *env[8], *make_args[KBUILD_MAX_ARGS + 2], *argv[KBUILD_MAX_ARGS + 6];
	size_t nenv = 0, nargs = 0, nargv = 0;
	int64_t t0 = now_ms();
	char how[64];
	uint64_t h;
	int rc, jobs, locked = 0, own_cc = 0;

	memset(r, 0, sizeof(*r));
	r->status = "failed";
	if (kdef_parse(&d, k->kernel) < 0) {
		kconfig_release(&d.job);
		return say(r, "failed", "%s", err_msg());
	}
	if (!k->kernel_image || !path_inside(k->kernel_image)) {
		say(r, "failed", "kernel_image '%s' is not a path inside the build output",
		    k->kernel_image ? k->kernel_image : "");
		goto out;
	}
	for (const char *const *t = k->tools ? k->tools : kbuild_tools; *t; t++)
		if (!in_path(*t)) {
			say(r, "failed", "this agent cannot build kernels: '%s' is not installed "
			    "(make deps-kernel installs what a build needs)", *t);
			goto out;
		}

	fragdir = xasprintf("%s/bisectd-fragments", k->outdir);
	if ((rc = mkdir_p(k->outdir, 0755)) || (rc = write_config_files(&frags, &base, &d, fragdir))) {
		say(r, "failed", "cannot write the kernel config fragments in %s: %s", fragdir, err_msg());
		goto out;
	}
	/* The job's options are in the hash: other options, another build. */
	if ((rc = kconfig_config_hash_job(r->config_hash, base, (const char *const *)frags, &d.job))) {
		say(r, "failed", "kernel config: %s", err_msg());
		goto out;
	}
	/* What else decides the image: the target, the make arguments, where the image is. */
	h = fnv(0xcbf29ce484222325ULL, d.target);
	h = fnv(h, k->kernel_image);
	for (size_t i = 0; d.make_args[i]; i++)
		h = fnv(fnv(h, "\n"), d.make_args[i]);
	snprintf(r->key, sizeof(r->key), "%.40s-%s-%08" PRIx32, k->tree_id, r->config_hash,
		 (uint32_t)(h ^ (h >> 32)));
	entry = xasprintf("%s/%s", k->cachedir, r->key);
	image = xasprintf("%s/%s", entry, k->kernel_image);
	if (is_dir(entry) && access(image, R_OK) == 0) {
		/* Used now: the cache keeps what was used last (cache_trim()). */
		utimensat(AT_FDCWD, entry, NULL, 0);
		r->cached = 1;
		r->image_dir = entry;
		entry = NULL;
		r->status = "ok";
		r->error[0] = '\0';
		rc = 0;
		goto out;
	}

	/* One compiler for configuring and building: kconfig asks it what it supports. */
	for (size_t i = 0; d.make_args[i]; i++)
		make_args[nargs++] = d.make_args[i];
	/* A workload that names its compiler (CC=clang, LLVM=1) keeps it. */
	for (size_t i = 0; d.make_args[i]; i++)
		if (!strncmp(d.make_args[i], "CC=", 3) || !strncmp(d.make_args[i], "LLVM=", 5))
			own_cc = 1;
	if (!own_cc && in_path("ccache")) {
		cc = xstrdup("CC=ccache gcc");
		make_args[nargs++] = cc;
		if (k->ccache_base) {
			basedir = xasprintf("CCACHE_BASEDIR=%s", k->ccache_base);
			env[nenv++] = basedir;
			/*
			 * Kbuild maps the source tree to "" for __FILE__: the same
			 * output from any agent's tree, but an absolute path in the
			 * option that would keep agents from sharing hits.
			 */
			env[nenv++] = "CCACHE_IGNOREOPTIONS=-fmacro-prefix-map=*";
		}
	}
	make_args[nargs] = NULL;
	/* A build that does not depend on when or where it ran: init/version.o stays cached. */
	env[nenv++] = "KBUILD_BUILD_TIMESTAMP=bisectd";
	env[nenv++] = "KBUILD_BUILD_USER=bisect-agent";
	env[nenv++] = "KBUILD_BUILD_HOST=bisect-agent";
	env[nenv++] = "LC_ALL=C";
	env[nenv] = NULL;

	if (k->serialize)
		k->serialize(k->arg, 1);
	locked = 1;
	t0 = now_ms(); /* the build's time, not the wait for the lock */
	ko.srcdir = k->srcdir;
	ko.outdir = k->outdir;
	ko.base = base;
	ko.fragments = (const char *const *)frags;
	ko.make_args = make_args;
	ko.env = env;
	ko.timeout_ms = k->timeout_ms;
	ko.job = &d.job;
	sbuf_addf(&log, "# configuring %s: base %s, %zu fragment%s, config hash %s\n", k->srcdir, d.base,
		  json_array_size(d.fragments), json_array_size(d.fragments) == 1 ? "" : "s", r->config_hash);
	for (size_t i = 0; i < d.job.nr; i++)
		sbuf_addf(&log, "# the job's config: %s=%s\n", d.job.opt[i].name, d.job.opt[i].value);
	rc = kconfig_apply(NULL, &ov, &ko);
	for (size_t i = 0; i < ov.nr; i++) {
		char line[600];

		if (!strcmp(ov.v[i].new_where, KCONFIG_JOB_WHERE))
			sbuf_addf(&log, "# job: %s\n", kconfig_override_describe(&ov.v[i], line, sizeof(line)));
	}
	if (rc) {
		sbuf_addf(&log, "%s\n", err_msg());
		/*
		 * A tree whose Kconfig drops a fragment's option or fails to
		 * configure is the commit's doing (skipped); a bad fragment is
		 * this agent's (failed: another may do better); one that
		 * refuses the job's own options (ERR_CONFLICT) is the job's,
		 * at every agent and attempt: refused, and the job fails at once.
		 */
		say(r, rc == ERR_CONFLICT ? "refused" : rc == ERR_INVALID ? "failed" : "skipped", "%s", err_msg());
		goto out;
	}
	sbuf_adds(&log, "# configured: every requested option is set\n");

	jobs = k->jobs > 0 ? k->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	j_arg = xasprintf("-j%d", jobs > 0 ? jobs : 1);
	o_arg = xasprintf("O=%s", k->outdir);
	argv[nargv++] = "make";
	argv[nargv++] = j_arg;
	for (size_t i = 0; make_args[i]; i++)
		argv[nargv++] = make_args[i];
	argv[nargv++] = o_arg;
	argv[nargv++] = d.target;
	argv[nargv] = NULL;
	log_cmd(&log, argv);
	ro.argv = argv;
	ro.cwd = k->srcdir;
	ro.env = env;
	ro.timeout_ms = k->timeout_ms;
	ro.max_output = KBUILD_OUTPUT_MAX;
	ro.on_output = count_output;
	ro.arg = &counter;
	ro.cancel = k->cancel;
	if ((rc = run_cmd(&res, &ro))) {
		say(r, "failed", "cannot start make: %s", err_msg());
		goto out;
	}
	r->files = counter.files;
	sbuf_add(&log, res.out, res.out_len);
	if (res.err_len)
		sbuf_addf(&log, "# stderr:\n%s", res.err);
	sbuf_addf(&log, "# make: %s after %.1f s, %ld files compiled\n", run_describe(&res, how, sizeof(how)),
		  (double)res.wall_ms / 1000, counter.files);
	if (!run_ok(&res) && res.cancelled) {
		/* Stopped for the task's cancel: nothing is known of the commit. */
		say(r, "failed", "the build was cancelled after %.1f s (make %s)", (double)res.wall_ms / 1000,
		    d.target);
		run_result_release(&res);
		rc = ERR_FAIL;
		goto out;
	}
	if (!run_ok(&res)) {
		say(r, "skipped", "kernel build failed: %s (make %s)", run_describe(&res, how, sizeof(how)),
		    d.target);
		run_result_release(&res);
		rc = ERR_FAIL;
		goto out;
	}
	run_result_release(&res);

	/* Into the cache: a whole entry appears at once, or none. */
	built = xasprintf("%s/%s", k->outdir, k->kernel_image);
	tmp = xasprintf("%s/.new-%s-%d", k->cachedir, r->key, (int)getpid());
	free(image);
	image = xasprintf("%s/%s", tmp, k->kernel_image);
	{
		char *slash = strrchr(image, '/');
		char *cfg_src = xasprintf("%s/.config", k->outdir), *cfg_dst = xasprintf("%s/config", tmp);

		*slash = '\0';
		rc = remove_tree(tmp);
		if (!rc)
			rc = mkdir_p(image, 0755);
		*slash = '/';
		if (!rc)
			rc = copy_file(built, image);
		if (!rc)
			rc = copy_file(cfg_src, cfg_dst);
		free(cfg_src);
		free(cfg_dst);
	}
	if (!rc && rename(tmp, entry) < 0 && errno != ENOTEMPTY && errno != EEXIST)
		rc = err_set(ERR_FAIL, "rename %s: %s", tmp, strerror(errno));
	remove_tree(tmp);
	if (rc) {
		say(r, access(built, R_OK) ? "skipped" : "failed", "cannot keep the built image %s: %s",
		    built, err_msg());
		goto out;
	}
	cache_trim(&log, k, r->key);
	r->image_dir = entry;
	entry = NULL;
	r->status = "ok";
	r->error[0] = '\0';
out:
	if (locked && k->serialize)
		k->serialize(k->arg, 0);
	r->seconds = (double)(now_ms() - t0) / 1000;
	if (strcmp(r->status, "ok"))
		r->tail = xstrdup(run_tail(log.buf ? log.buf : r->error, KBUILD_TAIL_MAX));
	r->log = sbuf_detach(&log);
	for (size_t i = 0; frags && frags[i]; i++)
		free(frags[i]);
	free(frags);
	free(base);
	free(fragdir);
	free(entry);
	free(image);
	free(tmp);
	free(built);
	free(cc);
	free(o_arg);
	free(j_arg);
	free(basedir);
	kconfig_overrides_release(&ov);
	kconfig_release(&d.job);
	return strcmp(r->status, "ok") ? ERR_FAIL : 0;
}

void kbuild_result_release(struct kbuild_result *r)
{
	free(r->log);
	free(r->tail);
	free(r->image_dir);
	memset(r, 0, sizeof(*r));
}
