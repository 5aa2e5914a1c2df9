/*
 * methods: the boot methods by name, the one table both sides read. The
 * coordinator checks a workload's "boot" and what it may run against it
 * at config load; the agent takes each method's ops from it. One line per
 * method in methods.c (docs/EXTENDING.md).
 */
#ifndef AGENT_BOOT_METHODS_H
#define AGENT_BOOT_METHODS_H

#include <stddef.h>

struct boot_ops;

/*
 * Beside a method's places: it boots the built kernel, so its workloads
 * may build one ('kernel') and take a kernel command line ('append') even
 * though their runs are argv (ssh's device, kexec). WORKLOAD_GUEST boots
 * one too.
 */
#define BOOT_KERNEL 0x100

struct boot_method {
	const char *name;               /* the definition's "boot" */
	int places;                     /* the workloads it runs: WORKLOAD_HOST or WORKLOAD_GUEST; BOOT_KERNEL */
	const struct boot_ops *ops;     /* agents/boot/NAME.c's; NULL where it is not linked (bisectd) */
};

/* The method of that name; NULL when there is none. Borrowed (static). */
const struct boot_method *boot_method_find(const char *name);

/* Whose perf records a profile task's runs (boot_method_profiles()). */
enum { BOOT_PROFILE_AGENT = 1, BOOT_PROFILE_DEVICE = 2 };

/*
 * Whether the method records a profile task's runs under perf (a
 * workload's `profile: true`, docs/REPORTS.md; boot_task.perf_data), and
 * whose perf does it: BOOT_PROFILE_AGENT, the agent's (its runs, or a
 * guest it boots with the agent's perf inside); BOOT_PROFILE_DEVICE, the
 * device's own (ssh). 0 for the others and for a name that is none.
 */
int boot_method_profiles(const char *name);

/* The names of those methods, as a sentence's list ("none, qemu, kexec and ssh"). */
extern const char boot_profile_methods[];

/* All of them, in the table's order; *n gets their number. Borrowed (static). */
const struct boot_method *boot_methods(size_t *n);

#endif
