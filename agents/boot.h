/*
 * boot: how an agent gets a built commit running before the workload.
 * "none" runs the build output on the agent itself; "qemu" boots the
 * built kernel image in a guest that runs every run of the task (kexec and
 * ssh come later). Chosen by name from the task's workload definition.
 */
#ifndef AGENT_BOOT_H
#define AGENT_BOOT_H

#include <jansson.h>

struct boot_ops {
	const char *name;
	/* Gets the built tree at srcdir ready to run; 0 or a code with a message. */
	int (*boot)(json_t *def, const char *srcdir);
	/* Undoes boot(); may be NULL. */
	void (*shutdown)(json_t *def, const char *srcdir);
};

/* "none" only: "qemu" does not fit boot()/run()/shutdown(), see boot_qemu_task(). */
const struct boot_ops *boot_find(const char *name);

#include "workload.h"

/*
 * The qemu boot method: one guest boot carries all runs of a task, so it
 * is one call. For a workload definition of type iperf3 or pktgen (keys
 * as bisectd/API.md and conf.h describe them), builds an initramfs
 * (busybox, iperf3 or tc, the /init of qemu_init_script()) in workdir,
 * boots srcdir/<kernel_image> with it (KVM when the probe, done once per
 * process, says it works; TCG otherwise) and turns each run's console text
 * into a sample with netparse.
 */
struct boot_qemu_task {
	json_t *def;               /* the task's workload definition; borrowed */
	const char *srcdir;        /* the built work tree */
	const char *workdir;       /* scratch for the initramfs and console.log; created */
	int runs;                  /* 1..QEMU_MAX_RUNS */
	int host_cpu;              /* pin QEMU to this CPU; -1: no pinning */
};

struct boot_qemu_result {
	const char *status;        /* "ok", "skipped" (no image, no boot) or "failed" (the agent lacks a tool, bad definition) */
	char error[1024];          /* why, when not ok */
	char *log_tail;            /* the console's tail when the guest did not boot; owned, may be NULL */
	char *console;             /* the whole serial console; owned, may be NULL */
	struct sample *samples;    /* runs of them when ok, failed runs included; owned (and their extra) */
	int nsamples;
	double run_s;              /* wall time of the QEMU process */
	const char *accel;         /* "kvm" or "tcg" once QEMU ran */
};

/* Always fills out (release it); returns 0 when out->status is "ok", ERR_FAIL otherwise. */
int boot_qemu_task(struct boot_qemu_result *out, const struct boot_qemu_task *t);
void boot_qemu_result_release(struct boot_qemu_result *r);

#endif
