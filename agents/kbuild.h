/*
 * kbuild: an agent's kernel build. For a task whose workload has a
 * "kernel" object (base, base_config, fragments with their text, target,
 * make_args, as bisectd sends them), it writes the fragments, configures
 * the checked-out tree into a build directory that is kept from commit to
 * commit (make O=...), checks that every requested option survived
 * olddefconfig (kconfig_apply()), builds the target with ccache when it
 * is installed, and keeps the image in a cache keyed by the commit's tree
 * id and the build's hash: a commit already built is never built again
 * while its entry is kept (cache_max bounds the cache, least recently
 * used out first).
 *
 * A tree that does not configure or build is the commit's doing, so it is
 * "skipped"; an agent without the tools to build a kernel is "failed", so
 * that the task goes to another agent.
 */
#ifndef AGENT_KBUILD_H
#define AGENT_KBUILD_H

#include <jansson.h>

struct kbuild {
	json_t *kernel;            /* the workload's "kernel" object; borrowed */
	const char *kernel_image;  /* the image, relative to the build output */
	const char *srcdir;        /* the checked-out tree */
	const char *tree_id;       /* its tree id, 40 hex digits */
	const char *outdir;        /* make's O=, kept from build to build */
	const char *cachedir;      /* cache entries: cachedir/KEY/<kernel_image> */
	long long cache_max;       /* bytes the cache may hold: after a build, the entries used
				    * longest ago are removed until it fits; <= 0: no limit */
	const char *ccache_base;   /* CCACHE_BASEDIR, so that agents of one host share hits; may be NULL */
	int jobs;                  /* make -j; <= 0: the CPUs online */
	int timeout_ms;            /* per command (configuring, building); <= 0: none */
	const char *const *tools;  /* programs a build needs, NULL-terminated;
				    * NULL: make gcc flex bison bc perl */
	/*
	 * Called with 1 before configuring and building, 0 after: a host
	 * lock, so that agents sharing a machine build in turn. Not around
	 * a cache hit. May be NULL.
	 */
	void (*serialize)(void *arg, int on);
	/* Called as the build goes: files compiled so far. May be NULL. */
	void (*progress)(void *arg, long files);
	void *arg;
	/*
	 * When set (atomically) while make runs, make's process group is
	 * stopped as at its deadline and the build fails as cancelled,
	 * nothing cached. May be NULL.
	 */
	const int *cancel;
};

#define KBUILD_KEY_MAX 96

struct kbuild_result {
	const char *status;        /* "ok", "skipped", "failed" or "refused" (the job's own options) */
	char error[1024];          /* why, when not ok */
	char *log;                 /* the commands and what they printed; owned, may be NULL */
	char *tail;                /* the log's tail when not ok; owned, may be NULL */
	char key[KBUILD_KEY_MAX];  /* TREE-CONFIGHASH-BUILDHASH */
	char config_hash[17];      /* kconfig_hash() of base and fragments */
	char *image_dir;           /* kernel_image is relative to it when ok; owned */
	int cached;                /* 1 when the image came from the cache */
	long files;                /* files compiled by this build */
	double seconds;            /* configuring and building, without waiting for serialize() */
};

/* Always fills r (release it); returns 0 when r->status is "ok", ERR_FAIL otherwise. */
int kbuild_run(struct kbuild_result *r, const struct kbuild *k);
void kbuild_result_release(struct kbuild_result *r);

#endif
