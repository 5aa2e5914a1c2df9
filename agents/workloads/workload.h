/*
 * workload: the kinds of measurement a workload definition can ask for,
 * as a table chosen by the definition's "type" (iperf3's struct protocol
 * habit). Each kind is one file in this folder and one line in
 * workload_table.c's table; see docs/EXTENDING.md.
 *
 * The files are pure (a definition's check, the text of a guest script or
 * the argv of a host run, the parse of a run's output) and live in the
 * library: the coordinator validates a definition through the same table
 * when it loads its config, the agent again when a task arrives, and the
 * boot methods (agents/boot/) run what they produce.
 *
 * A definition is a JSON object: the keys common to all workloads (name,
 * type, boot, build, kernel, unit, direction, timeouts, the boot's own
 * settings) and the keys its kind lists in ops->keys.
 */
#ifndef AGENT_WORKLOAD_H
#define AGENT_WORKLOAD_H

#include <jansson.h>
#include <stddef.h>

struct sbuf;

struct run_sample {
	double value;           /* <= 0: the run failed */
	char unit[32];
	char error[256];        /* why it failed, "" when it did not */
	json_t *extra;          /* adapter-specific fields, may be NULL; owned */
};

/* What one run left behind, as the boot method that ran it saw it. */
struct run_output {
	const char *out;        /* its stdout (a guest: stdout, then stderr when it failed) */
	size_t out_len;
	const char *err;        /* its stderr when kept apart; may be NULL */
	size_t err_len;
	int ok;                 /* it ran to the end and exited 0 */
	int rc;                 /* its exit status; -1 when unknown or killed */
	const char *how;        /* "exit 3", "killed by signal 9", "timed out after 300 s"; "" when ok */
};

/* Where a kind's runs go, as a bit set; a boot method gives one of them. */
#define WORKLOAD_HOST  1    /* an argv run on the agent itself (boot none) */
#define WORKLOAD_GUEST 2    /* a script run inside the booted kernel (boot qemu) */

/*
 * WKEY_LIST: a string ("0,1") or an array of strings and integers
 * ([0, 1]); the kind's check() reads and may rewrite it.
 */
enum workload_key_kind { WKEY_STR = 1, WKEY_INT, WKEY_BOOL, WKEY_ARGV, WKEY_LIST };

/* A key of a kind's own, with its JSON (and YAML) type; min and max bound a WKEY_INT. */
struct workload_key {
	const char *name;
	enum workload_key_kind kind;
	long long min, max;
};

/* Where a check found fault: the key, and the item of a WKEY_ARGV (-1: the key itself). */
struct workload_bad {
	const char *key;        /* borrowed, static */
	long item;
	int missing;            /* the key is required and absent */
};

struct workload_ops {
	const char *name;                   /* the definition's "type" */
	int places;                         /* WORKLOAD_HOST and/or WORKLOAD_GUEST */
	const struct workload_key *keys;    /* its own keys, ended by { NULL } */
	const char *about;                  /* a line for messages: what it measures */

	/*
	 * Checks def's own keys (their types are already checked) and fills
	 * in their defaults and the common "unit". Idempotent. On failure:
	 * ERR_INVALID, *bad says where, err_msg() is the rest of a sentence
	 * starting with the key's name ("must be one of ...", or ": iperf3
	 * option ..."; for a missing key, what it is for).
	 */
	int (*check)(json_t *def, struct workload_bad *bad);

	/* WORKLOAD_HOST: the argv of one run, strings borrowed from def; *argv is the caller's. */
	int (*argv)(const char ***argv, json_t *def);

	/*
	 * WORKLOAD_GUEST: the programs the guest needs besides busybox, as
	 * names looked up in the agent's PATH, up to n of them; returns how
	 * many (0 or more) or a negative code.
	 */
	int (*tools)(const char **names, size_t n, json_t *def);
	/*
	 * WORKLOAD_GUEST: appends to sb a busybox sh function run_once() that
	 * does one run, its output on stdout; paths[i] is the guest path of
	 * tools()'s names[i].
	 */
	int (*script)(struct sbuf *sb, json_t *def, const char *const *paths);

	/*
	 * One run's output into s (overwritten): the metric in def's unit, or
	 * a failed sample (value 0) saying why. Always produces a sample.
	 */
	void (*parse)(struct run_sample *s, json_t *def, const struct run_output *o);

	/*
	 * WORKLOAD_GUEST, optional (NULL: none): data files the guest needs,
	 * as absolute host paths it gets at the same path (xdp: libxdp's BPF
	 * objects), up to n; returns how many or a negative code. A file
	 * missing on the agent fails the task.
	 */
	int (*files)(const char **paths, size_t n, json_t *def);
	/*
	 * WORKLOAD_GUEST, optional (NULL: none): kernel modules the guest
	 * loads at boot when its kernel has them as modules ("veth"), up to
	 * n; returns how many or a negative code. The qemu boot method takes
	 * them from /lib/modules/RELEASE on the agent when the booted image's
	 * release is installed there (Debian's kernel); a kernel without
	 * that directory must have them built in.
	 */
	int (*modules)(const char **names, size_t n, json_t *def);
};

/* The kind of that name; NULL when there is none. Borrowed (static). */
const struct workload_ops *workload_find(const char *name);
/* The table, for lists in messages: *n gets its length. */
const struct workload_ops *const *workload_all(size_t *n);

/*
 * Checks a definition of kind ops: the types and ranges of ops->keys, then
 * ops->check(). Refuses a key of another kind's that ops does not own.
 * As ops->check for *bad and err_msg().
 */
int workload_check(struct workload_bad *bad, const struct workload_ops *ops, json_t *def);

/* The same with one message ("'metric' must be ...") for the agent's reports. */
int workload_check_msg(const struct workload_ops *ops, json_t *def);

/*
 * Parses the first match of the extended regex pattern's first group in
 * text as a number. ERR_NOTFOUND when it does not match, ERR_INVALID when
 * the group is not a number or the pattern does not compile.
 */
int workload_metric_from_text(double *out, const char *text, const char *pattern);

/* --- helpers for the kinds' files ----------------------------------------- */

/*
 * The argv of def's key (an array of 1..256 strings of at most 4096
 * bytes, the first non-empty) as a NULL-terminated array of strings
 * borrowed from def; *out is the caller's.
 */
int workload_def_argv(const char ***out, json_t *def, const char *key);
/* def's string key, or dflt when absent or empty. Borrowed. */
const char *workload_def_str(json_t *def, const char *key, const char *dflt);
/* s failed: value 0 and the message. */
void workload_sample_fail(struct run_sample *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A failed run's error gets " (exit N)" when the run's program exited N > 0. */
void workload_note_exit(struct run_sample *s, const struct run_output *o);

/* s single-quoted for sh, appended to sb. */
void workload_sh_quote(struct sbuf *sb, const char *s);
/* The NULL-terminated argv as one sh command line, each word quoted, spaces between, appended to sb. */
void workload_sh_quote_argv(struct sbuf *sb, const char *const *argv);
/* "if [ ! -x PATH ]; then echo ...not found in the guest...; return 127; fi" */
void workload_sh_need_tool(struct sbuf *sb, const char *path, const char *what);
/* An absolute guest path of sane length without a newline. */
int workload_guest_path_ok(const char *p);
/* s is 1..maxlen bytes, all from alphabet. */
int workload_only(const char *s, const char *alphabet, size_t maxlen);

#endif
