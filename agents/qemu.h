/*
 * qemu: the building blocks of the "qemu" boot method. Boots a bzImage with
 * an initramfs (initramfs.h) under QEMU, KVM when a probe shows it works and
 * TCG otherwise, and reads the workload's output off the serial console,
 * where the generated /init prints it between markers:
 *
 *   BISECT-READY              the guest is up, the runs start
 *   BISECT-BEGIN <i>          run i (1-based) starts
 *   ...the workload's stdout (and its stderr when it failed)...
 *   BISECT-END <i> rc=<k>     run i ended, the workload exited k
 *   BISECT-DONE               all runs done; init then does `reboot -f`
 *
 * Markers count only at the start of a console line.
 */
#ifndef AGENT_QEMU_H
#define AGENT_QEMU_H

#include <stddef.h>

#include "err.h"

/*
 * The kernel never printed BISECT-READY within the boot deadline: it
 * panicked, hung, found no init, or QEMU refused it. The agent records the
 * commit as skipped, with the console tail (qemu_result.console_tail).
 */
#define QEMU_ERR_NOBOOT ERR_UNPROCESSABLE

#define QEMU_MARK_READY "BISECT-READY"
#define QEMU_MARK_BEGIN "BISECT-BEGIN"
#define QEMU_MARK_END   "BISECT-END"
#define QEMU_MARK_DONE  "BISECT-DONE"
/* A profile task's perf report, after the last run (qemu_script_opts.perf). */
#define QEMU_MARK_PROFILE     "BISECT-PROFILE"
#define QEMU_MARK_PROFILE_END "BISECT-PROFILE-END"

/* Most runs one boot can carry. */
#define QEMU_MAX_RUNS 100
/* The console log kept from one boot; a guest printing more is stopped. */
#define QEMU_MAX_CONSOLE (64u << 20)
/* How much of the console a failure report carries. */
#define QEMU_TAIL_BYTES 4096

enum qemu_accel {
	QEMU_ACCEL_AUTO = 0,    /* KVM when qemu_probe_kvm() says so, else TCG */
	QEMU_ACCEL_KVM,
	QEMU_ACCEL_TCG,
};

/* "kvm", "tcg", "auto". */
const char *qemu_accel_name(int accel);

/*
 * Does KVM run a guest here? Answered once per process (the first call
 * probes, later calls return its answer, whatever their arguments), since
 * the answer is a property of the host.
 *
 * The probe boots `kernel` (any x86-64 bzImage with a serial console:
 * the one about to be tested, or the agent's own) with `-accel kvm -cpu
 * host`, no initramfs, and waits up to deadline_ms for "Linux version" on
 * the serial console. That is the failure the lab showed: with nested KVM
 * broken, QEMU either aborts at once (`-cpu host` on an MSR it cannot set)
 * or never leaves the firmware (other CPU models, a core at 100%). A probe
 * that starts QEMU without running guest code (-S, QMP) sees neither, and
 * one that waits for the firmware alone cannot tell a firmware that printed
 * from a CPU that runs: the kernel's first line proves both. The guest is
 * stopped as soon as that line shows.
 *
 * QEMU is qemu-system-x86_64 from PATH. No /dev/kvm, or one this process
 * cannot open, answers "no" without starting QEMU. *usable is 1 or 0; why (may be NULL) gets a line saying
 * what decided it. Returns 0 once answered (either way), ERR_INVALID for a
 * missing kernel, ERR_FAIL when QEMU could not be started at all.
 */
int qemu_probe_kvm(int *usable, char *why, size_t why_len, const char *kernel, int deadline_ms);

struct qemu_opts {
	const char *qemu;          /* NULL: "qemu-system-x86_64" in PATH */
	const char *kernel;        /* bzImage */
	const char *initrd;        /* from initramfs_build() */
	const char *append;        /* added to "console=ttyS0 panic=-1 quiet"; may be NULL */
	int mem_mb;                /* 0: 512 */
	int cpus;                  /* 0: 2 */
	int accel;                 /* enum qemu_accel */
	int probe_timeout_ms;      /* QEMU_ACCEL_AUTO's probe; 0: 10000 */
	int boot_timeout_ms;       /* start to BISECT-READY; 0: 60000 */
	int run_timeout_ms;        /* BISECT-READY to BISECT-DONE; 0: 600000 */
	int runs;                  /* BEGIN/END pairs expected, 1..QEMU_MAX_RUNS */
	int host_cpu;              /* >= 0: pin QEMU (all its threads) to this host CPU */
	const char *workdir;       /* console.log and the monitor socket go here; NULL: a temp dir, removed after */
	const int *cancel;         /* set by another thread: QEMU is stopped at once (the task was cancelled); may be NULL */
};
#define QEMU_OPTS_INIT { NULL, NULL, NULL, NULL, 0, 0, QEMU_ACCEL_AUTO, 0, 0, 0, 1, -1, NULL, NULL }

struct qemu_run {
	int present;               /* both markers seen */
	int rc;                    /* the workload's exit status from END; -1 when not printed */
	char *text;                /* what came between the markers ('\r' removed); NULL unless present */
};

