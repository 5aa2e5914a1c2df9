/*
 * boot: how an agent gets a built commit running and runs a workload on
 * it, as a table chosen by the definition's "boot" (iperf3's struct
 * protocol habit). The shape is "boot once, run N times, stop": start()
 * brings the build up (nothing for none, a QEMU guest for qemu; a
 * kexec or a device under test later), run() gives one run's sample,
 * stop() undoes start(). Each method is one file in this folder and one
 * line in methods.c's table, which also says what workloads it runs;
 * see docs/EXTENDING.md.
 *
 * The agent holds the host's measure lock exclusively around start() and
 * around each run(), so a method may measure in either.
 */
#ifndef AGENT_BOOT_H
#define AGENT_BOOT_H

#include <jansson.h>

#include "workload.h"

struct boot_task {
	json_t *def;                    /* the task's workload definition, checked; borrowed */
	const struct workload_ops *wl;  /* its kind */
	const char *srcdir;             /* the built tree (a kernel build: its output directory) */
	const char *workdir;            /* scratch of the method; created as needed */
	int runs;                       /* how many run() calls follow start() */
	int cpu;                        /* pin the runs (or the guest) to this host CPU; -1: none */
	const char *perf_data;          /* a profile task: record each run under perf into this file
					 * on the agent, or the method's own on the device (methods.c's
					 * boot_method_profiles()); NULL: measure only */
	json_t *claim;                  /* the claim reply (taskwire.h); borrowed: what a method whose
					 * task outlives the process (kexec) journals */
	const int *cancel;              /* set by another thread when the task is cancelled: the boot
					 * or run in hand stops as at its deadline; may be NULL */
};

/* What start() says besides its code. */
struct boot_result {
	const char *status;             /* "ok", "skipped" (the commit's fault: no image, no boot) or
					 * "failed" (this agent's: a tool missing, a bad definition) */
	char error[1024];               /* why, when not ok */
	char *log_tail;                 /* the console's tail when it did not boot; owned, may be NULL */
	char *console;                  /* the whole console, kept by the agent; owned, may be NULL */
	double run_s;                   /* seconds of measuring start() did itself (a guest's runs) */
	const char *accel;              /* how it ran ("kvm", "tcg"), for the log; may be NULL */
	char *profile;                  /* a profile task's perf report when the method made it
					 * (a guest's, after its runs); owned, may be NULL */
	char profile_error[512];        /* why there is none, when the method should have made one */
};

struct boot_ops {
	const char *name;               /* the definition's "boot" */
	const char *what;               /* the agent's phase during start() ("booting and measuring in QEMU"); may be NULL */

	/*
	 * Before checkout and build: does this agent have what the method
	 * and the workload need? 0, or a code with err_msg() (the task fails).
	 * May be NULL.
	 */
	int (*prepare)(const struct boot_task *t);
	/*
	 * Boot once. Fills r (always: release it with boot_result_release());
	 * returns 0 with r->status "ok" and *session set, or ERR_FAIL.
	 */
	int (*start)(void **session, struct boot_result *r, const struct boot_task *t);
	/* Run i (1..t->runs) into s; 0 when a sample (possibly a failed one) was produced. */
	int (*run)(struct run_sample *s, void *session, const struct boot_task *t, int i);
	/*
	 * A profile task's report, after its runs, made where they ran (a
	 * device's own perf): `perf report` of t->perf_data's runs as
	 * perfreport_report_argv() makes it, into *report (owned). 0, or a
	 * code with err_msg(). May be NULL: the report came with start()
	 * (boot_result.profile), or the agent makes it of t->perf_data here.
	 */
	int (*report)(char **report, void *session, const struct boot_task *t);
	/* Undoes start() and frees session; session may be NULL. */
	void (*stop)(void *session, const struct boot_task *t);
};

/* The ops of the method of that name; NULL when there is none. Borrowed (static). */
const struct boot_ops *boot_find(const char *name);

void boot_result_release(struct boot_result *r);

struct run_result;

/*
 * The argv one run of t's workload runs on the agent's machine (none,
 * kexec): the workload's, under perf record into t->perf_data for a
 * profile task (the last run's profile is the one kept). 0 with *argv
 * owned, or the workload's error code.
 */
int boot_workload_argv(const char ***argv, const struct boot_task *t);

/* One argv run's result (run.h) parsed by t's workload into s, as none, ssh and kexec run them. */
void boot_parse_output(struct run_sample *s, const struct boot_task *t, const struct run_result *res);

/*
 * After a profile task's runs (t->perf_data set): the report the method
 * made, into *text (owned): the one start() brought (r->profile), or its
 * report op's. 0; a code with err_msg() when the method failed to make
 * it (r->profile_error, or its report op's); 1 when the method makes
 * none (the caller reports t->perf_data where it is).
 */
int boot_profile_text(char **text, const struct boot_ops *ops, void *session, const struct boot_task *t,
		      const struct boot_result *r);

/* r's status and why, as printf; returns ERR_FAIL, what start() returns then. */
int boot_fail(struct boot_result *r, const char *status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
