/*
 * kconfig_apply: a kernel tree configured with a job's fragments and
 * verified (the agent's side of kconfig.h: it runs make).
 */
#ifndef BISECT_KCONFIG_APPLY_H
#define BISECT_KCONFIG_APPLY_H

#include "kconfig.h"

struct kconfig_apply_opts {
	const char *srcdir;      /* the kernel tree */
	const char *outdir;      /* make's O=; created when missing */
	const char *base;        /* "tinyconfig", "defconfig", "allnoconfig" (a make
				  * target), or the path of a .config to start from */
	const char *const *fragments; /* paths, NULL-terminated, merged in order */
	const char *const *make_args; /* extra make arguments ("ARCH=x86_64",
				       * "CC=ccache gcc"); NULL-terminated, may be NULL */
	const char *const *env;  /* extra "K=V" for every command; may be NULL */
	const char *make;        /* NULL: "make" */
	int timeout_ms;          /* per command; <= 0: none */
	const struct kconfig *job; /* the job's own options (kconfig_job_parse()), merged after
				    * the fragments; NULL or empty: none */
};
#define KCONFIG_APPLY_OPTS_INIT { NULL, NULL, "tinyconfig", NULL, NULL, NULL, NULL, 600000, NULL }

/*
 * Configures the tree at srcdir into outdir: merges the fragments
 * (overrides into ov, may be NULL), writes the result to
 * outdir/bisectd-fragment.config, makes the base ("make O=outdir
 * tinyconfig", or copies a base file to outdir/.config), runs
 * scripts/kconfig/merge_config.sh -m and "make olddefconfig", then
 * kconfig_verify()s outdir/.config against the merged fragment. hash (may
 * be NULL) gets kconfig_hash() of the merged fragment and base (a base
 * file is named "file:" and the hash of its content). A command that
 * fails is ERR_FAIL (ERR_TIMEOUT past the deadline) with the tail of its
 * output; a parse error is ERR_INVALID; verification ERR_UNPROCESSABLE.
 */
int kconfig_apply(char hash[KCONFIG_HASH_HEX + 1], struct kconfig_overrides *ov,
		  const struct kconfig_apply_opts *opts);

#endif