/* The markers found in a console log (qemu_parse_console()). */
struct qemu_console {
	int ready;                 /* BISECT-READY seen */
	int done;                  /* BISECT-DONE seen after READY */
	int nruns;                 /* length of runs[] */
	int complete;              /* every run present */
	struct qemu_run *runs;     /* runs[i] is run i+1; owned */
};

struct qemu_result {
	int accel;                 /* what was used: QEMU_ACCEL_KVM or QEMU_ACCEL_TCG */
	struct qemu_console con;   /* runs and markers */
	long boot_ms;              /* start to READY, -1 when never */
	long run_ms;               /* READY to DONE (or to the end), -1 when never ready */
	long wall_ms;              /* the whole QEMU process */
	int boot_timed_out;        /* the boot deadline stopped it */
	int run_timed_out;         /* the run deadline stopped it */
	int cancelled;             /* o->cancel stopped it */
	char *console;             /* the whole serial log, '\r' kept; owned */
	const char *console_tail;  /* its last QEMU_TAIL_BYTES, borrowed from console */
	char *qemu_stderr;         /* what QEMU itself printed; owned */
	char why[512];             /* one line on how it ended: "" on a clean run */
};

/*
 * Boots o->kernel with o->initrd and waits for the runs. The command line
 * is "console=ttyS0 panic=-1 quiet" then o->append; QEMU runs with
 * -nodefaults -display none -no-reboot, the serial console into a file
 * and a monitor socket through which a deadline stops the guest (the
 * whole process group is killed as a last resort).
 *
 * Returns
 *   0               READY was seen. out->con says which runs are present;
 *                   a missing one (the run deadline passed, the guest
 *                   died mid-run) is a failed run, out->why says how it
 *                   ended.
 *   QEMU_ERR_NOBOOT READY never came: out->why and err_msg() say why
 *                   (deadline, QEMU's exit), out->console_tail shows it.
 *   ERR_INVALID     bad options (missing kernel or initrd file, runs out
 *                   of range).
 *   ERR_FAIL        QEMU could not be run (not installed, ...), or
 *                   o->cancel stopped it (out->cancelled).
 * out is always initialised; release it with qemu_result_release().
 */
int qemu_boot_run(struct qemu_result *out, const struct qemu_opts *o);
void qemu_result_release(struct qemu_result *r);

/*
 * Parses a serial console log of len bytes (need not be NUL-terminated;
 * '\r\n' or '\n' line ends, garbage and truncation allowed) expecting
 * nruns runs (1..QEMU_MAX_RUNS). A BEGIN without its END (a second BEGIN,
 * another run's END, or the log's end came first) leaves that run absent;
 * a run number out of range, or one seen complete already, is ignored, as
 * are markers before READY; a marker line whose number is not 1-9 digits
 * is no marker but text. Returns 0, or ERR_INVALID for a bad nruns.
 */
int qemu_parse_console(struct qemu_console *out, const char *log, size_t len, int nruns);
/*
 * Whether the console line (len bytes) starts with the marker mark
 * followed by its end or a space: what follows it, or NULL.
 */
const char *qemu_marker(const char *line, size_t len, const char *mark);
void qemu_console_release(struct qemu_console *c);

/* --- the /init script ----------------------------------------------------- */

struct qemu_script_opts {
	int runs;                  /* 1..QEMU_MAX_RUNS */
	const char *run_once;      /* sh text defining run_once() (a workload's script, workload.h) */
	int dmesg_level;           /* > 0: `dmesg -n` this before READY, to keep printk off the runs' text */
	const char *perf;          /* a profile task: the guest path of perf; NULL: none */
};
#define QEMU_SCRIPT_OPTS_INIT { 1, NULL, 0, NULL }

/*
 * The /init text (a busybox sh script) for o: mounts proc, sys and
 * devtmpfs, brings lo up, defines o->run_once, prints READY, then for each
 * run prints BEGIN i, calls run_once with its output to a file, prints that output (and,
 * when the workload failed, its stderr) and END i rc=<status>, then DONE,
 * then `reboot -f` (with -no-reboot QEMU exits; `poweroff -f` would not
 * without ACPI). The workload's scripts say a tool missing from the
 * guest in each run's text as "<path> not found in the guest: ...", with
 * rc=127. *out is the caller's.
 */
int qemu_init_script(char **out, const struct qemu_script_opts *o);

/*
 * With o->perf, the runs are recorded whole-guest (perf record -a -g -e
 * cpu-clock: nothing else runs there, and a network stack's work is in
 * softirqs as much as in the workload's process), from before the first
 * BEGIN to after the last END; then, before DONE, the report
 * (perfreport_report_argv()'s, through a file: not a terminal, so no
 * colours) between QEMU_MARK_PROFILE and "QEMU_MARK_PROFILE_END rc=<k>",
 * and perf's messages after it when k != 0.
 * qemu_console_profile: that text from a console log, '\r' removed, into
 * *out (the caller's), *rc perf report's status; ERR_NOTFOUND when the log
 * has no complete report.
 */
int qemu_console_profile(char **out, int *rc, const char *log);

#endif
