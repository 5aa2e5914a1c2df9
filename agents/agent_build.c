/*
 * agent_build: a task's build. The host's measure and build locks, the
 * build command of a plain workload, and a kernel built (or taken from the
 * cache) for one that boots it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

#include "agent_internal.h"
#include "err.h"
#include "jsonx.h"
#include "kbuild.h"
#include "log.h"
#include "run.h"
#include "util.h"
#include "workload.h"
#include "worktree.h"

/* Is a program without a '/' in PATH? One with a '/' may be built yet. */
/*
 * Host locks. The measure lock is shared while building and exclusive
 * while measuring; the build lock is exclusive while building.
 */
static void host_lock(int fd, const char *what, int op, const struct task *t)
{
	int64_t t0 = now_ms();

	if (fd < 0)
		return;
	while (flock(fd, op) < 0) {
		if (errno != EINTR) {
			log_warn("flock %s: %s", what, strerror(errno));
			return;
		}
	}
	if (op != LOCK_UN && now_ms() - t0 >= 1000)
		log_info("task %lld: waited %.1f s for the %s", t->id, (double)(now_ms() - t0) / 1000, what);
}

void agent_measure_lock(struct agent *a, int op, const struct task *t)
{
	host_lock(a->lock_fd, "measure lock", op, t);
}

/* kbuild's serialize callback: the build lock around configuring and building. */
struct build_turn {
	struct agent *a;
	const struct task *t;
};

static void build_turn(void *arg, int on)
{
	struct build_turn *bt = arg;

	if (on)
		agent_set_phase(bt->a, "waiting for the build lock");
	host_lock(bt->a->build_fd, "build lock", on ? LOCK_EX : LOCK_UN, bt->t);
	if (on)
		agent_set_phase(bt->a, "building the kernel");
}

static void kbuild_progress(void *arg, long files)
{
	struct build_turn *bt = arg;

	pthread_mutex_lock(&bt->a->mu);
	bt->a->files = files;
	pthread_mutex_unlock(&bt->a->mu);
}

static void write_build_log(struct agent *a, const struct task *t, const char *const *argv,
			    const struct run_result *res)
{
	struct sbuf sb = SBUF_INIT;
	char *path = xasprintf("%s/task-%lld-build.log", a->logs, t->id);
	char how[64];

	sbuf_addf(&sb, "# task %lld attempt %lld, commit %s of %s\n# $", t->id, t->attempt,
		  t->commit, t->repo_name);
	for (const char *const *p = argv; *p; p++)
		sbuf_addf(&sb, " %s", *p);
	sbuf_addf(&sb, "\n# stdout%s:\n", res->out_truncated ? " (its start was dropped)" : "");
	sbuf_add(&sb, res->out, res->out_len);
	if (res->out_len && res->out[res->out_len - 1] != '\n')
		sbuf_adds(&sb, "\n");
	sbuf_addf(&sb, "# stderr%s:\n", res->err_truncated ? " (its start was dropped)" : "");
	sbuf_add(&sb, res->err, res->err_len);
	if (res->err_len && res->err[res->err_len - 1] != '\n')
		sbuf_adds(&sb, "\n");
	sbuf_addf(&sb, "# %s after %.1f s\n", run_describe(res, how, sizeof(how)),
		  (double)res->wall_ms / 1000);
	if (file_write_atomic(path, sb.buf, sb.len) < 0)
		log_warn("task %lld: cannot keep the build log: %s", t->id, err_msg());
	sbuf_release(&sb);
	free(path);
}

