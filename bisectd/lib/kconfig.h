/*
 * kconfig: the kernel configuration a job asks for. Parses Kconfig
 * fragments and .config files, merges fragments (later wins, overrides
 * listed), checks that a .config made by the kernel's olddefconfig kept
 * every requested option, and names the result for the build cache.
 *
 * olddefconfig drops an option whose dependencies are not met without a
 * word; a kernel built without the option the workload measures would
 * bisect noise, so the agent verifies after every configuration.
 */
#ifndef BISECT_KCONFIG_H
#define BISECT_KCONFIG_H

#include <stddef.h>

/* Bound on a fragment or .config read from disk. */
#define KCONFIG_MAX_FILE (16u << 20)

/* One option as set in a fragment or a .config. */
struct kconfig_opt {
	char *name;   /* "CONFIG_NET_CLS_BPF" */
	char *value;  /* "y", "m", "n" (also for "# CONFIG_X is not set"), "\"str\"" with
		       * its quotes, "123", "0x1f" */
	char *where;  /* "file:line" it was read from */
};

/* A set of options, in the order each name was first set; names are unique. */
struct kconfig {
	struct kconfig_opt *opt;
	size_t nr, alloc;
	size_t *index;    /* open addressing: slot -> opt index + 1, 0 empty */
	size_t index_cap; /* power of two, or 0 */
};
#define KCONFIG_INIT { NULL, 0, 0, NULL, 0 }

/* An option that a later line or fragment set to another value. */
struct kconfig_override {
	char *name;
	char *old_value, *old_where;
	char *new_value, *new_where;
};

struct kconfig_overrides {
	struct kconfig_override *v;
	size_t nr, alloc;
};
#define KCONFIG_OVERRIDES_INIT { NULL, 0, 0 }

void kconfig_init(struct kconfig *kc);
void kconfig_release(struct kconfig *kc);
void kconfig_overrides_release(struct kconfig_overrides *ov);

/* The option called name ("CONFIG_..."), or NULL. Borrowed. */
const struct kconfig_opt *kconfig_get(const struct kconfig *kc, const char *name);

/*
 * Parses text (len bytes, need not be NUL-terminated) into kc, on top of
 * what kc holds: a name set again takes the new value, and when the value
 * differs the change is appended to ov (may be NULL). Accepted lines:
 * "CONFIG_X=y|m|n", "CONFIG_X=\"string\"", "CONFIG_X=123", "CONFIG_X=0x1f",
 * "# CONFIG_X is not set" (value "n"), other lines starting with '#', and
 * blank lines; trailing white space is ignored. Anything else is
 * ERR_INVALID with "fname:line: ..."; kc then holds the lines before it.
 */
int kconfig_parse(struct kconfig *kc, struct kconfig_overrides *ov,
		  const char *text, size_t len, const char *fname);

/* Sets name to value (read from where) in kc; a name set before takes the new value. */
void kconfig_set(struct kconfig *kc, const char *name, const char *value, const char *where);

/* kconfig_parse() of the file at path (at most 16 MiB). */
int kconfig_load(struct kconfig *kc, struct kconfig_overrides *ov, const char *path);

/* Sets every option of src in dst, later wins, differences into ov (may be NULL). */
void kconfig_merge(struct kconfig *dst, struct kconfig_overrides *ov, const struct kconfig *src);

/* "CONFIG_X=n (b.config:3) overrides CONFIG_X=y (a.config:7)" into buf. */
const char *kconfig_override_describe(const struct kconfig_override *o, char *buf, size_t n);

/*
 * kc as a fragment, one line per option in kc's order ("# CONFIG_X is not
 * set" for "n"), after the comment header (may be NULL; each of its lines
 * gets "# "). Caller frees.
 */
char *kconfig_format(const struct kconfig *kc, const char *header);

/*
 * Checks that got (a .config after olddefconfig) has every option of want
 * with the requested value; "n" is met by an option that is absent or not
 * set. Returns 0, or ERR_UNPROCESSABLE with a message naming every option
 * that is not as requested and why; report (may be NULL) then gets the
 * whole explanation, one line per option (caller frees), as the message
 * is bounded. *report is NULL on success.
 */
int kconfig_verify(char **report, const struct kconfig *want, const struct kconfig *got);

#define KCONFIG_HASH_HEX 16

/*
 * A name for "base + these options" that does not depend on their order
 * or where they came from: FNV-1a 64 over base and the options sorted by
 * name, as 16 hex digits. base is "tinyconfig", "defconfig", or what the
 * caller uses to name a base file by its content. The kernel tree is not
 * in it: the build cache keys on the tree id as well.
 */
void kconfig_hash(char out[KCONFIG_HASH_HEX + 1], const struct kconfig *kc, const char *base);

/*
 * The hash kconfig_apply() would give for base and fragments, without a
 * kernel tree: what the build cache looks up before configuring.
 */
int kconfig_config_hash(char hash[KCONFIG_HASH_HEX + 1], const char *base, const char *const *fragments);

/*
 * The fragments merged into want (overrides into ov, may be NULL), and
 * the base's name for kconfig_hash(): a make target as it is, a base file
 * as "file:" and the hash of its content, which is left in *text (the
 * caller's, NULL for a target) so that editing the file misses the cache.
 */
int kconfig_merged(struct kconfig *want, struct kconfig_overrides *ov, char **text, size_t *len,
		   char **base_name, const char *base, const char *const *fragments);

/* --- a job's own options (bisectctl submit --config) --------------------- */

/* Bound on a job's options, and on one "CONFIG_X=value" string. */
#define KCONFIG_JOB_MAX 64
#define KCONFIG_JOB_OPT_MAX 256

/* Where messages say a job's option came from. */
#define KCONFIG_JOB_WHERE "the job's --config"

/*
 * Checks one of a job's options, "CONFIG_X=V": the name CONFIG_ and one
 * or more of [A-Z0-9_], V one of y, m, n (not set), a decimal number, 0x
 * hex, or a "quoted string" (backslash escapes, no control characters).
 * 0, or ERR_INVALID with what is wrong and what is accepted.
 */
int kconfig_job_check(const char *opt);

/*
 * Adds the job's options (strings kconfig_job_check() accepts) to kc, in
 * order, each from KCONFIG_JOB_WHERE; a name given twice is ERR_INVALID.
 */
int kconfig_job_parse(struct kconfig *kc, const char *const *opts, size_t n);

/*
 * The name of a base whose fragments a job's options go on top of, for
 * kconfig_hash(): base_name as it is when job is empty (the hash of a
 * build without options stays what it was), else base_name plus "+job:"
 * and kconfig_hash() of the job's options alone. So two jobs with other
 * options never share a build, even where the merged options agree, and
 * two with the same options (in any order) do. Caller frees.
 */
char *kconfig_job_base_name(const char *base_name, const struct kconfig *job);

/*
 * kconfig_config_hash() with a job's options (may be NULL or empty)
 * merged after the fragments, named with kconfig_job_base_name().
 */
int kconfig_config_hash_job(char hash[KCONFIG_HASH_HEX + 1], const char *base, const char *const *fragments,
			    const struct kconfig *job);

#endif
