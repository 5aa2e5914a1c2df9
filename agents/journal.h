/*
 * journal: the task in hand written to disk before the agent's machine
 * reboots into a built kernel (boot kexec), so that the agent started
 * after the boot carries the same task on: its claim, its lease, the
 * kernel it must find running, the deadline for coming back and the runs
 * measured so far. One JSON file, replaced atomically (a temporary,
 * fsync, rename, fsync of the folder: kexec -e does not sync).
 *
 * The file is <agent workdir>/kexec/journal.json (journal_path()).
 */
#ifndef AGENT_JOURNAL_H
#define AGENT_JOURNAL_H

#include <jansson.h>
#include <stddef.h>

#define JOURNAL_VERSION 1
#define JOURNAL_MAX (1 << 20)        /* bytes of the file */
#define JOURNAL_BUILD_ID_LEN 16      /* hex digits of the built image's id */

/* The states of a journalled task. */
#define JOURNAL_KEXEC   "kexec"      /* written before kexec -e: the built kernel is on its way */
#define JOURNAL_RUNNING "running"    /* the built kernel came up and the agent measures in it */

/* A parsed journal: every field checked; strings and objects are borrowed from root. */
struct journal {
	json_t *root;                /* the whole document; owned (journal_release) */
	long long task, attempt;     /* the claim */
	long long lease;             /* the coordinator's lease in seconds when claimed */
	long long deadline;          /* unix time by which the built kernel must be up */
	const char *state;           /* JOURNAL_KEXEC or JOURNAL_RUNNING */
	const char *commit;          /* 40 hex digits */
	json_t *claim;               /* the claim reply (taskwire.h): an object */
	const char *image;           /* the built kernel image, an absolute path */
	const char *build_id;        /* JOURNAL_BUILD_ID_LEN hex digits, the marker's value */
	const char *release;         /* what uname -r must say in it; "" when the image did not say */
	const char *cmdline;         /* the command line it was given (ends with the marker) */
	const char *srcdir;          /* where the workload's runs start */
	const char *from_boot;       /* the boot id of the kernel that ran kexec -e */
	const char *run_boot;        /* the boot id of the built kernel, "" until it came up */
	const char *good_cmdline;    /* the known-good kernel's command line, to go back with */
	json_t *samples;             /* the runs so far: an array of {value, unit[, error]} */
};

/* <workdir>/kexec/journal.json, a new string (the caller's). */
char *journal_path(const char *agent_workdir);

/*
 * Checks text (len bytes) as a journal into j. ERR_INVALID with err_msg()
 * naming the field. On success j->root is j's (journal_release()); on
 * failure nothing is held.
 */
int journal_parse(struct journal *j, const char *text, size_t len);

/* Reads and parses the journal at path. ERR_NOTFOUND when there is none. */
int journal_load(struct journal *j, const char *path);

/*
 * Writes doc (a journal: it is checked first, ERR_INVALID when it is not
 * one) at path atomically and durably. Creates the folder.
 */
int journal_save(const char *path, json_t *doc);

/* Removes the journal at path, durably. 0 also when there was none. */
int journal_clear(const char *path);

/* Moves a journal that cannot be used aside (path.bad), so it is looked at, not retried. */
int journal_set_aside(const char *path);

void journal_release(struct journal *j);

/* Is s a bisect.build=<id> value: JOURNAL_BUILD_ID_LEN lower-case hex digits? */
int journal_build_id_ok(const char *s);

/*
 * The value of the first bisect.build= word of a kernel command line
 * into out (JOURNAL_BUILD_ID_LEN + 1 bytes); 0 when it has one that is a
 * build id, ERR_NOTFOUND when it has none, ERR_INVALID for a bad value.
 */
int journal_cmdline_marker(char *out, const char *cmdline);

#endif