/* Builds the work tree; on failure fills r and returns -1. */
int agent_build(struct result *r, struct agent *a, const struct task *t, const char *dir)
{
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	const char **argv = NULL;
	json_t *b = json_object_get(t->def, "build");
	int64_t t0;
	int rc = 0;

	/* No build: the coordinator sends [] for a workload without one (a TRex run, a plain command). */
	if (!b || json_is_null(b) || (json_is_array(b) && json_array_size(b) == 0))
		return 0;
	if (workload_def_argv(&argv, t->def, "build") < 0) {
		agent_result_set(r, "failed", "%s", err_msg());
		return -1;
	}
	if (!in_path(argv[0])) {
		agent_result_set(r, "failed", "build program '%s' not found in PATH on this agent", argv[0]);
		free(argv);
		return -1;
	}
	o.argv = argv;
	o.cwd = dir;
	o.timeout_ms = (int)t->build_timeout * 1000;
	o.max_output = BUILD_OUTPUT_MAX;
	o.cancel = &a->cancel;
	log_info("task %lld: building", t->id);
	agent_set_phase(a, "waiting for the build lock");
	host_lock(a->build_fd, "build lock", LOCK_EX, t);
	agent_set_phase(a, "building");
	t0 = now_ms();
	if (run_cmd(&res, &o) < 0) {
		host_lock(a->build_fd, "build lock", LOCK_UN, t);
		agent_result_set(r, "failed", "cannot start the build: %s", err_msg());
		free(argv);
		return -1;
	}
	r->build_s = (double)(now_ms() - t0) / 1000;
	host_lock(a->build_fd, "build lock", LOCK_UN, t);
	write_build_log(a, t, argv, &res);
	if (!run_ok(&res)) {
		struct sbuf all = SBUF_INIT;
		char how[64];

		agent_result_set(r, "skipped", "build failed: %s", run_describe(&res, how, sizeof(how)));
		sbuf_add(&all, res.out, res.out_len);
		if (res.out_len && res.out[res.out_len - 1] != '\n' && res.err_len)
			sbuf_adds(&all, "\n");
		sbuf_add(&all, res.err, res.err_len);
		r->log_tail = xstrdup(run_tail(all.buf ? all.buf : "", LOG_TAIL_MAX));
		sbuf_release(&all);
		log_warn("task %lld: %s (log in %s/task-%lld-build.log)", t->id, r->error,
			 a->logs, t->id);
		rc = -1;
	} else {
		log_info("task %lld: built in %.1f s", t->id, r->build_s);
	}
	run_result_release(&res);
	free(argv);
	return rc;
}

/*
 * Builds the kernel of a workload with a "kernel" object (kbuild.h); on
 * success *image_dir is the directory kernel_image is relative to.
 * On failure fills r and returns -1.
 */
int agent_kernel_build(char **image_dir, struct result *r, struct agent *a, const struct task *t,
		       const char *dir)
{
	struct build_turn bt = { a, t };
	struct kbuild k = { 0 };
	struct kbuild_result kr;
	char tree[41], *outdir, *path;

	if (worktree_tree_id(tree, dir, t->commit) < 0) {
		agent_result_set(r, "failed", "cannot read the tree of %.12s: %s", t->commit, err_msg());
		return -1;
	}
	outdir = xasprintf("%s/%s", a->kbuild, t->repo_name);
	k.kernel = json_object_get(t->def, "kernel");
	k.kernel_image = json_string_value(json_object_get(t->def, "kernel_image")) ?: "arch/x86/boot/bzImage";
	k.srcdir = dir;
	k.tree_id = tree;
	k.outdir = outdir;
	k.cachedir = a->kcache;
	k.cache_max = a->conf.kcache_max;
	k.ccache_base = a->conf.workdir;
	k.jobs = a->conf.build_jobs;
	k.timeout_ms = (int)t->build_timeout * 1000;
	k.serialize = build_turn;
	k.progress = kbuild_progress;
	k.arg = &bt;
	k.cancel = &a->cancel;  /* the coordinator's cancel stops make, not after it */
	log_info("task %lld: kernel of tree %.12s", t->id, tree);
	kbuild_run(&kr, &k);
	if (kr.log && !kr.cached) {
		path = xasprintf("%s/task-%lld-build.log", a->logs, t->id);
		if (file_write_atomic(path, kr.log, strlen(kr.log)) < 0)
			log_warn("task %lld: cannot keep the build log: %s", t->id, err_msg());
		free(path);
	}
	free(outdir);
	if (strcmp(kr.status, "ok")) {
		agent_result_set(r, kr.status, "%s", kr.error);
		r->log_tail = kr.tail;
		kr.tail = NULL;
		log_warn("task %lld: %s (log in %s/task-%lld-build.log)", t->id, kr.error, a->logs, t->id);
		kbuild_result_release(&kr);
		return -1;
	}
	if (kr.cached) {
		log_info("task %lld: kernel %s is in the build cache", t->id, kr.key);
	} else {
		r->build_s = kr.seconds;
		log_info("task %lld: kernel %s built in %.1f s (%ld files compiled)", t->id, kr.key,
			 kr.seconds, kr.files);
	}
	*image_dir = kr.image_dir;
	kr.image_dir = NULL;
	kbuild_result_release(&kr);
	return 0;
}
